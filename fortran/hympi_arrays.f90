! The array form of hympi's Fortran sweeps (re-exported by `use hympi`):
! the update gets the field arrays as assumed-shape dummies indexed from the
! halo, u(1-h:, 1-h:, 1-h:) with the rank's own points at 1..n, and the box
! in the same indices, inclusive. So its state needs no module variables,
! and its loop is the fast one: the compiler may assume that the two dummies
! do not overlap and have unit stride, and vectorises it (pointer dummies
! or module pointers it must assume may alias).
!
!   recursive integer function update(box, h, u_in, u_out, thread)
!     type(hympi_box), intent(in) :: box
!     integer, intent(in) :: h
!     real(c_double), contiguous, intent(in) :: u_in(1 - h:, 1 - h:, 1 - h:)
!     real(c_double), contiguous, intent(inout) :: u_out(1 - h:, 1 - h:, 1 - h:)
!     integer, intent(in) :: thread
!
! The handles passed in are never changed (intent(in)): after a block of s
! sweeps the result is in u_out when s is odd and in u_in when s is even,
! as in a loop of single sweeps; pointers from hympi_field_pointer stay
! bound to their fields.
module hympi_arrays
  use, intrinsic :: iso_c_binding
  use hympi_c
  implicit none
  private
  public :: hympi_array_update, hympi_sweep_arrays, hympi_sweep_block_arrays
  public :: hympi_tune_block_arrays

  ! The update of one box: u_out's points of the box from u_in (halos
  ! included). h: the halo width of the arrays (hympi_domain_halo: halo x
  ! depth). thread: 0..threads-1. Returns 0, or non-zero to fail the sweep
  ! (then, by default, one line naming the box in these indices and every
  ! rank stopped; with on_error = HYMPI_ON_ERROR_RETURN, HYMPI_ERR_KERNEL).
  abstract interface
    recursive integer function hympi_array_update(box, h, u_in, u_out, thread)
      import :: c_double, hympi_box
      type(hympi_box), intent(in) :: box
      integer, intent(in) :: h
      real(c_double), contiguous, intent(in) :: u_in(1 - h:, 1 - h:, 1 - h:)
      real(c_double), contiguous, intent(inout) :: u_out(1 - h:, 1 - h:, 1 - h:)
      integer, intent(in) :: thread
    end function hympi_array_update
  end interface

  ! What the trampolines need: the update, the arrays' shape and (for the
  ! one-sweep form, whose C callback gets no arrays) the two arrays. One
  ! per call, on the caller's stack; the threads only read it.
  type :: array_context
    procedure(hympi_array_update), pointer, nopass :: update => null()
    type(c_ptr) :: in = c_null_ptr, out = c_null_ptr
    integer :: n(3) = 0, h = 0
  end type array_context

