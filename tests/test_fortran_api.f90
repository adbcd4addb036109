! The Fortran module's conventions and errors: boxes in 1-based inclusive
! indices inside 1..n that cover every point once (sums), a wrapped array of
! the wrong shape, halo 0, an unknown scheme, a failing callback under
! HYMPI_ON_ERROR_RETURN. Prints "N passed, M failed" from rank 0.
module fortran_api_checks
  use, intrinsic :: iso_c_binding
  implicit none
  integer :: n(3) = 0  ! this rank's box, for the callbacks' bounds check
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
  type(hympi_domain) :: d, bad
  type(hympi_field) :: f, w
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
             index(msg, "under scheme 'adaptive' on box [") > 0 .and. &
             index(msg, "the box callback returned 4") > 0)

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
