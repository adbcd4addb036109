! The Fortran module's proc_grid=, ranks_per_node=, rank_order= and
! hympi_domain_boundaries: a forced process grid is the one used (every
! rank's box is the uneven split's box of a distinct grid position), the
! boundary flags are exactly the faces on the global grid's edge along
! non-periodic axes (slab and 2-D grids, periodic and not), and a grid whose
! product is not the rank count is refused on every rank. Runs at any rank
! count; prints "N passed, M failed" from rank 0.
program test_fortran_boundaries
  use mpi_f08
  use hympi
  implicit none
  integer :: provided, rank, size, status, passed, failed, counts(2)
  character(len=:), allocatable :: msg
  character(len=120) :: expected
  type(hympi_domain) :: bad

  passed = 0
  failed = 0
  call MPI_Init_thread(MPI_THREAD_FUNNELED, provided)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)

  call grid_case([size, 1, 1], [.false., .false., .false.])
  call grid_case([size, 1, 1], [.true., .true., .true.])
  call grid_case([1, size, 1], [.false., .true., .false.])
  if (mod(size, 2) == 0) then
    call grid_case([2, size / 2, 1], [.false., .false., .false.])
    call grid_case([2, size / 2, 1], [.true., .false., .true.])
  end if

  call hympi_domain_create(bad, MPI_COMM_WORLD, [12, 10, 9], "", 1, status, &
                           proc_grid=[size + 1, 1, 1])
  msg = hympi_last_error()
  write (expected, '(a, i0, a, i0, a, i0, a)') "`proc_grid` ", size + 1, "x1x1 has ", size + 1, &
      " processes, but there are ", size, " ranks"
  call check("a grid of another rank count is refused", status == HYMPI_ERR_USAGE .and. &
             index(msg, trim(expected)) > 0)
  call hympi_domain_create(bad, MPI_COMM_WORLD, [12, 10, 9], "", 1, status, rank_order=5)
  msg = hympi_last_error()
  call check("a bad rank order is refused", status == HYMPI_ERR_USAGE .and. &
             index(msg, "rank_order must be") > 0)

  counts = [passed, failed]
  call MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) print '(i0, a, i0, a)', counts(1), " passed, ", counts(2), " failed"
  call MPI_Finalize()
  if (counts(2) /= 0) error stop 1

contains

  ! A 12x10x9 domain on process grid dims, with virtual nodes of one rank in
  ! round-robin order (the same placement: one rank per node).
  subroutine grid_case(dims, periodic)
    integer, intent(in) :: dims(3)
    logical, intent(in) :: periodic(3)
    integer, parameter :: grid(3) = [12, 10, 9]
    type(hympi_domain) :: d
    integer :: n(3), offset(3), at(3), a, mine
    integer, allocatable :: positions(:)
    logical :: boundary(6), expected(6)
    character(len=80) :: label
    write (label, '(a, 3(i0, 1x), a, 3l1)') "proc_grid ", dims, "periodic ", periodic
    call hympi_domain_create(d, MPI_COMM_WORLD, grid, "", 1, status, periodic=periodic, &
                             ranks_per_node=1, proc_grid=dims, &
                             rank_order=HYMPI_RANK_ORDER_ROUND_ROBIN)
    call check(trim(label) // ": created", status == HYMPI_SUCCESS)
    if (status /= HYMPI_SUCCESS) return
    call hympi_domain_local(d, n, offset)
    do a = 1, 3
      at(a) = position_along(grid(a), dims(a), offset(a), n(a))
    end do
    call check(trim(label) // ": a box of the grid", all(at >= 0))
    mine = at(1) + dims(1) * (at(2) + dims(2) * at(3))
    allocate(positions(size))
    call MPI_Allgather(mine, 1, MPI_INTEGER, positions, 1, MPI_INTEGER, MPI_COMM_WORLD)
    call check(trim(label) // ": every position once", all_positions(positions))
    call hympi_domain_boundaries(d, boundary, status)
    do a = 1, 3
      expected(2 * a - 1) = .not. periodic(a) .and. offset(a) == 0
      expected(2 * a) = .not. periodic(a) .and. offset(a) + n(a) == grid(a)
    end do
    call check(trim(label) // ": boundaries", status == HYMPI_SUCCESS .and. &
               all(boundary .eqv. expected))
    call hympi_domain_free(d)
  end subroutine grid_case

  ! The zero-based p whose uneven split of points over parts is the box.
  integer function position_along(points, parts, offset, extent)
    integer, intent(in) :: points, parts, offset, extent
    integer :: p, base, extra
    base = points / parts
    extra = mod(points, parts)
    position_along = -1
    do p = 0, parts - 1
      if (offset == p * base + min(p, extra) .and. extent == base + merge(1, 0, p < extra)) &
          position_along = p
    end do
  end function position_along

  logical function all_positions(positions)
    integer, intent(in) :: positions(:)
    integer :: p
    all_positions = .true.
    do p = 0, size - 1
      if (count(positions == p) /= 1) all_positions = .false.
    end do
  end function all_positions

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
end program test_fortran_boundaries
