! heat_orig.f90 ported onto hympi: the same 3-D heat equation, the same
! numbers. hympi cuts the grid over the ranks (in 3-D, node-aware),
! exchanges the halos and runs the update on its threads under the scheme
! named on the command line; the update gets the arrays as plain
! assumed-shape dummies indexed from the halo (the fast loop form).
!
!   mpirun -np 4 ./heat_hympi 64 64 64 100 funneled report.json
!   (NX NY NZ STEPS [SCHEME [REPORT]]; threads: OMP_NUM_THREADS)
module heat_port_kernel
  use hympi, only: hympi_box
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  real(dp), parameter :: nu = 0.125_dp
contains
  recursive integer function update(box, h, u, unew, thread)
    type(hympi_box), intent(in) :: box
    integer, intent(in) :: h, thread
    real(dp), contiguous, intent(in) :: u(1 - h:, 1 - h:, 1 - h:)
    real(dp), contiguous, intent(inout) :: unew(1 - h:, 1 - h:, 1 - h:)
    integer :: i, j, k
    do k = box%lo(3), box%hi(3)
      do j = box%lo(2), box%hi(2)
        do i = box%lo(1), box%hi(1)
          unew(i, j, k) = u(i, j, k) + nu * (u(i - 1, j, k) + u(i + 1, j, k) + u(i, j - 1, k) + &
                          u(i, j + 1, k) + u(i, j, k - 1) + u(i, j, k + 1) - 6 * u(i, j, k))
        end do
      end do
    end do
    update = 0
  end function update
end module heat_port_kernel

program heat_hympi
  use mpi
  use omp_lib, only: omp_get_max_threads
  use hympi
  use heat_port_kernel
  implicit none
  type(hympi_domain) :: domain
  type(hympi_field) :: f(2)
  real(dp), pointer, contiguous :: u(:, :, :), unew(:, :, :)
  integer :: grid(3), nsteps, n(3), offset(3), cur, status
  integer :: ierr, provided, rank, step, i, j, k
  real(dp) :: total, l2, t0, t1
  character(len=256) :: arg, scheme, report

  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  grid = 64; nsteps = 100; scheme = 'masteronly'; report = ''
  if (command_argument_count() >= 4) then
    do i = 1, 3
      call get_command_argument(i, arg); read (arg, *) grid(i)
    end do
    call get_command_argument(4, arg); read (arg, *) nsteps
  end if
  if (command_argument_count() >= 5) call get_command_argument(5, scheme)
  if (command_argument_count() >= 6) call get_command_argument(6, report)

  call hympi_domain_create(domain, MPI_COMM_WORLD, grid, trim(scheme), omp_get_max_threads(), &
                           status)
  if (status == HYMPI_SUCCESS) call hympi_field_create(domain, f(1), status)
  if (status == HYMPI_SUCCESS) call hympi_field_create(domain, f(2), status)
  if (status /= HYMPI_SUCCESS) then
    if (rank == 0) print '(a)', hympi_last_error()
    call MPI_Finalize(ierr)
    stop 2
  end if
  call hympi_domain_local(domain, n, offset)
  call hympi_field_pointer(domain, f(1), u)
  call hympi_field_pointer(domain, f(2), unew)
  do k = 1, n(3)
    do j = 1, n(2)
      do i = 1, n(1)
        u(i, j, k) = real(mod(7 * (offset(1) + i - 1) + 13 * (offset(2) + j - 1) + &
                              29 * (offset(3) + k - 1), 17), dp) / 16
      end do
    end do
  end do
  ! hympi never writes the halo beyond a Dirichlet boundary: it keeps 1.
  if (offset(3) == 0) then
    u(:, :, 0) = 1
    unew(:, :, 0) = 1
  end if

  call hympi_start_clock(domain)  ! a barrier, as heat_orig's
  t0 = MPI_Wtime()
  cur = 1
  do step = 1, nsteps
    call hympi_sweep_arrays(domain, f(cur), f(3 - cur), update, status)
    if (status /= HYMPI_SUCCESS) call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    cur = 3 - cur
  end do
  t1 = MPI_Wtime()
  call hympi_stop_clock(domain)

  call hympi_checksum(domain, f(cur), total, l2)
  if (rank == 0) then
    write (*, '(a, es19.11e3, a, es19.11e3)') 'sum ', total, '  l2 ', l2
    write (*, '(a, f10.4, a)') 'time per step ', (t1 - t0) / max(nsteps, 1) * 1000, ' ms'
  end if
  ! The report: on the path given, or on HYMPI_REPORT_JSON's (hympi-lab study --app).
  call get_environment_variable('HYMPI_REPORT_JSON', arg)
  if (len_trim(report) > 0 .or. len_trim(arg) > 0) &
      call hympi_report_json(domain, trim(report), 'heat', status)
  call hympi_field_free(f(1))
  call hympi_field_free(f(2))
  call hympi_domain_free(domain)
  call MPI_Finalize(ierr)
end program heat_hympi
