! The explicit heat equation in Fortran 2008 under any hympi scheme, chosen at
! run time (the same problem as heat.c):
!   u' = u + nu (S(u) - 6 u),  nu = 1/8,  zero outside (or periodic),
! initial field ((7i + 13j + 29k) mod 17) / 16 - 0.5 on zero-based global
! indices. The update gets the two arrays as assumed-shape dummies indexed
! from the halo: u(1-h:n1+h, 1-h:n2+h, 1-h:n3+h) with the rank's own points
! at 1..n (h = 1, or the halo depth), and so is the box it gets
! (inclusive): no module variables, and the loop the compiler vectorises.
! No !$omp here: hympi owns the threads.
!
!   mpirun -n 4 ./heat_f --scheme funneled --threads 3 --grid 64 --steps 20
!
! Options: --grid N | NXxNYxNZ | NX NY NZ (default 32), --steps N (10),
! --scheme NAME (masteronly), --threads N (1), --reserved M, --periodic,
! --halo-depth H (temporal blocking: H steps per halo exchange through
! hympi_sweep_block_arrays, default 1; the wavefront's tile height is chosen
! by hympi_tune_block_arrays before the clock starts), --report PATH (the JSON summary for
! hympi-lab study --app). Prints the checksum of the final field (sum and l2
! norm) from rank 0; every halo depth prints depth 1's, to the last bit.
module heat_kernel
  use, intrinsic :: iso_c_binding
  implicit none
  real(c_double), parameter :: nu = 0.125_c_double
contains
  ! One box: reads u (halos included), writes u_new, on the box's points
  ! lo..hi (inclusive, the arrays' own indices; in a sweep block the box may
  ! reach into the halo). The interface hympi_array_update: plain
  ! assumed-shape dummies, so the compiler may assume they do not overlap
  ! and vectorises. recursive: hympi's threads call it at once.
  recursive integer function heat_update(box, h, u, u_new, thread)
    use hympi, only: hympi_box
    type(hympi_box), intent(in) :: box
    integer, intent(in) :: h
    real(c_double), contiguous, intent(in) :: u(1 - h:, 1 - h:, 1 - h:)
    real(c_double), contiguous, intent(inout) :: u_new(1 - h:, 1 - h:, 1 - h:)
    integer, intent(in) :: thread
    integer :: i, j, k
    do k = box%lo(3), box%hi(3)
      do j = box%lo(2), box%hi(2)
        do i = box%lo(1), box%hi(1)
          u_new(i, j, k) = u(i, j, k) + nu * (u(i - 1, j, k) + u(i + 1, j, k) + u(i, j - 1, k) + &
                           u(i, j + 1, k) + u(i, j, k - 1) + u(i, j, k + 1) - 6 * u(i, j, k))
        end do
      end do
    end do
    heat_update = 0
  end function heat_update
end module heat_kernel

