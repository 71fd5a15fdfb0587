! LIKWID's marker API from Fortran, as LIKWID's Fortran module calls it
! (likwid_markerStartRegion("name") becomes likwid_markerstartregion_, the
! name's length passed after it), around tests/kernels/regions'
! separately compiled daxpy.
!
!   usage: likwid_api_f N REPS      (N <= 4096)
!   build: gfortran -O2 tests/kernels/regions/regions_kernels.f90
!          likwid_api.f90 -L DIR -Wl,-rpath,DIR -llikwid
!
! Closed form (fp64; no FMA, as built without -mfma):
!   region "daxpy": REPS entries, each y = y + a x over N elements:
!                   add = mul = N REPS
!   unmarked: 0 (the setup converts integers; the result is kept alive by
!   an integer XOR of its bit patterns)
program likwid_api_f
  use regions_kernels, only: daxpy
  implicit none
  integer, parameter :: nmax = 4096
  real(8), save :: x(nmax), y(nmax)
  real(8) :: a
  integer :: n, reps, r, i
  integer(8) :: check
  character(len=32) :: arg
  call get_command_argument(1, arg)
  read (arg, *) n
  call get_command_argument(2, arg)
  read (arg, *) reps
  if (n < 1 .or. n > nmax .or. reps < 1) stop 64
  do i = 1, nmax
    x(i) = real(mod(i, 7) + 1, 8)
    y(i) = real(mod(i, 5) + 1, 8)
  end do
  a = real(3, 8)
  call likwid_markerInit()
  call likwid_markerRegisterRegion("daxpy")
  do r = 1, reps
    ! Padded with blanks, as Fortran strings often are: the name is trimmed.
    call likwid_markerStartRegion("daxpy   ")
    call daxpy(n, a, x, y)
    call likwid_markerStopRegion("daxpy")
  end do
  call likwid_markerClose()
  check = 0
  do i = 1, nmax
    check = ieor(check, transfer(y(i), check))
  end do
  if (check == 42) write (0, '(i0)') check
end program likwid_api_f
