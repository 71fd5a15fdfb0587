! flopscope region markers for Fortran (gfortran, iso_c_binding).
!
!   use flopscope
!   call flopscope_region_begin("daxpy")
!   y = a * x + y
!   call flopscope_region_end("daxpy")
!
! Build: gfortran flopscope.f90 prog.f90 flopscope_fortran.c   (the module first)
module flopscope
  use iso_c_binding, only: c_char, c_null_char
  implicit none
  private
  public :: flopscope_region_begin, flopscope_region_end

  interface
    subroutine begin_c(name) bind(C, name="flopscope_region_begin_f")
      import :: c_char
      character(kind=c_char), dimension(*), intent(in) :: name
    end subroutine begin_c
    subroutine end_c(name) bind(C, name="flopscope_region_end_f")
      import :: c_char
      character(kind=c_char), dimension(*), intent(in) :: name
    end subroutine end_c
  end interface

contains

  subroutine flopscope_region_begin(name)
    character(len=*), intent(in) :: name
    call begin_c(trim(name) // c_null_char)
  end subroutine flopscope_region_begin

  subroutine flopscope_region_end(name)
    character(len=*), intent(in) :: name
    call end_c(trim(name) // c_null_char)
  end subroutine flopscope_region_end

end module flopscope
