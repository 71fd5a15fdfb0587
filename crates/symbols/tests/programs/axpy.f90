module mymod
  implicit none
contains
  subroutine axpy(n, a, x, y) ! LINE:axpy_decl
    integer, intent(in) :: n
    double precision, intent(in) :: a, x(n)
    double precision, intent(inout) :: y(n)
    integer :: i
    do i = 1, n
      y(i) = y(i) + a * x(i) ! LINE:axpy_body
    end do
  end subroutine axpy
end module mymod

program main
  use mymod
  implicit none
  double precision :: x(1000), y(1000)
  x = 1
  y = 2
  call axpy(size(x), 3d0, x, y)
  if (y(1) /= 5d0) stop 1
end program main
