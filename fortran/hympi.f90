! The Fortran 2008 module of hympi's user-kernel API: `use hympi`.
! A thin layer over the C API (hympi/hympi.h) through iso_c_binding;
! communicators are mpi_f08 `type(MPI_Comm)` or `use mpi`'s integers (the
! generic hympi_domain_create takes either).
!
! Index convention (Fortran's own, not C's): a field is a real(c_double)
! array u(1-h:n1+h, 1-h:n2+h, 1-h:n3+h) (hympi_field_pointer gives it):
! 1..n is the rank's own box, the h planes on each side the halo (with h = 1:
! 0 and n+1). The box a callback gets uses the same indices, inclusive:
!   do k = box%lo(3), box%hi(3); do j = ...; do i = box%lo(1), box%hi(1)
! and so do the messages of a failing callback. Local point i is global
! point offset(1) + i - 1 (zero-based global, as hympi_domain_local's offset).
!
! Callbacks are ordinary Fortran functions (no bind(C) needed: the module
! passes C a bind(C) trampoline that converts the box and calls them). The
! array form (hympi_sweep_arrays, hympi_sweep_block_arrays in
! hympi_arrays.f90) hands them the field arrays as assumed-shape dummies;
! the older forms (hympi_box_callback, hympi_pair_callback) reach the arrays
! through module pointers or pointer dummies. They are declared `recursive`
! because several threads run them at once: gfortran then keeps their
! locals on each thread's stack.
!
! Handles: hympi changes a handle you pass only in the create and free
! calls (and hympi_sweep_block, the pointer form, which swaps u_in and u_out
! after an odd number of sweeps); a create call refuses a live handle.
!
! Thread rules: call every hympi_* routine from the thread that called
! MPI_Init_thread, outside any parallel region. The callback runs on
! hympi's threads inside hympi's parallel regions: no MPI, no hympi_* calls,
! no !$omp directives (hympi owns the threads); write only the points of the
! box it is given.
module hympi
  use, intrinsic :: iso_c_binding
  use mpi_f08, only: MPI_Comm
  use hympi_c
  use hympi_arrays
  implicit none
  private

  public :: HYMPI_SUCCESS, HYMPI_ERR_USAGE, HYMPI_ERR_MPI, HYMPI_ERR_KERNEL, HYMPI_ERR_OUTPUT, &
            HYMPI_ERR_STATE, HYMPI_ERR_INTERNAL, HYMPI_ON_ERROR_ABORT, HYMPI_ON_ERROR_RETURN, &
            HYMPI_RANK_ORDER_SEQUENTIAL, HYMPI_RANK_ORDER_ROUND_ROBIN, &
            hympi_box, hympi_domain, hympi_field
  public :: HYMPI_STENCIL_STAR, HYMPI_STENCIL_BOX
  ! The array form (hympi_arrays.f90).
  public :: hympi_array_update, hympi_sweep_arrays, hympi_sweep_block_arrays
  public :: hympi_tune_block_arrays

  ! One name for both kinds of communicator: mpi_f08's type(MPI_Comm) and
  ! `use mpi`'s integer.
  interface hympi_domain_create
    module procedure hympi_domain_create_f08, hympi_domain_create_int
  end interface hympi_domain_create

  ! The callback: returns 0, or non-zero to fail the sweep (the sweep then
  ! stops every rank, or returns HYMPI_ERR_KERNEL with on_error =
  ! HYMPI_ON_ERROR_RETURN). thread: 0..threads-1. user: the sweep's `user`
  ! argument (c_null_ptr when none). partial starts at 0 for each call: add
  ! the box's part of a sum to it (hympi_sweep_sum, hympi_for_each).
  abstract interface
    recursive integer function hympi_box_callback(box, thread, user, partial)
      import :: c_ptr, c_double, hympi_box
      type(hympi_box), intent(in) :: box
      integer, intent(in) :: thread
      type(c_ptr), intent(in) :: user
      real(c_double), intent(inout) :: partial
    end function hympi_box_callback
  end interface

  ! The update of one box in a two-array sweep (hympi_sweep_block): writes
  ! u_out's points of the box from u_in. Both arrive as contiguous pointers
  ! (declare them so: `pointer, contiguous`) with the field's bounds,
  ! u(1-h:n1+h, 1-h:n2+h, 1-h:n3+h) (h = hympi_domain_halo, which counts
  ! the depth's layers); the box may reach into the halo (indices below 1 or
  ! above n) in the wavefront's sweeps. Returns 0, or non-zero to fail.
  abstract interface
    recursive integer function hympi_pair_callback(u_in, u_out, box, thread, user)
      import :: c_ptr, c_double, hympi_box
      real(c_double), pointer, contiguous, intent(in) :: u_in(:, :, :)
      real(c_double), pointer, contiguous, intent(in) :: u_out(:, :, :)
      type(hympi_box), intent(in) :: box
      integer, intent(in) :: thread
      type(c_ptr), intent(in) :: user
    end function hympi_pair_callback
  end interface

  ! What the pair trampoline needs: the callback, its argument, and the
  ! shape to give the arrays.
  type :: pair_context
    procedure(hympi_pair_callback), pointer, nopass :: callback => null()
    type(c_ptr) :: user = c_null_ptr
    integer :: n(3) = 0, h = 0
  end type pair_context

  ! What the trampoline needs: the user's callback and argument. One per
  ! sweep, on the caller's stack; the threads only read it.
  type :: sweep_context
    procedure(hympi_box_callback), pointer, nopass :: callback => null()
    type(c_ptr) :: user = c_null_ptr
  end type sweep_context

  public :: hympi_box_callback, hympi_domain_create, hympi_domain_free, hympi_domain_local, &
            hympi_domain_halo, hympi_domain_threads, hympi_field_create, hympi_field_wrap, &
            hympi_field_pointer, hympi_field_free, hympi_sweep, hympi_sweep_sum, hympi_for_each, &
            hympi_pair_callback, hympi_sweep_block, &
            hympi_start_clock, hympi_stop_clock, hympi_checksum, hympi_report_json, &
            hympi_last_error, hympi_scheme_names, hympi_domain_boundaries


contains

  ! Collective over comm. grid: global points; scheme: a registered name
  ! ("" for pure MPI); status: HYMPI_SUCCESS or an error code, whose text is
  ! hympi_last_error(). periodic: per axis (default none); halo: width
  ! (default 1); reserved: m (default: the scheme's); on_error:
  ! HYMPI_ON_ERROR_ABORT (default) or HYMPI_ON_ERROR_RETURN; depth: sweeps
  ! per exchange in hympi_sweep_block (default 1; fields then carry
  ! halo * depth layers); ranks_per_node: virtual nodes of that many ranks
  ! (default 0: the real nodes); proc_grid: the process grid (product = the
  ! ranks; default: chosen node-aware); rank_order: with ranks_per_node,
  ! HYMPI_RANK_ORDER_SEQUENTIAL (default) or HYMPI_RANK_ORDER_ROUND_ROBIN;
  ! stencil: HYMPI_STENCIL_STAR (default) or HYMPI_STENCIL_BOX (the halo's
  ! edges and corners are exchanged too).
  ! A domain handle that is still live (created, not
  ! freed) on any rank is refused on every rank with HYMPI_ERR_USAGE and
  ! left as it was. This is the `use mpi_f08` form; hympi_domain_create_int
  ! (the same generic name) takes `use mpi`'s integer communicator.
  subroutine hympi_domain_create_f08(domain, comm, grid, scheme, threads, status, periodic, &
                                     halo, reserved, on_error, ranks_per_node, depth, &
                                     proc_grid, rank_order, stencil)
    type(hympi_domain), intent(inout) :: domain
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: grid(3)
    character(len=*), intent(in) :: scheme
    integer, intent(in) :: threads
    integer, intent(out) :: status
    logical, intent(in), optional :: periodic(3)
    integer, intent(in), optional :: halo, reserved, on_error, ranks_per_node, depth
    integer, intent(in), optional :: proc_grid(3), rank_order
    integer, intent(in), optional :: stencil
    ! mpi_f08's handle holds the Fortran integer handle.
    call hympi_domain_create_int(domain, comm%MPI_VAL, grid, scheme, threads, status, periodic, &
                                 halo, reserved, on_error, ranks_per_node, depth, &
                                 proc_grid, rank_order, stencil)
  end subroutine hympi_domain_create_f08

  ! The same with `use mpi`'s (or mpif.h's) integer communicator.
  subroutine hympi_domain_create_int(domain, comm, grid, scheme, threads, status, periodic, &
                                     halo, reserved, on_error, ranks_per_node, depth, &
                                     proc_grid, rank_order, stencil)
    type(hympi_domain), intent(inout) :: domain
    integer, intent(in) :: comm
    integer, intent(in) :: grid(3)
    character(len=*), intent(in) :: scheme
    integer, intent(in) :: threads
    integer, intent(out) :: status
    logical, intent(in), optional :: periodic(3)
    integer, intent(in), optional :: halo, reserved, on_error, ranks_per_node, depth
    integer, intent(in), optional :: proc_grid(3), rank_order
    integer, intent(in), optional :: stencil
    type(c_config) :: config
    type(c_ptr) :: created
    integer(c_int) :: live
    ! The name must outlive the call only: hympi resolves it at once.
    character(kind=c_char, len=:), allocatable, target :: cname
    call c_config_init(config)
    config%grid = int(grid, c_int)
    config%threads = int(threads, c_int)
    if (present(periodic)) config%periodic = merge(1_c_int, 0_c_int, periodic)
    if (present(halo)) config%halo = int(halo, c_int)
    if (present(reserved)) config%reserved = int(reserved, c_int)
    if (present(on_error)) config%on_error = int(on_error, c_int)
    if (present(ranks_per_node)) config%ranks_per_node = int(ranks_per_node, c_int)
    if (present(depth)) config%depth = int(depth, c_int)
    if (present(proc_grid)) config%proc_grid = int(proc_grid, c_int)
    if (present(rank_order)) config%rank_order = int(rank_order, c_int)
    if (present(stencil)) config%stencil = int(stencil, c_int)
    if (len_trim(scheme) > 0) then
      cname = trim(scheme) // c_null_char
      config%scheme = c_loc(cname)
    end if
    ! C agrees over comm whether any rank passed a live handle, so that all
    ! ranks refuse alike; the handle changes only on success.
    live = merge(1_c_int, 0_c_int, c_associated(domain%handle))
    created = c_null_ptr
    status = c_create_fortran(int(comm, c_int), config, live, created)
    if (status == HYMPI_SUCCESS) domain%handle = created
  end subroutine hympi_domain_create_int

  subroutine hympi_domain_free(domain, status)
    type(hympi_domain), intent(inout) :: domain
    integer, intent(out), optional :: status
    integer(c_int) :: rc
    rc = c_free(domain%handle)
    if (present(status)) status = rc
  end subroutine hympi_domain_free

  ! This rank's box: n(3) points, offset(3) = global zero-based index of its
  ! first point (Fortran point i of the box is global point offset(1) + i - 1).
  subroutine hympi_domain_local(domain, n, offset, status)
    type(hympi_domain), intent(in) :: domain
    integer, intent(out) :: n(3), offset(3)
    integer, intent(out), optional :: status
    integer(c_int) :: cn(3), co(3), rc
    cn = 0
    co = 0
    rc = c_local(domain%handle, cn, co)
    n = cn
    offset = co
    if (present(status)) status = rc
  end subroutine hympi_domain_local

  ! Which of this rank's faces are physical boundaries, ordered -i, +i, -j,
  ! +j, -k, +k (boundary(1) is the face below i = 1, boundary(2) the one
  ! above i = n(1), ...): the faces on the global grid's edge along a
  ! non-periodic axis. hympi never writes the halo beyond them (boundary
  ! values: docs/user-kernels.md). All .false. when status is an error.
  subroutine hympi_domain_boundaries(domain, boundary, status)
    type(hympi_domain), intent(in) :: domain
    logical, intent(out) :: boundary(6)
    integer, intent(out), optional :: status
    integer(c_int) :: flags(6), rc
    flags = 0
    rc = c_boundaries(domain%handle, flags)
    boundary = flags /= 0
    if (present(status)) status = rc
  end subroutine hympi_domain_boundaries

  ! The halo width (0 when the handle is not a live domain).
  integer function hympi_domain_halo(domain)
    type(hympi_domain), intent(in) :: domain
    integer(c_int) :: halo, rc
    integer(c_intptr_t) :: sj, sk  ! ptrdiff_t in C (c_ptrdiff_t is Fortran 2018)
    integer(c_size_t) :: count
    halo = 0
    rc = c_layout(domain%handle, halo, sj, sk, count)
    hympi_domain_halo = halo
  end function hympi_domain_halo

  ! The number of hympi's threads (0 when the handle is not a live domain).
  integer function hympi_domain_threads(domain)
    type(hympi_domain), intent(in) :: domain
    integer(c_int) :: threads, rc
    threads = 0
    rc = c_threads(domain%handle, threads)
    hympi_domain_threads = threads
  end function hympi_domain_threads

  ! A zero field allocated by hympi (first touched by its threads). A field
  ! handle that is still live is refused (HYMPI_ERR_USAGE) and left as it was.
  subroutine hympi_field_create(domain, field, status)
    type(hympi_domain), intent(in) :: domain
    type(hympi_field), intent(inout) :: field
    integer, intent(out) :: status
    type(c_ptr) :: created
    if (refused_live(field, "hympi_field_create", status)) return
    status = c_field_create(domain%handle, created)
    if (status == HYMPI_SUCCESS) field%handle = created
  end subroutine hympi_field_create

  ! A field over the caller's array, which must have the domain's shape
  ! array(1-h:n1+h, 1-h:n2+h, 1-h:n3+h) (any lower bounds; the extents are
  ! checked: HYMPI_ERR_USAGE otherwise) and must outlive the field.
  subroutine hympi_field_wrap(domain, array, field, status)
    type(hympi_domain), intent(in) :: domain
    real(c_double), target, contiguous, intent(inout) :: array(:, :, :)
    type(hympi_field), intent(inout) :: field
    integer, intent(out) :: status
    integer :: n(3), offset(3), h
    type(c_ptr) :: created
    if (refused_live(field, "hympi_field_wrap", status)) return
    call hympi_domain_local(domain, n, offset, status)
    if (status /= HYMPI_SUCCESS) return
    h = hympi_domain_halo(domain)
    if (any(shape(array) /= n + 2 * h)) then
      ! The C side cannot see a Fortran shape: this check is the only one.
      status = HYMPI_ERR_USAGE
      return
    end if
    status = c_field_wrap(domain%handle, c_loc(array), created)
    if (status == HYMPI_SUCCESS) field%handle = created
  end subroutine hympi_field_wrap

  ! Whether field is still live: then status = HYMPI_ERR_USAGE with a
  ! message naming call (creating over it would lose the field).
  logical function refused_live(field, call, status)
    type(hympi_field), intent(in) :: field
    character(len=*), intent(in) :: call
    integer, intent(out) :: status
    status = HYMPI_SUCCESS
    refused_live = c_associated(field%handle)
    if (refused_live) call set_error(status, HYMPI_ERR_USAGE, call // ": the field handle is " // &
        "still live (free it with hympi_field_free first, or pass a fresh hympi_field)")
  end function refused_live

  ! u(1-h:n1+h, 1-h:n2+h, 1-h:n3+h) over the field's memory (null when the
  ! handles are not live). Declare u `pointer, contiguous`: the compiler may
  ! then index it with unit stride. u stays bound to this field's memory:
  ! after hympi_sweep_block (the pointer form) swapped the handles, fetch it
  ! again.
  subroutine hympi_field_pointer(domain, field, u, status)
    type(hympi_domain), intent(in) :: domain
    type(hympi_field), intent(in) :: field
    real(c_double), pointer, contiguous, intent(out) :: u(:, :, :)
    integer, intent(out), optional :: status
    real(c_double), pointer, contiguous :: whole(:, :, :)
    type(c_ptr) :: data
    integer :: n(3), offset(3), h, rc
    u => null()
    call hympi_domain_local(domain, n, offset, rc)
    if (rc == HYMPI_SUCCESS) rc = c_field_data(field%handle, data)
    if (present(status)) status = rc
    if (rc /= HYMPI_SUCCESS) return
    h = hympi_domain_halo(domain)
    call c_f_pointer(data, whole, n + 2 * h)
    u(1 - h:, 1 - h:, 1 - h:) => whole
  end subroutine hympi_field_pointer

  subroutine hympi_field_free(field, status)
    type(hympi_field), intent(inout) :: field
    integer, intent(out), optional :: status
    integer(c_int) :: rc
    rc = c_field_free(field%handle)
    if (present(status)) status = rc
  end subroutine hympi_field_free

  ! C calls this for every box; it converts the box to Fortran's indices
  ! and calls the user's function. recursive: threads run it at once.
  recursive integer(c_int) function trampoline(box, thread, context, partial) bind(C)
    type(c_box), intent(in) :: box
    integer(c_int), value :: thread
    type(c_ptr), value :: context
    real(c_double), intent(inout) :: partial
    type(sweep_context), pointer :: ctx
    call c_f_pointer(context, ctx)
    trampoline = int(ctx%callback(fortran_box(box), int(thread), ctx%user, partial), c_int)
  end function trampoline

  ! One sweep: exchange the halos of fields (one message per neighbour and
  ! direction), then call callback on boxes covering every local point once.
  subroutine hympi_sweep(domain, fields, callback, status, user)
    type(hympi_domain), intent(in) :: domain
    type(hympi_field), intent(in) :: fields(:)
    procedure(hympi_box_callback) :: callback
    integer, intent(out) :: status
    type(c_ptr), intent(in), optional :: user
    type(c_ptr) :: handles(size(fields))
    type(sweep_context), target :: ctx
    integer :: f
    ctx%callback => callback
    if (present(user)) ctx%user = user
    do f = 1, size(fields)
      handles(f) = fields(f)%handle
    end do
    status = c_sweep(domain%handle, int(size(fields), c_int), handles, c_funloc(trampoline), &
                     c_loc(ctx))
  end subroutine hympi_sweep

  ! The same; sum = the callbacks' partials over threads and ranks.
  subroutine hympi_sweep_sum(domain, fields, callback, sum, status, user)
    type(hympi_domain), intent(in) :: domain
    type(hympi_field), intent(in) :: fields(:)
    procedure(hympi_box_callback) :: callback
    real(c_double), intent(out) :: sum
    integer, intent(out) :: status
    type(c_ptr), intent(in), optional :: user
    type(c_ptr) :: handles(size(fields))
    type(sweep_context), target :: ctx
    integer :: f
    ctx%callback => callback
    if (present(user)) ctx%user = user
    do f = 1, size(fields)
      handles(f) = fields(f)%handle
    end do
    sum = 0
    status = c_sweep_sum(domain%handle, int(size(fields), c_int), handles, c_funloc(trampoline), &
                         c_loc(ctx), sum)
  end subroutine hympi_sweep_sum

  ! C calls this for every box of a sweep block: the arrays as Fortran
  ! pointers with the field's bounds, the box in Fortran's indices.
  recursive integer(c_int) function pair_trampoline(in, out, box, thread, context) bind(C)
    type(c_ptr), value :: in, out
    type(c_box), intent(in) :: box
    integer(c_int), value :: thread
    type(c_ptr), value :: context
    type(pair_context), pointer :: ctx
    real(c_double), pointer, contiguous :: whole_in(:, :, :), whole_out(:, :, :), u_in(:, :, :), &
                                           u_out(:, :, :)
    call c_f_pointer(context, ctx)
    call c_f_pointer(in, whole_in, ctx%n + 2 * ctx%h)
    call c_f_pointer(out, whole_out, ctx%n + 2 * ctx%h)
    u_in(1 - ctx%h:, 1 - ctx%h:, 1 - ctx%h:) => whole_in
    u_out(1 - ctx%h:, 1 - ctx%h:, 1 - ctx%h:) => whole_out
    pair_trampoline = int(ctx%callback(u_in, u_out, fortran_box(box), int(thread), ctx%user), c_int)
  end function pair_trampoline

  ! Temporal blocking: sweeps (1..depth) sweeps of u_out = F(u_in) with one
  ! halo exchange (hympi.h's hympi_sweep_block says how they run and what
  ! the callback must be: a star or box stencil of reach <= halo, computing a
  ! point the same way wherever it lies). The handles swap after every
  ! sweep: on return u_in holds the result, and after an odd number of
  ! sweeps a pointer fetched from u_in before the call points at u_out's
  ! memory (fetch it again). hympi_sweep_block_arrays leaves the handles
  ! alone.
  subroutine hympi_sweep_block(domain, u_in, u_out, sweeps, callback, status, user)
    type(hympi_domain), intent(in) :: domain
    type(hympi_field), intent(inout) :: u_in, u_out
    integer, intent(in) :: sweeps
    procedure(hympi_pair_callback) :: callback
    integer, intent(out) :: status
    type(c_ptr), intent(in), optional :: user
    type(pair_context), target :: ctx
    integer :: offset(3)
    call hympi_domain_local(domain, ctx%n, offset, status)
    if (status /= HYMPI_SUCCESS) return
    ctx%h = hympi_domain_halo(domain)
    ctx%callback => callback
    if (present(user)) ctx%user = user
    status = c_sweep_block(domain%handle, u_in%handle, u_out%handle, int(sweeps, c_int), &
                           c_funloc(pair_trampoline), c_loc(ctx))
  end subroutine hympi_sweep_block

  ! Every local point once, no exchange; sum as in hympi_sweep_sum.
  subroutine hympi_for_each(domain, callback, sum, status, user)
    type(hympi_domain), intent(in) :: domain
    procedure(hympi_box_callback) :: callback
    real(c_double), intent(out) :: sum
    integer, intent(out) :: status
    type(c_ptr), intent(in), optional :: user
    type(sweep_context), target :: ctx
    ctx%callback => callback
    if (present(user)) ctx%user = user
    sum = 0
    status = c_for_each(domain%handle, c_funloc(trampoline), c_loc(ctx), sum)
  end subroutine hympi_for_each

  ! Timing of the caller's loop (collective start: a barrier, then zero).
  subroutine hympi_start_clock(domain, status)
    type(hympi_domain), intent(in) :: domain
    integer, intent(out), optional :: status
    integer(c_int) :: rc
    rc = c_start_clock(domain%handle)
    if (present(status)) status = rc
  end subroutine hympi_start_clock

  subroutine hympi_stop_clock(domain, status)
    type(hympi_domain), intent(in) :: domain
    integer, intent(out), optional :: status
    integer(c_int) :: rc
    rc = c_stop_clock(domain%handle)
    if (present(status)) status = rc
  end subroutine hympi_stop_clock

  ! Collective: sum and l2 norm of the field's own points over all ranks.
  subroutine hympi_checksum(domain, field, sum, l2, status)
    type(hympi_domain), intent(in) :: domain
    type(hympi_field), intent(in) :: field
    real(c_double), intent(out) :: sum, l2
    integer, intent(out), optional :: status
    integer(c_int) :: rc
    sum = 0
    l2 = 0
    rc = c_checksum(domain%handle, field%handle, sum, l2)
    if (present(status)) status = rc
  end subroutine hympi_checksum

  ! Collective: the timed loop's summary as JSON on path (rank 0 writes; "-"
  ! is stdout; HYMPI_REPORT_JSON replaces it), read by hympi-lab study --app.
  ! fields: their checksums (sum, l2) go in the report, each under its name
  ! in field_names (one per field; absent: field1, field2, ...), so that the
  ! study checks that every scheme computed the same fields. compiler, flags:
  ! the program's own build, recorded beside hympi's. Pass
  ! compiler_version() and compiler_options() (iso_fortran_env) from the
  ! program: they describe the unit they are written in, so called here
  ! they would describe hympi's module, not the program.
  subroutine hympi_report_json(domain, path, name, status, fields, field_names, compiler, flags)
    type(hympi_domain), intent(in) :: domain
    character(len=*), intent(in) :: path, name
    integer, intent(out) :: status
    type(hympi_field), intent(in), optional :: fields(:)
    character(len=*), intent(in), optional :: field_names(:)
    character(len=*), intent(in), optional :: compiler, flags
    character(len=:), allocatable :: text_compiler, text_flags
    if (present(compiler) .or. present(flags)) then
      text_compiler = ""
      text_flags = ""
      if (present(compiler)) text_compiler = trim(compiler)
      if (present(flags)) text_flags = trim(flags)
      status = c_report_build(domain%handle, text_compiler // c_null_char, text_flags // c_null_char)
      if (status /= HYMPI_SUCCESS) return
    end if
    if (.not. present(fields) .and. .not. present(field_names)) then
      status = c_report_json(domain%handle, trim(path) // c_null_char, trim(name) // c_null_char)
      return
    end if
    status = report_json_fields(domain, path, name, fields, field_names)
  end subroutine hympi_report_json

  ! hympi_report_json_fields from Fortran arrays. A count of names that is
  ! not the count of fields is padded with null pointers on the shorter
  ! side, which the C call refuses with a message naming the missing one.
  integer function report_json_fields(domain, path, name, fields, field_names) result(status)
    type(hympi_domain), intent(in) :: domain
    character(len=*), intent(in) :: path, name
    type(hympi_field), intent(in), optional :: fields(:)
    character(len=*), intent(in), optional :: field_names(:)
    character(kind=c_char), allocatable, target :: chars(:)
    type(c_ptr), allocatable :: handles(:)
    type(c_ptr), allocatable, target :: names(:)
    type(c_ptr) :: name_list
    integer :: n_fields, n_names, n, i, j, at, width
    n_fields = 0
    n_names = 0
    if (present(fields)) n_fields = size(fields)
    if (present(field_names)) n_names = size(field_names)
    n = max(n_fields, n_names)
    allocate(handles(max(1, n)), names(max(1, n)))
    handles = c_null_ptr
    names = c_null_ptr
    do i = 1, n_fields
      handles(i) = fields(i)%handle
    end do
    width = 1
    if (n_names > 0) width = len(field_names) + 1
    allocate(chars(max(1, n_names * width)))
    do i = 1, n_names
      at = (i - 1) * width
      do j = 1, len_trim(field_names(i))
        chars(at + j) = field_names(i)(j:j)
      end do
      chars(at + len_trim(field_names(i)) + 1) = c_null_char
      names(i) = c_loc(chars(at + 1))
    end do
    name_list = c_null_ptr  ! no names: field1, field2, ...
    if (n_names > 0) name_list = c_loc(names)
    status = c_report_json_fields(domain%handle, trim(path) // c_null_char, &
                                  trim(name) // c_null_char, int(n, c_int), handles, name_list)
  end function report_json_fields

  ! The message of the last error on this thread ("" when none).
  function hympi_last_error() result(message)
    character(len=:), allocatable :: message
    message = from_c_string(c_last_error())
  end function hympi_last_error

  ! The registered scheme names, joined by ", ".
  function hympi_scheme_names() result(names)
    character(len=:), allocatable :: names
    names = from_c_string(c_scheme_names())
  end function hympi_scheme_names

end module hympi
