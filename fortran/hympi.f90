! The Fortran 2008 module of hympi's user-kernel API: `use hympi`.
! A thin layer over the C API (hympi/hympi.h) through iso_c_binding;
! communicators are mpi_f08 `type(MPI_Comm)`.
!
! Index convention: a field is a real(c_double) array u(1-h:n1+h, 1-h:n2+h,
! 1-h:n3+h) (hympi_field_pointer gives it): 1..n is the rank's own box, the
! h planes around it the halo. The box a callback gets is in C's zero-based
! half-open form: loop `do k = box%lo(3) + 1, box%hi(3)` (same for j, i).
!
! Thread rules: call every hympi_* routine from the thread that called
! MPI_Init_thread, outside any parallel region. The callback runs on
! hympi's threads inside hympi's parallel regions: no MPI, no hympi_* calls,
! no !$omp directives (hympi owns the threads); write only the points of the
! box it is given.
module hympi
  use, intrinsic :: iso_c_binding
  use mpi_f08, only: MPI_Comm
  implicit none
  private

  integer(c_int), parameter, public :: HYMPI_SUCCESS = 0, HYMPI_ERR_USAGE = 1, &
       HYMPI_ERR_MPI = 2, HYMPI_ERR_KERNEL = 3, HYMPI_ERR_OUTPUT = 4, HYMPI_ERR_STATE = 5, &
       HYMPI_ERR_INTERNAL = 6
  integer(c_int), parameter, public :: HYMPI_ON_ERROR_ABORT = 0, HYMPI_ON_ERROR_RETURN = 1

  ! A box of local points, zero-based and half-open per direction (as in C).
  type, bind(C), public :: hympi_box
    integer(c_int) :: lo(3), hi(3)
  end type hympi_box

  ! The C configuration (hympi_domain_config); hympi_domain_create fills it.
  type, bind(C) :: c_config
    integer(c_int) :: grid(3), periodic(3), halo
    type(c_ptr) :: scheme
    integer(c_int) :: threads, reserved, ranks_per_node, on_error
  end type c_config

  type, public :: hympi_domain
    type(c_ptr) :: handle = c_null_ptr
  end type hympi_domain

  type, public :: hympi_field
    type(c_ptr) :: handle = c_null_ptr
  end type hympi_field

  ! The callback: integer(c_int) function f(box, thread, user, partial) bind(C)
  ! returning 0, or non-zero to fail the sweep; add a box's part of a sum to
  ! partial (hympi_sweep_sum).
  abstract interface
    integer(c_int) function hympi_box_callback(box, thread, user, partial) bind(C)
      import :: c_int, c_ptr, c_double, hympi_box
      type(hympi_box), intent(in) :: box
      integer(c_int), value :: thread
      type(c_ptr), value :: user
      real(c_double), intent(inout) :: partial
    end function hympi_box_callback
  end interface

  public :: hympi_box_callback, hympi_domain_create, hympi_domain_free, hympi_domain_local, &
            hympi_domain_halo, hympi_field_create, hympi_field_pointer, hympi_field_free, &
            hympi_sweep, hympi_sweep_sum, hympi_start_clock, hympi_stop_clock, hympi_checksum, &
            hympi_report_json, hympi_last_error

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
      import :: c_int, c_ptr, c_ptrdiff_t, c_size_t
      type(c_ptr), value :: domain
      integer(c_int), intent(out) :: halo
      integer(c_ptrdiff_t), intent(out) :: sj, sk
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
    type(c_ptr) function c_last_error() bind(C, name="hympi_last_error")
      import :: c_ptr
    end function c_last_error
    integer(c_size_t) function c_strlen(s) bind(C, name="strlen")
      import :: c_size_t, c_ptr
      type(c_ptr), value :: s
    end function c_strlen
  end interface

