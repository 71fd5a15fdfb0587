! daxpy in Fortran: y(i) = y(i) + a * x(i) for i = 1..n, repeated reps times.
!
!   usage: daxpy N REPS          (N <= nmax)
!   build: gfortran -O2 [-msse2 | -mavx | -mavx2 -mfma]
!
! Each element update is one multiply and one add (one FMA with -mfma, which
! gfortran contracts): 2 FLOP. y accumulates across reps, so no rep can be
! skipped. The setup converts integers (real(i, 8): a conversion, not a FLOP);
! the arguments are read as integers; the result is kept alive by an integer
! XOR of its bit patterns (transfer), not by printing a real.
!
!   flop.total = flop.fp64 = 2 n reps
!   flop_by_op: add = mul = n reps, or fma = 2 n reps with -mfma
!
! Bytes: per element per rep, load x(i) and y(i), store y(i). x and y are
! fixed-size arrays set up over all of nmax, so between runs at n1 and n2
! with the same number of digits:
!
!   d bytes.read = 16 (n2 - n1) reps,  d bytes.written = 8 (n2 - n1) reps
program daxpy
  implicit none
  integer, parameter :: nmax = 4096
  real(8), save :: x(nmax), y(nmax)
  real(8) :: a
  integer :: n, reps, i, r
  integer(8) :: check
  character(len=32) :: arg

  call get_command_argument(1, arg)
  read (arg, *) n
  call get_command_argument(2, arg)
  read (arg, *) reps
  if (n > nmax) stop 64

  do i = 1, nmax
    x(i) = real(mod(i, 7) + 1, 8)
    y(i) = real(mod(i, 5) + 1, 8)
  end do
  a = real(3, 8)

  do r = 1, reps
    do i = 1, n
      y(i) = y(i) + a * x(i)
    end do
  end do

  check = 0
  do i = 1, nmax
    check = ieor(check, transfer(y(i), check))
  end do
  if (check == 42) write (0, '(i0)') check
end program daxpy