program heat
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: compiler_version, compiler_options
  use mpi_f08
  use hympi
  use heat_kernel
  implicit none
  type(hympi_domain) :: domain
  type(hympi_field) :: fields(2)
  real(c_double), pointer, contiguous :: a(:, :, :), b(:, :, :)
  integer :: provided, rank, status, grid(3), steps, threads, reserved, n(3), offset(3)
  integer :: i, j, k, s, cur, arg, nargs, depth, block
  logical :: periodic, report_failed
  character(len=256) :: name, value, value2, value3, scheme, report
  real(c_double) :: total, l2

  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  grid = 32
  steps = 10
  threads = 1
  reserved = 0
  depth = 1
  periodic = .false.
  report_failed = .false.
  scheme = ""  ! "": pure MPI (masteronly)
  report = ""
  nargs = command_argument_count()
  arg = 1
  do while (arg <= nargs)
    call get_command_argument(arg, name)
    if (name == "--help" .or. name == "-h") then
      if (rank == 0) write (*, '(a)') "usage: heat_f " // usage_text() // &
          new_line("a") // "(options: see the comment at the top of examples/heat.f90)"
      call MPI_Finalize()
      stop
    end if
    if (name == "--periodic") then
      periodic = .true.
      arg = arg + 1
      cycle
    end if
    if (arg + 1 > nargs) call usage("missing value for " // trim(name))
    call get_command_argument(arg + 1, value)
    select case (trim(name))
    case ("--grid")
      ! N, NXxNYxNZ, or three numbers NX NY NZ.
      if (index(value, "x") > 0) then
        do while (index(value, "x") > 0)
          value(index(value, "x"):index(value, "x")) = " "
        end do
        read (value, *, iostat=status) grid
      else if (three_counts(arg + 1)) then
        call get_command_argument(arg + 2, value2)
        call get_command_argument(arg + 3, value3)
        read (value, *, iostat=status) grid(1)
        read (value2, *, iostat=status) grid(2)
        read (value3, *, iostat=status) grid(3)
        arg = arg + 2
      else
        read (value, *, iostat=status) grid(1)
        grid(2:3) = grid(1)
      end if
      if (status /= 0 .or. any(grid < 1)) call usage("bad value for --grid: " // trim(value))
    case ("--steps")
      read (value, *, iostat=status) steps
      if (status /= 0 .or. steps < 0) call usage("bad value for --steps: " // trim(value))
    case ("--threads")
      read (value, *, iostat=status) threads
      if (status /= 0 .or. threads < 1) call usage("bad value for --threads: " // trim(value))
    case ("--reserved")
      read (value, *, iostat=status) reserved
      if (status /= 0 .or. reserved < 0) call usage("bad value for --reserved: " // trim(value))
    case ("--halo-depth")
      read (value, *, iostat=status) depth
      if (status /= 0 .or. depth < 1 .or. depth > 64) &
          call usage("bad value for --halo-depth (1..64): " // trim(value))
    case ("--scheme")
      scheme = value
    case ("--report")
      report = value
    case default
      call usage("unknown option " // trim(name))
    end select
    arg = arg + 2
  end do

  call hympi_domain_create(domain, MPI_COMM_WORLD, grid, trim(scheme), threads, status, &
                           periodic=[periodic, periodic, periodic], reserved=reserved, &
                           depth=depth)
  if (status == HYMPI_ERR_USAGE) call usage(hympi_last_error())
  if (status /= HYMPI_SUCCESS) call die(hympi_last_error())
  call hympi_field_create(domain, fields(1), status)
  if (status /= HYMPI_SUCCESS) call die(hympi_last_error())
  call hympi_field_create(domain, fields(2), status)
  if (status /= HYMPI_SUCCESS) call die(hympi_last_error())
  call hympi_field_pointer(domain, fields(1), a)
  call hympi_field_pointer(domain, fields(2), b)
  call hympi_domain_local(domain, n, offset)
  if (depth > 1 .and. steps > 0) then
    ! Temporal blocking: the blocks that choose the wavefront's tile height
    ! run here, before the clock, so that the timed loop runs at its steady
    ! speed from the first block. They overwrite both fields: set below.
    call hympi_tune_block_arrays(domain, fields(1), fields(2), min(depth, steps), heat_update, status)
    if (status /= HYMPI_SUCCESS) call die(hympi_last_error())
  end if
  a = 0  ! the halo beyond a Dirichlet face: zero
  do k = 1, n(3)
    do j = 1, n(2)
      do i = 1, n(1)
        a(i, j, k) = real(mod(7 * (offset(1) + i - 1) + 13 * (offset(2) + j - 1) + &
                              29 * (offset(3) + k - 1), 17), c_double) / 16 - 0.5_c_double
      end do
    end do
  end do

  b = a
  cur = 1  ! fields(cur) holds the current step
  call hympi_start_clock(domain)
  if (depth > 1) then
    ! Up to depth steps per exchange; an odd block leaves the result in
    ! its second field (hympi never changes the handles).
    s = 0
    do while (s < steps)
      block = min(depth, steps - s)
      call hympi_sweep_block_arrays(domain, fields(cur), fields(3 - cur), block, heat_update, &
                                    status)
      if (status /= HYMPI_SUCCESS) call die(hympi_last_error())
      if (mod(block, 2) == 1) cur = 3 - cur
      s = s + block
    end do
  else
    do s = 1, steps
      call hympi_sweep_arrays(domain, fields(cur), fields(3 - cur), heat_update, status)
      if (status /= HYMPI_SUCCESS) call die(hympi_last_error())
      cur = 3 - cur
    end do
  end if
  call hympi_stop_clock(domain)

  call hympi_checksum(domain, fields(cur), total, l2)
  call get_environment_variable("HYMPI_REPORT_JSON", value)
  if (len_trim(report) > 0 .or. len_trim(value) > 0) then
    ! u's checksum by name (the study compares it between schemes), and
    ! this program's compiler and flags (the intrinsics describe the unit
    ! they are written in: here, this program).
    call hympi_report_json(domain, trim(report), "heat", status, fields=fields(cur:cur), &
                           field_names=["u"], compiler=compiler_version(), flags=compiler_options())
    report_failed = status /= HYMPI_SUCCESS
    if (report_failed .and. rank == 0) write (0, '(a)') "heat_f: " // hympi_last_error()
  end if
  ! 17 significant digits, like C's %.17g: the test compares to 1e-10.
  if (rank == 0) write (*, '(a, es24.16e3, a, es24.16e3)') "checksum sum ", total, " l2 ", l2
  call hympi_field_free(fields(1))
  call hympi_field_free(fields(2))
  call hympi_domain_free(domain)
  call MPI_Finalize()
  ! An unwritable report: the checksum still printed; exit code 4 (hympi
  ! solve's for output errors) on every rank (the call is collective).
  if (report_failed) stop 4, quiet=.true.

contains

  ! The options, for --help and the usage errors.
  function usage_text() result(text)
    character(len=:), allocatable :: text
    text = "[--grid N|NXxNYxNZ|NX NY NZ] [--steps N] [--scheme NAME] [--threads N]" // &
           " [--reserved M] [--periodic] [--halo-depth H] [--report PATH]"
  end function usage_text

  ! Whether arguments a, a+1 and a+2 exist and are plain numbers (--grid NX NY NZ).
  logical function three_counts(a)
    integer, intent(in) :: a
    three_counts = .false.
    if (a + 2 > nargs) return
    if (.not. is_count(a)) return
    if (.not. is_count(a + 1)) return
    three_counts = is_count(a + 2)
  end function three_counts

  ! Whether command argument a is a plain number.
  logical function is_count(a)
    integer, intent(in) :: a
    character(len=64) :: text
    integer :: v, rc
    call get_command_argument(a, text)
    is_count = verify(trim(text), "0123456789") == 0 .and. len_trim(text) > 0
    if (is_count) then
      read (text, *, iostat=rc) v
      is_count = rc == 0
    end if
  end function is_count

  ! Bad input: one line on rank 0, exit code 2 on every rank.
  subroutine usage(message)
    character(len=*), intent(in) :: message
    if (rank == 0) write (0, '(a)') "heat_f: " // message // " (usage: heat_f " // usage_text() // ")"
    call MPI_Finalize()
    stop 2, quiet=.true.  ! F2018, in gfortran: no "STOP 2" line
  end subroutine usage

  subroutine die(message)
    character(len=*), intent(in) :: message
    write (0, '(a)') "heat_f: " // message
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end subroutine die

end program heat