contains

  ! Collective over comm. grid: global points; scheme: a registered name
  ! ("" for pure MPI); status: HYMPI_SUCCESS or an error (hympi_last_error()).
  subroutine hympi_domain_create(domain, comm, grid, scheme, threads, status, periodic, halo, &
                                 reserved, on_error)
    type(hympi_domain), intent(out) :: domain
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: grid(3)
    character(len=*), intent(in) :: scheme
    integer, intent(in) :: threads
    integer, intent(out) :: status
    logical, intent(in), optional :: periodic(3)
    integer, intent(in), optional :: halo, reserved, on_error
    type(c_config) :: config
    character(kind=c_char, len=:), allocatable, target :: cname
    call c_config_init(config)
    config%grid = int(grid, c_int)
    config%threads = int(threads, c_int)
    if (present(periodic)) config%periodic = merge(1_c_int, 0_c_int, periodic)
    if (present(halo)) config%halo = int(halo, c_int)
    if (present(reserved)) config%reserved = int(reserved, c_int)
    if (present(on_error)) config%on_error = int(on_error, c_int)
    if (len_trim(scheme) > 0) then
      cname = trim(scheme) // c_null_char
      config%scheme = c_loc(cname)
    end if
    status = c_create_f(int(comm%MPI_VAL, c_int), config, domain%handle)
  end subroutine hympi_domain_create

  subroutine hympi_domain_free(domain)
    type(hympi_domain), intent(inout) :: domain
    integer(c_int) :: rc
    rc = c_free(domain%handle)
  end subroutine hympi_domain_free

  ! This rank's box: n(3) points, offset(3) = global zero-based index of its
  ! first point (Fortran point i of the box is global point offset(1) + i - 1).
  subroutine hympi_domain_local(domain, n, offset)
    type(hympi_domain), intent(in) :: domain
    integer, intent(out) :: n(3), offset(3)
    integer(c_int) :: cn(3), co(3), rc
    rc = c_local(domain%handle, cn, co)
    n = cn
    offset = co
  end subroutine hympi_domain_local

  integer function hympi_domain_halo(domain)
    type(hympi_domain), intent(in) :: domain
    integer(c_int) :: halo, rc
    integer(c_ptrdiff_t) :: sj, sk
    integer(c_size_t) :: count
    rc = c_layout(domain%handle, halo, sj, sk, count)
    hympi_domain_halo = halo
  end function hympi_domain_halo

  ! A zero field allocated by hympi (first touched by its threads).
  subroutine hympi_field_create(domain, field, status)
    type(hympi_domain), intent(in) :: domain
    type(hympi_field), intent(out) :: field
    integer, intent(out) :: status
    status = c_field_create(domain%handle, field%handle)
  end subroutine hympi_field_create

  ! u(1-h:n1+h, 1-h:n2+h, 1-h:n3+h) over the field's memory.
  subroutine hympi_field_pointer(domain, field, u)
    type(hympi_domain), intent(in) :: domain
    type(hympi_field), intent(in) :: field
    real(c_double), pointer, intent(out) :: u(:, :, :)
    real(c_double), pointer :: whole(:, :, :)
    type(c_ptr) :: data
    integer :: n(3), offset(3), h
    integer(c_int) :: rc
    call hympi_domain_local(domain, n, offset)
    h = hympi_domain_halo(domain)
    rc = c_field_data(field%handle, data)
    call c_f_pointer(data, whole, n + 2 * h)
    u(1 - h:, 1 - h:, 1 - h:) => whole
  end subroutine hympi_field_pointer

  subroutine hympi_field_free(field)
    type(hympi_field), intent(inout) :: field
    integer(c_int) :: rc
    rc = c_field_free(field%handle)
  end subroutine hympi_field_free

  ! One sweep: exchange the halos of fields (one message per neighbour and
  ! direction), then call callback on boxes covering every local point once.
  subroutine hympi_sweep(domain, fields, callback, status, user)
    type(hympi_domain), intent(in) :: domain
    type(hympi_field), intent(in) :: fields(:)
    procedure(hympi_box_callback) :: callback
    integer, intent(out) :: status
    type(c_ptr), intent(in), optional :: user
    type(c_ptr) :: handles(size(fields)), context
    integer :: f
    context = c_null_ptr
    if (present(user)) context = user
    do f = 1, size(fields)
      handles(f) = fields(f)%handle
    end do
    status = c_sweep(domain%handle, int(size(fields), c_int), handles, c_funloc(callback), context)
  end subroutine hympi_sweep

  ! The same; sum = the callbacks' partials over threads and ranks.
  subroutine hympi_sweep_sum(domain, fields, callback, sum, status, user)
    type(hympi_domain), intent(in) :: domain
    type(hympi_field), intent(in) :: fields(:)
    procedure(hympi_box_callback) :: callback
    real(c_double), intent(out) :: sum
    integer, intent(out) :: status
    type(c_ptr), intent(in), optional :: user
    type(c_ptr) :: handles(size(fields)), context
    integer :: f
    context = c_null_ptr
    if (present(user)) context = user
    do f = 1, size(fields)
      handles(f) = fields(f)%handle
    end do
    status = c_sweep_sum(domain%handle, int(size(fields), c_int), handles, c_funloc(callback), &
                         context, sum)
  end subroutine hympi_sweep_sum

  subroutine hympi_start_clock(domain)
    type(hympi_domain), intent(in) :: domain
    integer(c_int) :: rc
    rc = c_start_clock(domain%handle)
  end subroutine hympi_start_clock

  subroutine hympi_stop_clock(domain)
    type(hympi_domain), intent(in) :: domain
    integer(c_int) :: rc
    rc = c_stop_clock(domain%handle)
  end subroutine hympi_stop_clock

  ! Collective: sum and l2 norm of the field's own points over all ranks.
  subroutine hympi_checksum(domain, field, sum, l2)
    type(hympi_domain), intent(in) :: domain
    type(hympi_field), intent(in) :: field
    real(c_double), intent(out) :: sum, l2
    integer(c_int) :: rc
    rc = c_checksum(domain%handle, field%handle, sum, l2)
  end subroutine hympi_checksum

  ! Collective: the timed loop's summary as JSON (hympi-lab study --app).
  subroutine hympi_report_json(domain, path, name, status)
    type(hympi_domain), intent(in) :: domain
    character(len=*), intent(in) :: path, name
    integer, intent(out) :: status
    status = c_report_json(domain%handle, trim(path) // c_null_char, trim(name) // c_null_char)
  end subroutine hympi_report_json

  ! The message of the last error on this thread.
  function hympi_last_error() result(message)
    character(len=:), allocatable :: message
    type(c_ptr) :: text
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    text = c_last_error()
    n = int(c_strlen(text))
    call c_f_pointer(text, chars, [n])
    allocate(character(len=n) :: message)
    do i = 1, n
      message(i:i) = chars(i)
    end do
  end function hympi_last_error

end module hympi
