! Field I/O for Fortran: `use hympi_io` (with `use hympi`). A thin layer over
! the C API's Field I/O section (hympi/hympi.h; docs/field-io.md).
!
! The global array is global(NX, NY, NZ): Fortran's own order is i fastest,
! the order of the file. The file PATH holds it as raw little-endian float64
! (nothing else), with the sidecar PATH.json and PATH.xmf (XDMF, for
! ParaView and VisIt). A file written on any number of ranks reads back bit
! for bit on any other.
!
! Every routine but hympi_domain_grid is collective over the domain's
! communicator, with the same root, path and name on every rank; the halo
! is neither read nor written; root is a rank of that communicator (0-based,
! as MPI's). status is HYMPI_SUCCESS, or the same error code on every rank
! (hympi_last_error() gives the text): HYMPI_ERR_USAGE for bad input (a
! field of another domain, a missing file, a file of another grid, a bad
! root, a missing or misshapen global array on the root), HYMPI_ERR_OUTPUT
! for a path that cannot be written.
module hympi_io
  use, intrinsic :: iso_c_binding
  use hympi, only: hympi_domain, hympi_field
  implicit none
  private

  public :: hympi_domain_grid, hympi_field_gather, hympi_field_scatter, hympi_field_write, &
            hympi_field_read

  interface
    integer(c_int) function c_grid(domain, grid) bind(C, name="hympi_domain_grid")
      import :: c_int, c_ptr
      type(c_ptr), value :: domain
      integer(c_int), intent(out) :: grid(3)
    end function c_grid
    integer(c_int) function c_gather(domain, field, root, global) bind(C, name="hympi_field_gather")
      import :: c_int, c_ptr
      type(c_ptr), value :: domain, field
      integer(c_int), value :: root
      type(c_ptr), value :: global
    end function c_gather
    integer(c_int) function c_scatter(domain, global, root, field) bind(C, name="hympi_field_scatter")
      import :: c_int, c_ptr
      type(c_ptr), value :: domain, global
      integer(c_int), value :: root
      type(c_ptr), value :: field
    end function c_scatter
    integer(c_int) function c_write(domain, field, path, name) bind(C, name="hympi_field_write")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: domain, field
      character(kind=c_char), intent(in) :: path(*), name(*)
    end function c_write
    integer(c_int) function c_read(domain, field, path) bind(C, name="hympi_field_read")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: domain, field
      character(kind=c_char), intent(in) :: path(*)
    end function c_read
  end interface

contains

  ! The global grid NX, NY, NZ (to allocate global(NX, NY, NZ)). Local.
  subroutine hympi_domain_grid(domain, grid, status)
    type(hympi_domain), intent(in) :: domain
    integer, intent(out) :: grid(3)
    integer, intent(out), optional :: status
    integer(c_int) :: cgrid(3), rc
    cgrid = 0
    rc = c_grid(domain%handle, cgrid)
    grid = cgrid
    if (present(status)) status = rc
  end subroutine hympi_domain_grid

  ! global on the root as C sees it: its address when it has the grid's
  ! shape, else none (the root then gets HYMPI_ERR_USAGE on every rank).
  function global_address(domain, global) result(address)
    type(hympi_domain), intent(in) :: domain
    real(c_double), target, contiguous, intent(in), optional :: global(:, :, :)
    type(c_ptr) :: address
    integer :: grid(3), rc
    address = c_null_ptr
    if (.not. present(global)) return
    call hympi_domain_grid(domain, grid, rc)
    if (rc == 0 .and. all(shape(global) == grid)) address = c_loc(global)
  end function global_address

  ! The field's own points of every rank into global(NX, NY, NZ) on root
  ! (optional, and ignored, on the other ranks).
  subroutine hympi_field_gather(domain, field, root, status, global)
    type(hympi_domain), intent(in) :: domain
    type(hympi_field), intent(in) :: field
    integer, intent(in) :: root
    integer, intent(out) :: status
    real(c_double), target, contiguous, intent(inout), optional :: global(:, :, :)
    status = c_gather(domain%handle, field%handle, int(root, c_int), global_address(domain, global))
  end subroutine hympi_field_gather

  ! global(NX, NY, NZ) on root (optional, and ignored, elsewhere) into every
  ! rank's own points of field.
  subroutine hympi_field_scatter(domain, field, root, status, global)
    type(hympi_domain), intent(in) :: domain
    type(hympi_field), intent(in) :: field
    integer, intent(in) :: root
    integer, intent(out) :: status
    real(c_double), target, contiguous, intent(in), optional :: global(:, :, :)
    status = c_scatter(domain%handle, global_address(domain, global), int(root, c_int), field%handle)
  end subroutine hympi_field_scatter

  ! The field as the file path (+ path.json, path.xmf); name: 1..64
  ! letters, digits, '_', '-', '.'.
  subroutine hympi_field_write(domain, field, path, name, status)
    type(hympi_domain), intent(in) :: domain
    type(hympi_field), intent(in) :: field
    character(len=*), intent(in) :: path, name
    integer, intent(out) :: status
    status = c_write(domain%handle, field%handle, trim(path) // c_null_char, trim(name) // c_null_char)
  end subroutine hympi_field_write

  ! The file path into field (path.json, when present, must give the
  ! domain's grid; without it the file must hold NX*NY*NZ*8 bytes).
  subroutine hympi_field_read(domain, field, path, status)
    type(hympi_domain), intent(in) :: domain
    type(hympi_field), intent(in) :: field
    character(len=*), intent(in) :: path
    integer, intent(out) :: status
    status = c_read(domain%handle, field%handle, trim(path) // c_null_char)
  end subroutine hympi_field_read

end module hympi_io
