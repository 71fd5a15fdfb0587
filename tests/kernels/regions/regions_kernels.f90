! The kernels of regions.f90, in their own file: compiled separately (no
! LTO), they cannot be inlined, so each call does its whole work between the
! markers around it.
module regions_kernels
  implicit none
contains
  subroutine daxpy(n, a, x, y)
    integer, intent(in) :: n
    real(8), intent(in) :: a, x(*)
    real(8), intent(inout) :: y(*)
    integer :: i
    do i = 1, n
      y(i) = y(i) + a * x(i)
    end do
  end subroutine daxpy

  subroutine scale(k, a, z)
    integer, intent(in) :: k
    real(8), intent(in) :: a
    real(8), intent(inout) :: z(*)
    integer :: i
    do i = 1, k
      z(i) = a * z(i)
    end do
  end subroutine scale
end module regions_kernels
