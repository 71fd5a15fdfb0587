! gfortran module procedures for attribution.
!
!   usage: modproc N REPS          build: -O2 -g
!
! Per repetition: kernels::daxpy, 2N FLOP (y = y + a * x); kernels::dscal,
! N FLOP (x = s * x).
module kernels
  implicit none
contains
  subroutine daxpy(n, a, x, y)
    integer, intent(in) :: n
    double precision, intent(in) :: a, x(n)
    double precision, intent(inout) :: y(n)
    integer :: i
    do i = 1, n
      y(i) = y(i) + a * x(i)
    end do
  end subroutine daxpy

  subroutine dscal(n, s, x)
    integer, intent(in) :: n
    double precision, intent(in) :: s
    double precision, intent(inout) :: x(n)
    integer :: i
    do i = 1, n
      x(i) = s * x(i)
    end do
  end subroutine dscal
end module kernels

program modproc
  use kernels
  implicit none
  integer :: n, reps, r
  character(len=32) :: arg
  double precision, allocatable :: x(:), y(:)
  call get_command_argument(1, arg)
  read (arg, *) n
  call get_command_argument(2, arg)
  read (arg, *) reps
  allocate (x(n), y(n))
  x = 0.5d0
  y = 0.0d0
  do r = 1, reps
    call daxpy(n, 1.5d0, x, y)
    call dscal(n, 0.75d0, x)
  end do
  if (y(1) < 0.0d0) print *, y(1)
end program modproc
