! The C side of the Fortran module (`use hympi`, fortran/hympi.f90): the
! handle and box types, the status codes, and the interfaces of the C API
! (hympi/hympi.h) through iso_c_binding. Users `use hympi`, which
! re-exports what they need from here; this module is the modules' shared
! base (hympi_arrays.f90 and hympi.f90 both build on it).
module hympi_c
  use, intrinsic :: iso_c_binding
  implicit none
  public

  integer(c_int), parameter :: HYMPI_SUCCESS = 0, HYMPI_ERR_USAGE = 1, &
       HYMPI_ERR_MPI = 2, HYMPI_ERR_KERNEL = 3, HYMPI_ERR_OUTPUT = 4, HYMPI_ERR_STATE = 5, &
       HYMPI_ERR_INTERNAL = 6
  integer(c_int), parameter :: HYMPI_ON_ERROR_ABORT = 0, HYMPI_ON_ERROR_RETURN = 1
  integer(c_int), parameter :: HYMPI_RANK_ORDER_SEQUENTIAL = 0, HYMPI_RANK_ORDER_ROUND_ROBIN = 1
  ! The stencil's shape (hympi_domain_create's `stencil`): box reads the
  ! halo's edges and corners too, which the exchange then brings.
  integer(c_int), parameter :: HYMPI_STENCIL_STAR = 0, HYMPI_STENCIL_BOX = 1

  ! A box of local points in Fortran indices: lo(d)..hi(d) inclusive, 1-based.
  type :: hympi_box
    integer :: lo(3), hi(3)
  end type hympi_box

  ! The C box (hympi_box in hympi.h): zero-based, half-open.
  type, bind(C) :: c_box
    integer(c_int) :: lo(3), hi(3)
  end type c_box

  ! The C configuration (hympi_domain_config); hympi_domain_create fills it.
  type, bind(C) :: c_config
    integer(c_int) :: grid(3), periodic(3), halo
    type(c_ptr) :: scheme
    integer(c_int) :: threads, reserved, ranks_per_node, on_error, depth
    integer(c_int) :: proc_grid(3), rank_order
    integer(c_int) :: stencil
  end type c_config

  ! Handles. A handle is live from its create call to its free call; the
  ! create calls refuse a live handle (creating over it would lose it).
  type :: hympi_domain
    type(c_ptr) :: handle = c_null_ptr
  end type hympi_domain

  type :: hympi_field
    type(c_ptr) :: handle = c_null_ptr
  end type hympi_field

  interface
    subroutine c_config_init(config) bind(C, name="hympi_domain_config_init")
      import :: c_config
      type(c_config), intent(out) :: config
    end subroutine c_config_init
    integer(c_int) function c_create_f(comm, config, domain) bind(C, name="hympi_domain_create_f")
      import :: c_int, c_ptr, c_config
      integer(c_int), value :: comm
      type(c_config), intent(in) :: config
      type(c_ptr), intent(out) :: domain
    end function c_create_f
    integer(c_int) function c_free(domain) bind(C, name="hympi_domain_free")
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: domain
    end function c_free
    integer(c_int) function c_local(domain, size, offset) bind(C, name="hympi_domain_local")
      import :: c_int, c_ptr
      type(c_ptr), value :: domain
      integer(c_int), intent(out) :: size(3), offset(3)
    end function c_local
    integer(c_int) function c_layout(domain, halo, sj, sk, count) bind(C, name="hympi_domain_layout")
      import :: c_int, c_ptr, c_intptr_t, c_size_t
      type(c_ptr), value :: domain
      integer(c_int), intent(out) :: halo
      integer(c_intptr_t), intent(out) :: sj, sk
      integer(c_size_t), intent(out) :: count
    end function c_layout
    integer(c_int) function c_field_create(domain, field) bind(C, name="hympi_field_create")
      import :: c_int, c_ptr
      type(c_ptr), value :: domain
      type(c_ptr), intent(out) :: field
    end function c_field_create
    integer(c_int) function c_field_data(field, data) bind(C, name="hympi_field_data")
      import :: c_int, c_ptr
      type(c_ptr), value :: field
      type(c_ptr), intent(out) :: data
    end function c_field_data
    integer(c_int) function c_field_free(field) bind(C, name="hympi_field_free")
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: field
    end function c_field_free
    integer(c_int) function c_sweep(domain, nfields, fields, fn, user) bind(C, name="hympi_sweep")
      import :: c_int, c_ptr, c_funptr
      type(c_ptr), value :: domain
      integer(c_int), value :: nfields
      type(c_ptr), intent(in) :: fields(*)
      type(c_funptr), value :: fn
      type(c_ptr), value :: user
    end function c_sweep
    integer(c_int) function c_sweep_sum(domain, nfields, fields, fn, user, sum) &
        bind(C, name="hympi_sweep_sum")
      import :: c_int, c_ptr, c_funptr, c_double
      type(c_ptr), value :: domain
      integer(c_int), value :: nfields
      type(c_ptr), intent(in) :: fields(*)
      type(c_funptr), value :: fn
      type(c_ptr), value :: user
      real(c_double), intent(out) :: sum
    end function c_sweep_sum
    integer(c_int) function c_start_clock(domain) bind(C, name="hympi_start_clock")
      import :: c_int, c_ptr
      type(c_ptr), value :: domain
    end function c_start_clock
    integer(c_int) function c_stop_clock(domain) bind(C, name="hympi_stop_clock")
      import :: c_int, c_ptr
      type(c_ptr), value :: domain
    end function c_stop_clock
    integer(c_int) function c_checksum(domain, field, sum, l2) bind(C, name="hympi_checksum")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: domain, field
      real(c_double), intent(out) :: sum, l2
    end function c_checksum
    integer(c_int) function c_report_json(domain, path, name) bind(C, name="hympi_report_json")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: domain
      character(kind=c_char), intent(in) :: path(*), name(*)
    end function c_report_json
    integer(c_int) function c_report_json_fields(domain, path, name, nfields, fields, names) &
        bind(C, name="hympi_report_json_fields")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: domain
      character(kind=c_char), intent(in) :: path(*), name(*)
      integer(c_int), value :: nfields
      type(c_ptr), intent(in) :: fields(*)
      type(c_ptr), value :: names
    end function c_report_json_fields
    integer(c_int) function c_report_build(domain, compiler, flags) bind(C, name="hympi_report_build")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: domain
      character(kind=c_char), intent(in) :: compiler(*), flags(*)
    end function c_report_build
    type(c_ptr) function c_last_error() bind(C, name="hympi_last_error")
      import :: c_ptr
    end function c_last_error
    integer(c_size_t) function c_strlen(s) bind(C, name="strlen")
      import :: c_size_t, c_ptr
      type(c_ptr), value :: s
    end function c_strlen
    integer(c_int) function c_threads(domain, threads) bind(C, name="hympi_domain_threads")
      import :: c_int, c_ptr
      type(c_ptr), value :: domain
      integer(c_int), intent(out) :: threads
    end function c_threads
    integer(c_int) function c_field_wrap(domain, data, field) bind(C, name="hympi_field_wrap")
      import :: c_int, c_ptr
      type(c_ptr), value :: domain, data
      type(c_ptr), intent(out) :: field
    end function c_field_wrap
    integer(c_int) function c_for_each(domain, fn, user, sum) bind(C, name="hympi_for_each")
      import :: c_int, c_ptr, c_funptr, c_double
      type(c_ptr), value :: domain
      type(c_funptr), value :: fn
      type(c_ptr), value :: user
      real(c_double), intent(out) :: sum
    end function c_for_each
    integer(c_int) function c_sweep_block(domain, in, out, sweeps, fn, user) &
        bind(C, name="hympi_sweep_block")
      import :: c_int, c_ptr, c_funptr
      type(c_ptr), value :: domain
      type(c_ptr), intent(inout) :: in, out
      integer(c_int), value :: sweeps
      type(c_funptr), value :: fn
      type(c_ptr), value :: user
    end function c_sweep_block
    integer(c_int) function c_tune_block(domain, in, out, sweeps, fn, user, blocks) &
        bind(C, name="hympi_tune_block")
      import :: c_int, c_ptr, c_funptr
      type(c_ptr), value :: domain
      type(c_ptr), intent(inout) :: in, out
      integer(c_int), value :: sweeps
      type(c_funptr), value :: fn
      type(c_ptr), value :: user
      integer(c_int), intent(out) :: blocks
    end function c_tune_block
    type(c_ptr) function c_scheme_names() bind(C, name="hympi_scheme_names")
      import :: c_ptr
    end function c_scheme_names
    integer(c_int) function c_boundaries(domain, boundary) bind(C, name="hympi_domain_boundaries")
      import :: c_int, c_ptr
      type(c_ptr), value :: domain
      integer(c_int), intent(out) :: boundary(6)
    end function c_boundaries
    ! The Fortran module's own entries (src/c_api.cpp), not part of the C
    ! API: a domain whose messages give boxes in Fortran's indices, refused
    ! on every rank when a live handle is passed in on any; an error message
    ! of the module's own; a field's data, checked against its domain.
    integer(c_int) function c_create_fortran(comm, config, handle_live, domain) &
        bind(C, name="hympi_fortran_domain_create")
      import :: c_int, c_ptr, c_config
      integer(c_int), value :: comm, handle_live
      type(c_config), intent(in) :: config
      type(c_ptr), intent(out) :: domain
    end function c_create_fortran
    integer(c_int) function c_fortran_fail(code, message) bind(C, name="hympi_fortran_fail")
      import :: c_int, c_char
      integer(c_int), value :: code
      character(kind=c_char), intent(in) :: message(*)
    end function c_fortran_fail
    integer(c_int) function c_field_of(call, domain, field, data) &
        bind(C, name="hympi_fortran_field_data")
      import :: c_int, c_ptr, c_char
      character(kind=c_char), intent(in) :: call(*)
      type(c_ptr), value :: domain, field
      type(c_ptr), intent(out) :: data
    end function c_field_of
  end interface

contains

  ! The C box in Fortran's indices: [lo, hi) zero-based is lo+1..hi.
  pure function fortran_box(box) result(fbox)
    type(c_box), intent(in) :: box
    type(hympi_box) :: fbox
    fbox%lo = box%lo + 1
    fbox%hi = box%hi
  end function fortran_box

  ! status = code with message as hympi_last_error()'s text.
  subroutine set_error(status, code, message)
    integer, intent(out) :: status
    integer(c_int), intent(in) :: code
    character(len=*), intent(in) :: message
    status = c_fortran_fail(code, message // c_null_char)
  end subroutine set_error

  ! A C string (NUL-terminated, owned by hympi) as a Fortran string.
  function from_c_string(text) result(message)
    type(c_ptr), intent(in) :: text
    character(len=:), allocatable :: message
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    n = int(c_strlen(text))
    call c_f_pointer(text, chars, [n])
    allocate(character(len=n) :: message)
    do i = 1, n
      message(i:i) = chars(i)
    end do
  end function from_c_string

end module hympi_c