contains

  ! One sweep: exchange u_in's halo, then update(box, h, u_in, u_out,
  ! thread) on boxes covering every local point once. Collective. u_in and
  ! u_out must be two live fields of domain.
  subroutine hympi_sweep_arrays(domain, u_in, u_out, update, status)
    type(hympi_domain), intent(in) :: domain
    type(hympi_field), intent(in) :: u_in, u_out
    procedure(hympi_array_update) :: update
    integer, intent(out) :: status
    type(array_context), target :: ctx
    if (.not. prepared(ctx, "hympi_sweep_arrays", domain, u_in, u_out, status)) return
    ctx%update => update
    status = c_sweep(domain%handle, 1_c_int, [u_in%handle], c_funloc(sweep_trampoline), &
                     c_loc(ctx))
  end subroutine hympi_sweep_arrays

  ! Temporal blocking: sweeps (1..depth) sweeps of u_out = F(u_in) with one
  ! halo exchange, ping-ponging between the two arrays (hympi.h's
  ! hympi_sweep_block says how they run and what the update must be: a star
  ! stencil of reach <= halo, computing a point the same way wherever it
  ! lies; its boxes may reach into the halo, indices below 1 or above n).
  ! The result is in u_out after an odd number of sweeps, in u_in after an
  ! even one; the handles are not changed. Collective.
  subroutine hympi_sweep_block_arrays(domain, u_in, u_out, sweeps, update, status)
    type(hympi_domain), intent(in) :: domain
    type(hympi_field), intent(in) :: u_in, u_out
    integer, intent(in) :: sweeps
    procedure(hympi_array_update) :: update
    integer, intent(out) :: status
    type(array_context), target :: ctx
    type(c_ptr) :: a, b  ! C swaps these, not the caller's handles
    if (.not. prepared(ctx, "hympi_sweep_block_arrays", domain, u_in, u_out, status)) return
    ctx%update => update
    a = u_in%handle
    b = u_out%handle
    status = c_sweep_block(domain%handle, a, b, int(sweeps, c_int), c_funloc(block_trampoline), &
                           c_loc(ctx))
  end subroutine hympi_sweep_block_arrays

  ! Temporal blocking, before hympi_start_clock: blocks of sweeps sweeps of
  ! update (as hympi_sweep_block_arrays) until every rank has chosen its
  ! wavefront tile height for that block (hympi.h's hympi_tune_block), so
  ! that the timed loop runs at steady speed from its first block. Both
  ! arrays are overwritten, halos included: initialise them after. blocks:
  ! the blocks run (0 when the shape was tuned before). Collective.
  subroutine hympi_tune_block_arrays(domain, u_in, u_out, sweeps, update, status, blocks)
    type(hympi_domain), intent(in) :: domain
    type(hympi_field), intent(in) :: u_in, u_out
    integer, intent(in) :: sweeps
    procedure(hympi_array_update) :: update
    integer, intent(out) :: status
    integer, intent(out), optional :: blocks
    type(array_context), target :: ctx
    type(c_ptr) :: a, b
    integer(c_int) :: run
    if (.not. prepared(ctx, "hympi_tune_block_arrays", domain, u_in, u_out, status)) return
    ctx%update => update
    a = u_in%handle
    b = u_out%handle
    run = 0
    status = c_tune_block(domain%handle, a, b, int(sweeps, c_int), c_funloc(block_trampoline), &
                          c_loc(ctx), run)
    if (present(blocks)) blocks = int(run)
  end subroutine hympi_tune_block_arrays

  ! Fills ctx's arrays and shape; false with status and message when the
  ! handles are not two distinct live fields of domain.
  logical function prepared(ctx, call, domain, u_in, u_out, status)
    type(array_context), intent(inout) :: ctx
    character(len=*), intent(in) :: call
    type(hympi_domain), intent(in) :: domain
    type(hympi_field), intent(in) :: u_in, u_out
    integer, intent(out) :: status
    integer(c_int) :: n(3), offset(3), h
    integer(c_intptr_t) :: sj, sk
    integer(c_size_t) :: count
    prepared = .false.
    status = c_field_of(call // c_null_char, domain%handle, u_in%handle, ctx%in)
    if (status /= HYMPI_SUCCESS) return
    status = c_field_of(call // c_null_char, domain%handle, u_out%handle, ctx%out)
    if (status /= HYMPI_SUCCESS) return
    if (c_associated(ctx%in, ctx%out)) then
      ! The update's dummies may not alias (u_in is intent(in)).
      call set_error(status, HYMPI_ERR_USAGE, call // ": u_in and u_out are the same field " // &
                     "(the update reads one array and writes the other)")
      return
    end if
    status = c_local(domain%handle, n, offset)
    if (status == HYMPI_SUCCESS) status = c_layout(domain%handle, h, sj, sk, count)
    if (status /= HYMPI_SUCCESS) return
    ctx%n = n
    ctx%h = h
    prepared = .true.
  end function prepared

  ! The arrays over the two pointers, bounds (1:n+2h) here and (1-h:) in
  ! the update's dummies; the box in Fortran's indices.
  recursive integer function call_update(ctx, in, out, box, thread)
    type(array_context), intent(in) :: ctx
    type(c_ptr), intent(in) :: in, out
    type(c_box), intent(in) :: box
    integer, intent(in) :: thread
    real(c_double), pointer, contiguous :: a(:, :, :), b(:, :, :)
    call c_f_pointer(in, a, ctx%n + 2 * ctx%h)
    call c_f_pointer(out, b, ctx%n + 2 * ctx%h)
    call_update = ctx%update(fortran_box(box), ctx%h, a, b, thread)
  end function call_update

  ! C calls this for every box of hympi_sweep_arrays. recursive: threads
  ! run it at once.
  recursive integer(c_int) function sweep_trampoline(box, thread, context, partial) bind(C)
    type(c_box), intent(in) :: box
    integer(c_int), value :: thread
    type(c_ptr), value :: context
    real(c_double), intent(inout) :: partial
    type(array_context), pointer :: ctx
    call c_f_pointer(context, ctx)
    sweep_trampoline = int(call_update(ctx, ctx%in, ctx%out, box, int(thread)), c_int)
  end function sweep_trampoline

  ! C calls this for every box of hympi_sweep_block_arrays, with the two
  ! arrays of that sweep.
  recursive integer(c_int) function block_trampoline(in, out, box, thread, context) bind(C)
    type(c_ptr), value :: in, out
    type(c_box), intent(in) :: box
    integer(c_int), value :: thread
    type(c_ptr), value :: context
    type(array_context), pointer :: ctx
    call c_f_pointer(context, ctx)
    block_trampoline = int(call_update(ctx, in, out, box, int(thread)), c_int)
  end function block_trampoline

end module hympi_arrays
