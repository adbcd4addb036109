! 3-D heat equation, explicit Euler (Jacobi update), MPI + OpenMP.
! The domain is split into slabs along z, one slab per rank; the two
! z faces are exchanged with MPI_Sendrecv every step. The bottom face
! (z = 0) is held at 1, the other faces at 0 (Dirichlet).
!
!   mpirun -np 4 ./heat_orig 64 64 64 100      (NX NY NZ STEPS)
program heat_orig
  use mpi
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  real(dp), parameter :: nu = 0.125_dp
  real(dp), allocatable :: u(:, :, :), unew(:, :, :), tmp(:, :, :)
  integer :: nx, ny, nz, nsteps, nzl, z0, rest, plane
  integer :: ierr, provided, rank, nprocs, up, down, step, i, j, k
  real(dp) :: local(2), total(2), t0, t1
  character(len=32) :: arg

  call MPI_Init_thread(MPI_THREAD_FUNNELED, provided, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  if (provided < MPI_THREAD_FUNNELED) then
    if (rank == 0) print *, 'MPI does not provide MPI_THREAD_FUNNELED'
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if

  nx = 64; ny = 64; nz = 64; nsteps = 100
  if (command_argument_count() >= 4) then
    call get_command_argument(1, arg); read (arg, *) nx
    call get_command_argument(2, arg); read (arg, *) ny
    call get_command_argument(3, arg); read (arg, *) nz
    call get_command_argument(4, arg); read (arg, *) nsteps
  end if
  if (nz < nprocs) then
    if (rank == 0) print *, 'need at least one z plane per rank'
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if

  ! z slabs: the first mod(nz, nprocs) ranks get one plane more.
  nzl = nz / nprocs
  rest = mod(nz, nprocs)
  if (rank < rest) then
    nzl = nzl + 1
    z0 = rank * nzl
  else
    z0 = rest * (nzl + 1) + (rank - rest) * nzl
  end if
  up = rank + 1
  down = rank - 1
  if (up == nprocs) up = MPI_PROC_NULL
  if (down < 0) down = MPI_PROC_NULL

  allocate(u(0:nx + 1, 0:ny + 1, 0:nzl + 1), unew(0:nx + 1, 0:ny + 1, 0:nzl + 1))
  u = 0
  unew = 0
  do k = 1, nzl
    do j = 1, ny
      do i = 1, nx
        u(i, j, k) = real(mod(7 * (i - 1) + 13 * (j - 1) + 29 * (z0 + k - 1), 17), dp) / 16
      end do
    end do
  end do
  if (rank == 0) then
    u(:, :, 0) = 1
    unew(:, :, 0) = 1
  end if
  plane = (nx + 2) * (ny + 2)

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  t0 = MPI_Wtime()
  do step = 1, nsteps
    call MPI_Sendrecv(u(0, 0, nzl), plane, MPI_DOUBLE_PRECISION, up, 1, &
                      u(0, 0, 0), plane, MPI_DOUBLE_PRECISION, down, 1, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Sendrecv(u(0, 0, 1), plane, MPI_DOUBLE_PRECISION, down, 2, &
                      u(0, 0, nzl + 1), plane, MPI_DOUBLE_PRECISION, up, 2, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    !$omp parallel do collapse(2) private(i)
    do k = 1, nzl
      do j = 1, ny
        do i = 1, nx
          unew(i, j, k) = u(i, j, k) + nu * (u(i - 1, j, k) + u(i + 1, j, k) + u(i, j - 1, k) + &
                          u(i, j + 1, k) + u(i, j, k - 1) + u(i, j, k + 1) - 6 * u(i, j, k))
        end do
      end do
    end do
    !$omp end parallel do
    call move_alloc(u, tmp)
    call move_alloc(unew, u)
    call move_alloc(tmp, unew)
  end do
  t1 = MPI_Wtime()

  local(1) = sum(u(1:nx, 1:ny, 1:nzl))
  local(2) = sum(u(1:nx, 1:ny, 1:nzl)**2)
  call MPI_Reduce(local, total, 2, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    write (*, '(a, es19.11e3, a, es19.11e3)') 'sum ', total(1), '  l2 ', sqrt(total(2))
    write (*, '(a, f10.4, a)') 'time per step ', (t1 - t0) / max(nsteps, 1) * 1000, ' ms'
  end if
  deallocate(u, unew)
  call MPI_Finalize(ierr)
end program heat_orig
