! A marked daxpy in Fortran, with unmarked work around it.
!
!   usage: regions_f N REPS K A      (N, K <= 4096; A: the multiplier, an integer)
!   build: gfortran -O2 crates/markers/fortran/flopscope.f90
!          crates/markers/fortran/flopscope_fortran.c regions_kernels.f90
!          regions.f90     (modules before the files that use them)
!
! The multiplier is read as an integer and converted (a conversion, not a
! FLOP), so gfortran knows no value to fold. The kernels live in
! regions_kernels.f90, another compilation unit, and take the arrays as
! arguments: each call does its whole work between the markers around it.
! Set-up converts integers; the result is kept alive by an integer XOR of
! its bit patterns.
!
!   region "daxpy": entries = REPS, flop = 2 N REPS (add = mul = N REPS):
!                   y(i) = y(i) + a x(i), i = 1..N, once per entry
!   unmarked: z(i) = a z(i), i = 1..K, before and after: 2 K (mul)
!   total = 2 N REPS + 2 K

program regions_f
  use flopscope
  use regions_kernels
  implicit none
  integer, parameter :: nmax = 4096
  real(8), save :: x(nmax), y(nmax), z(nmax)
  real(8) :: a
  integer :: n, reps, k, ia, i, r
  integer(8) :: check
  character(len=32) :: arg

  call get_command_argument(1, arg)
  read (arg, *) n
  call get_command_argument(2, arg)
  read (arg, *) reps
  call get_command_argument(3, arg)
  read (arg, *) k
  call get_command_argument(4, arg)
  read (arg, *) ia
  if (n < 1 .or. n > nmax .or. k < 1 .or. k > nmax .or. reps < 1) stop 64
  a = real(ia, 8)
  do i = 1, nmax
    x(i) = real(mod(i, 7) + 1, 8)
    y(i) = real(mod(i, 5) + 1, 8)
    z(i) = real(mod(i, 3) + 1, 8)
  end do

  call scale(k, a, z)
  do r = 1, reps
    call flopscope_region_begin("daxpy")
    call daxpy(n, a, x, y)
    call flopscope_region_end("daxpy")
  end do
  call scale(k, a, z)

  check = 0
  do i = 1, nmax
    check = ieor(check, ieor(transfer(y(i), check), transfer(z(i), check)))
  end do
  if (check == 42) write (0, '(i0)') check
end program regions_f
