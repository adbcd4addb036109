! The Fortran module hympi_io: global(NX, NY, NZ) in Fortran's order is the
! file's (rank 0 reads the raw file with stream access and compares);
! gather to rank 0, scatter back, write and read back bit for bit; and its
! errors on every rank alike: a misshapen global array on the root, a
! missing file, an unwritable path. Prints "N passed, M failed" from rank 0.
program test_fortran_field_io
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use hympi
  use hympi_io
  implicit none
  integer, parameter :: nx = 9, ny = 8, nz = 7
  character(len=*), parameter :: path = "test_fortran_field_io.raw"
  type(hympi_domain) :: d
  type(hympi_field) :: f, g
  real(c_double), pointer, contiguous :: u(:, :, :), v(:, :, :)
  real(c_double), allocatable, target :: global(:, :, :), from_file(:, :, :), wrong(:, :, :)
  integer :: provided, rank, nranks, status, n(3), offset(3), grid(3), i, j, k, unit, passed, failed
  character(len=:), allocatable :: msg
  real(c_double) :: table(nx, ny, nz)

  passed = 0
  failed = 0
  call MPI_Init_thread(MPI_THREAD_FUNNELED, provided)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  call make_table()
  call hympi_domain_create(d, MPI_COMM_WORLD, [nx, ny, nz], "", 1, status)
  call check(status == HYMPI_SUCCESS, "a domain")
  call hympi_domain_grid(d, grid, status)
  call check(status == HYMPI_SUCCESS .and. all(grid == [nx, ny, nz]), "hympi_domain_grid")
  call hympi_domain_local(d, n, offset)
  call hympi_field_create(d, f, status)
  call hympi_field_create(d, g, status)
  call hympi_field_pointer(d, f, u)
  call hympi_field_pointer(d, g, v)
  do k = 1, n(3)
    do j = 1, n(2)
      do i = 1, n(1)
        u(i, j, k) = reference(offset(1) + i, offset(2) + j, offset(3) + k, 1.0_c_double)
      end do
    end do
  end do
  allocate(global(nx, ny, nz), wrong(nx, ny, nz + 1))
  global = 0
  wrong = 0

  call hympi_field_gather(d, f, 0, status, global)
  call check(status == HYMPI_SUCCESS .and. (rank /= 0 .or. holds(global, 1.0_c_double)), "gather to rank 0")
  global = 2 * global
  call hympi_field_scatter(d, g, 0, status, global)
  call check(status == HYMPI_SUCCESS .and. all(v(1:n(1), 1:n(2), 1:n(3)) == 2 * u(1:n(1), 1:n(2), 1:n(3))), &
             "scatter from rank 0")

  call hympi_field_write(d, f, path, "u", status)
  call check(status == HYMPI_SUCCESS, "a write")
  allocate(from_file(nx, ny, nz))
  from_file = reference(1, 1, 1, 1.0_c_double)  ! the other ranks check nothing
  if (rank == 0) then  ! the file's order is Fortran's global(i, j, k)
    open(newunit=unit, file=path, access="stream", form="unformatted", status="old")
    read(unit) from_file
    close(unit)
  end if
  call check(rank /= 0 .or. holds(from_file, 1.0_c_double), "the raw file is global(nx, ny, nz)")
  v = 0
  call hympi_field_read(d, g, path, status)
  call check(status == HYMPI_SUCCESS .and. all(v(1:n(1), 1:n(2), 1:n(3)) == u(1:n(1), 1:n(2), 1:n(3))), &
             "read back bit for bit")

  call hympi_field_gather(d, f, 0, status, wrong)
  msg = hympi_last_error()
  call check(status == HYMPI_ERR_USAGE .and. index(msg, "is null") > 0, "a misshapen global array on the root")
  call hympi_field_gather(d, f, 0, status)
  call check(status == HYMPI_ERR_USAGE, "no global array on the root")
  call hympi_field_read(d, g, "no-such-file.raw", status)
  msg = hympi_last_error()
  call check(status == HYMPI_ERR_USAGE .and. index(msg, "No such file") > 0, "a missing file")
  call hympi_field_write(d, f, "/nonexistent-dir/u.raw", "u", status)
  msg = hympi_last_error()
  call check(status == HYMPI_ERR_OUTPUT .and. index(msg, "cannot write /nonexistent-dir/u.raw") > 0, &
             "an unwritable path")

  call hympi_field_free(f)
  call hympi_field_free(g)
  call hympi_domain_free(d)
  if (rank == 0) then
    call remove_file(path)
    call remove_file(path // ".json")
    call remove_file(path // ".xmf")
    print '(i0, " passed, ", i0, " failed")', passed, failed
  end if
  call MPI_Finalize()
  if (failed > 0) error stop 1

contains

  ! The reference at 1-based global indices, from one table computed once:
  ! the same expression compiled at two places may round differently
  ! (fused multiply-adds where gfortran inlines it).
  real(c_double) function reference(i, j, k, scale)
    integer, intent(in) :: i, j, k
    real(c_double), intent(in) :: scale
    reference = scale * table(i, j, k)
  end function reference

  subroutine make_table()
    integer :: i, j, k
    do k = 1, nz
      do j = 1, ny
        do i = 1, nx
          table(i, j, k) = cos(0.3_c_double * i - 0.05_c_double * j * k) + i * 1e-7_c_double + k
        end do
      end do
    end do
  end subroutine make_table

  logical function holds(a, scale)
    real(c_double), intent(in) :: a(:, :, :)
    real(c_double), intent(in) :: scale
    integer :: i, j, k
    holds = .true.
    do k = 1, nz
      do j = 1, ny
        do i = 1, nx
          holds = holds .and. a(i, j, k) == reference(i, j, k, scale)
        end do
      end do
    end do
  end function holds

  ! A failure anywhere fails every rank's count alike.
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    logical :: all_ok
    call MPI_Allreduce(ok, all_ok, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD)
    if (all_ok) then
      passed = passed + 1
    else
      failed = failed + 1
      if (.not. ok) print '("FAIL rank ", i0, ": ", a, " (", a, ")")', rank, what, hympi_last_error()
    end if
  end subroutine check

  subroutine remove_file(name)
    character(len=*), intent(in) :: name
    integer :: unit, ios
    open(newunit=unit, file=name, status="old", iostat=ios)
    if (ios == 0) close(unit, status="delete")
  end subroutine remove_file
end program test_fortran_field_io
