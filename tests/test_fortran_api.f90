! The Fortran module's conventions and errors: boxes in 1-based inclusive
! indices inside 1..n that cover every point once (sums), a wrapped array of
! the wrong shape, halo 0, an unknown scheme, an unknown stencil (and a box
! one accepted), a failing callback under
! HYMPI_ON_ERROR_RETURN (its box in Fortran's indices); hympi_sweep_block's
! arrays with the field's bounds (1-h, h counting the depth), boxes inside
! them, the handles swapped by an
! odd block, in == out and a failing pair callback. Prints "N passed, M
! failed" from rank 0.
module fortran_api_checks
  use, intrinsic :: iso_c_binding
  implicit none
  integer :: n(3) = 0  ! this rank's box, for the callbacks' bounds check
  integer :: depth_halo = 0  ! the deep domain's halo, for copy_pair's check
contains
  ! Adds the box's number of points; a box outside 1..n adds a huge value.
  recursive integer function count_points(box, thread, user, partial)
    use hympi, only: hympi_box
    type(hympi_box), intent(in) :: box
    integer, intent(in) :: thread
    type(c_ptr), intent(in) :: user
    real(c_double), intent(inout) :: partial
    if (any(box%lo < 1) .or. any(box%hi > n) .or. thread < 0) then
      partial = partial + 1.0e9_c_double
    else
      partial = partial + real(product(max(box%hi - box%lo + 1, 0)), c_double)
    end if
    count_points = 0
  end function count_points

  ! A pair update: u_out = u_in + 1 on the box; returns 6 when the arrays'
  ! bounds are not the field's or the box leaves them.
  recursive integer function copy_pair(u_in, u_out, box, thread, user)
    use hympi, only: hympi_box
    real(c_double), pointer, contiguous, intent(in) :: u_in(:, :, :), u_out(:, :, :)
    type(hympi_box), intent(in) :: box
    integer, intent(in) :: thread
    type(c_ptr), intent(in) :: user
    copy_pair = 0
    if (any(lbound(u_in) /= 1 - depth_halo) .or. any(ubound(u_out) /= n + depth_halo) .or. &
        any(box%lo < lbound(u_in)) .or. any(box%hi > ubound(u_in)) .or. thread < 0) then
      copy_pair = 6
      return
    end if
    u_out(box%lo(1):box%hi(1), box%lo(2):box%hi(2), box%lo(3):box%hi(3)) = &
        u_in(box%lo(1):box%hi(1), box%lo(2):box%hi(2), box%lo(3):box%hi(3)) + 1
  end function copy_pair

  recursive integer function fail_pair(u_in, u_out, box, thread, user)
    use hympi, only: hympi_box
    real(c_double), pointer, contiguous, intent(in) :: u_in(:, :, :), u_out(:, :, :)
    type(hympi_box), intent(in) :: box
    integer, intent(in) :: thread
    type(c_ptr), intent(in) :: user
    fail_pair = 8
  end function fail_pair

  recursive integer function fail(box, thread, user, partial)
    use hympi, only: hympi_box
    type(hympi_box), intent(in) :: box
    integer, intent(in) :: thread
    type(c_ptr), intent(in) :: user
    real(c_double), intent(inout) :: partial
    fail = 4
  end function fail
end module fortran_api_checks

program test_fortran_api
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use hympi
  use fortran_api_checks
  implicit none
  type(hympi_domain) :: d, bad, deep
  type(hympi_field) :: f, w, fa, fb
  type(c_ptr) :: a0, b0
  real(c_double), pointer, contiguous :: ua(:, :, :)
  real(c_double), allocatable, target :: wrong(:, :, :)
  real(c_double) :: total
  integer :: provided, rank, status, offset(3), passed, failed, counts(2)
  character(len=:), allocatable :: msg

  passed = 0
  failed = 0
  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)

  call hympi_domain_create(bad, MPI_COMM_WORLD, [8, 7, 6], "", 2, status, halo=0)
  msg = hympi_last_error()
  call check("halo 0", status == HYMPI_ERR_USAGE .and. index(msg, "halo") > 0)
  call hympi_domain_create(bad, MPI_COMM_WORLD, [8, 7, 6], "nosuch", 2, status)
  msg = hympi_last_error()
  call check("unknown scheme", status == HYMPI_ERR_USAGE .and. index(msg, "unknown scheme 'nosuch'") > 0)
  msg = hympi_scheme_names()
  call check("scheme names", index(msg, "masteronly") > 0)
  call hympi_domain_create(bad, MPI_COMM_WORLD, [8, 7, 6], "", 2, status, stencil=7)
  msg = hympi_last_error()
  call check("unknown stencil", status == HYMPI_ERR_USAGE .and. &
             index(msg, "`stencil` 7 is unknown: accepted 0 (star) or 1 (box)") > 0)
  call hympi_domain_create(bad, MPI_COMM_WORLD, [8, 7, 6], "", 2, status, stencil=HYMPI_STENCIL_BOX)
  call check("create with a box stencil", status == HYMPI_SUCCESS)
  call hympi_domain_free(bad)

  call hympi_domain_create(d, MPI_COMM_WORLD, [8, 7, 6], "adaptive", 2, status, &
                           periodic=[.true., .false., .false.], on_error=HYMPI_ON_ERROR_RETURN)
  call check("create", status == HYMPI_SUCCESS)
  call hympi_domain_local(d, n, offset)
  call check("threads", hympi_domain_threads(d) == 2)
  call hympi_field_create(d, f, status)
  call check("field", status == HYMPI_SUCCESS)
  call hympi_sweep_sum(d, [f], count_points, total, status)
  call check("sweep_sum: every point once, boxes in 1..n", &
             status == HYMPI_SUCCESS .and. abs(total - 8 * 7 * 6) < 0.5_c_double)
  call hympi_for_each(d, count_points, total, status)
  call check("for_each: every point once", status == HYMPI_SUCCESS .and. abs(total - 8 * 7 * 6) < 0.5_c_double)

  allocate(wrong(n(1) + 2, n(2) + 2, n(3) + 1))
  call hympi_field_wrap(d, wrong, w, status)
  call check("wrap of the wrong shape", status == HYMPI_ERR_USAGE)
  deallocate(wrong)
  allocate(wrong(0:n(1) + 1, 0:n(2) + 1, 0:n(3) + 1))
  call hympi_field_wrap(d, wrong, w, status)
  call check("wrap of the right shape", status == HYMPI_SUCCESS)

  call hympi_sweep(d, [f, w], fail, status)
  msg = hympi_last_error()
  call check("failing callback", status == HYMPI_ERR_KERNEL .and. &
             index(msg, "under scheme 'adaptive' on box (") > 0 .and. &
             index(msg, ") in local Fortran indices (rank ") > 0 .and. &
             index(msg, "the box callback returned 4") > 0)

  ! Temporal blocking: depth 2, halo 1.
  call hympi_domain_create(deep, MPI_COMM_WORLD, [8, 7, 6], "funneled", 2, status, &
                           on_error=HYMPI_ON_ERROR_RETURN, depth=2)
  call check("create with depth 2", status == HYMPI_SUCCESS)
  depth_halo = hympi_domain_halo(deep)
  call hympi_domain_local(deep, n, offset)  ! its own decomposition
  call check("the halo counts the depth", depth_halo == 2)
  call hympi_field_create(deep, fa, status)
  call hympi_field_create(deep, fb, status)
  a0 = fa%handle
  b0 = fb%handle
  ! Fields start at 0; each sweep adds 1.
  call hympi_sweep_block(deep, fa, fb, 2, copy_pair, status)
  call hympi_field_pointer(deep, fa, ua)
  call check("an even block: bounds and boxes right, handles kept, u_in holds 2 sweeps", &
             status == HYMPI_SUCCESS .and. c_associated(fa%handle, a0) .and. &
             c_associated(fb%handle, b0) .and. all(ua(1:n(1), 1:n(2), 1:n(3)) == 2))
  call hympi_sweep_block(deep, fa, fb, 1, copy_pair, status)
  call hympi_field_pointer(deep, fa, ua)
  call check("an odd block swaps the handles, u_in holds 3 sweeps", status == HYMPI_SUCCESS .and. &
             c_associated(fa%handle, b0) .and. c_associated(fb%handle, a0) .and. &
             all(ua(1:n(1), 1:n(2), 1:n(3)) == 3))
  call hympi_sweep_block(deep, fa, fb, 3, copy_pair, status)
  msg = hympi_last_error()
  call check("more sweeps than the depth", status == HYMPI_ERR_USAGE .and. &
             index(msg, "3 sweeps, but the domain's depth allows 1 to 2") > 0)
  call hympi_sweep_block(deep, fa, fa, 2, copy_pair, status)
  msg = hympi_last_error()
  call check("in == out", status == HYMPI_ERR_USAGE .and. index(msg, "the same field") > 0)
  call hympi_sweep_block(deep, fa, fb, 2, fail_pair, status)
  msg = hympi_last_error()
  call check("failing pair callback", status == HYMPI_ERR_KERNEL .and. &
             index(msg, "the box callback returned 8") > 0)
  call hympi_field_free(fa)
  call hympi_field_free(fb)
  call hympi_domain_free(deep)

  call hympi_field_free(w)
  call hympi_field_free(f)
  call hympi_domain_free(d, status)
  call check("free", status == HYMPI_SUCCESS)
  counts = [passed, failed]
  call MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) print '(i0, a, i0, a)', counts(1), " passed, ", counts(2), " failed"
  call MPI_Finalize()
  if (counts(2) /= 0) error stop 1

contains

  subroutine check(label, ok)
    character(len=*), intent(in) :: label
    logical, intent(in) :: ok
    if (ok) then
      passed = passed + 1
    else
      failed = failed + 1
      write (0, '(a, i0, a)') "FAIL (rank ", rank, "): " // label // "; last error: " // &
          hympi_last_error()
    end if
  end subroutine check
end program test_fortran_api
