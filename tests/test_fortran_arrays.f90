! The Fortran module from a `use mpi` program (integer communicators): the
! generic hympi_domain_create over MPI_COMM_WORLD and over a split
! communicator; live handles refused on create and left as they were; the
! array sweeps (hympi_sweep_arrays, hympi_sweep_block_arrays; hympi_tune_block_arrays'
! bad input) against the
! pointer forms (module pointers, hympi_sweep_block) and a serial reference,
! bit for bit; the handles the array block leaves alone; a failing update's
! message naming the box it got in Fortran's indices. Prints "N passed, M
! failed" from rank 0.
!   --abort: rank size-1's update fails under the default policy (every
!   rank stops, exit code 3); each failing call first prints the box it got
!   as "update failed on box (lo:hi, lo:hi, lo:hi)" (fortran_error_test.sh).
!   --time N STEPS: the time per step of the array form and of the module
!   pointer form on an N^3 grid, 3 rounds alternating, median and range
!   (the figure in docs/user-kernels.md).
module fortran_arrays_checks
  use, intrinsic :: iso_c_binding
  use hympi, only: hympi_box
  implicit none
  real(c_double), parameter :: nu = 0.125_c_double
  ! The pointer form's arrays (module pointers, as examples/heat.f90 had).
  real(c_double), pointer, contiguous :: pu(:, :, :) => null(), pu_new(:, :, :) => null()
  ! The boxes the failing update got, per thread (0..15).
  integer :: failed_lo(3, 0:15) = -99, failed_hi(3, 0:15) = -99
contains
  ! The heat step of examples/heat.f90 in the array form.
  recursive integer function heat_arrays(box, h, u, u_new, thread)
    type(hympi_box), intent(in) :: box
    integer, intent(in) :: h
    real(c_double), contiguous, intent(in) :: u(1 - h:, 1 - h:, 1 - h:)
    real(c_double), contiguous, intent(inout) :: u_new(1 - h:, 1 - h:, 1 - h:)
    integer, intent(in) :: thread
    integer :: i, j, k
    heat_arrays = 0
    if (thread < 0 .or. any(box%lo < lbound(u)) .or. any(box%hi > ubound(u))) then
      heat_arrays = 5
      return
    end if
    do k = box%lo(3), box%hi(3)
      do j = box%lo(2), box%hi(2)
        do i = box%lo(1), box%hi(1)
          u_new(i, j, k) = u(i, j, k) + nu * (u(i - 1, j, k) + u(i + 1, j, k) + u(i, j - 1, k) + &
                           u(i, j + 1, k) + u(i, j, k - 1) + u(i, j, k + 1) - 6 * u(i, j, k))
        end do
      end do
    end do
  end function heat_arrays

  ! The same step through the module pointers (hympi_box_callback).
  recursive integer function heat_pointers(box, thread, user, partial)
    type(hympi_box), intent(in) :: box
    integer, intent(in) :: thread
    type(c_ptr), intent(in) :: user
    real(c_double), intent(inout) :: partial
    integer :: i, j, k
    do k = box%lo(3), box%hi(3)
      do j = box%lo(2), box%hi(2)
        do i = box%lo(1), box%hi(1)
          pu_new(i, j, k) = pu(i, j, k) + nu * (pu(i - 1, j, k) + pu(i + 1, j, k) + &
                            pu(i, j - 1, k) + pu(i, j + 1, k) + pu(i, j, k - 1) + &
                            pu(i, j, k + 1) - 6 * pu(i, j, k))
        end do
      end do
    end do
    heat_pointers = 0
  end function heat_pointers

  ! The same step as hympi_sweep_block's pointer callback.
  recursive integer function heat_pair(u_in, u_out, box, thread, user)
    real(c_double), pointer, contiguous, intent(in) :: u_in(:, :, :), u_out(:, :, :)
    type(hympi_box), intent(in) :: box
    integer, intent(in) :: thread
    type(c_ptr), intent(in) :: user
    heat_pair = heat_arrays(box, 1 - lbound(u_in, 1), u_in, u_out, thread)
  end function heat_pair

  ! Fails every box with 7 after noting (and, when asked, printing) it.
  recursive integer function fail_arrays(box, h, u, u_new, thread)
    type(hympi_box), intent(in) :: box
    integer, intent(in) :: h
    real(c_double), contiguous, intent(in) :: u(1 - h:, 1 - h:, 1 - h:)
    real(c_double), contiguous, intent(inout) :: u_new(1 - h:, 1 - h:, 1 - h:)
    integer, intent(in) :: thread
    if (thread >= 0 .and. thread <= 15) then
      failed_lo(:, thread) = box%lo
      failed_hi(:, thread) = box%hi
    end if
    fail_arrays = 7
  end function fail_arrays

  recursive integer function fail_and_print(box, h, u, u_new, thread)
    type(hympi_box), intent(in) :: box
    integer, intent(in) :: h
    real(c_double), contiguous, intent(in) :: u(1 - h:, 1 - h:, 1 - h:)
    real(c_double), contiguous, intent(inout) :: u_new(1 - h:, 1 - h:, 1 - h:)
    integer, intent(in) :: thread
    write (0, '(a)') "update failed on box " // box_text(box%lo, box%hi)
    fail_and_print = 7
  end function fail_and_print

  ! "(lo:hi, lo:hi, lo:hi)", as hympi's messages give a Fortran box.
  function box_text(lo, hi) result(text)
    integer, intent(in) :: lo(3), hi(3)
    character(len=:), allocatable :: text
    character(len=96) :: buffer
    write (buffer, '("(", i0, ":", i0, ", ", i0, ":", i0, ", ", i0, ":", i0, ")")') &
        lo(1), hi(1), lo(2), hi(2), lo(3), hi(3)
    text = trim(buffer)
  end function box_text

  ! The initial field of examples/heat.f90 at zero-based global (gi, gj, gk).
  pure real(c_double) function initial(gi, gj, gk)
    integer, intent(in) :: gi, gj, gk
    initial = real(mod(7 * gi + 13 * gj + 29 * gk, 17), c_double) / 16 - 0.5_c_double
  end function initial

  ! steps heat steps over the whole grid, zero outside: the serial reference.
  subroutine serial_heat(grid, steps, g)
    integer, intent(in) :: grid(3), steps
    real(c_double), allocatable, intent(out) :: g(:, :, :)
    real(c_double), allocatable :: a(:, :, :), b(:, :, :)
    integer :: i, j, k, s
    allocate(a(0:grid(1) + 1, 0:grid(2) + 1, 0:grid(3) + 1), source=0.0_c_double)
    allocate(b, mold=a)
    b = 0
    do k = 1, grid(3)
      do j = 1, grid(2)
        do i = 1, grid(1)
          a(i, j, k) = initial(i - 1, j - 1, k - 1)
        end do
      end do
    end do
    do s = 1, steps
      do k = 1, grid(3)
        do j = 1, grid(2)
          do i = 1, grid(1)
            b(i, j, k) = a(i, j, k) + nu * (a(i - 1, j, k) + a(i + 1, j, k) + a(i, j - 1, k) + &
                         a(i, j + 1, k) + a(i, j, k - 1) + a(i, j, k + 1) - 6 * a(i, j, k))
          end do
        end do
      end do
      call move_alloc(a, g)
      call move_alloc(b, a)
      call move_alloc(g, b)
    end do
    call move_alloc(a, g)
  end subroutine serial_heat
end module fortran_arrays_checks

program test_fortran_arrays
  use, intrinsic :: iso_c_binding
  use mpi
  use hympi
  use fortran_arrays_checks
  implicit none
  integer, parameter :: grid(3) = [11, 9, 10], steps = 5
  type(hympi_domain) :: d, deep
  type(hympi_field) :: f(2), p(2), q(2), r(2)
  real(c_double), allocatable :: ref(:, :, :)
  integer :: provided, rank, nranks, ierr, status, threads, passed, failed, counts(2)
  character(len=64) :: text
  character(len=:), allocatable :: msg

  passed = 0
  failed = 0
  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  threads = 2
  call get_environment_variable("OMP_NUM_THREADS", text, status=status)
  if (status == 0) read (text, *, iostat=status) threads
  call get_command_argument(1, text)
  if (text == "--abort") call abort_run()
  if (text == "--time") call time_forms()

  call check_communicators()
  ! Schemes that overlap; funneled and adaptive need 2 threads.
  call hympi_domain_create(d, MPI_COMM_WORLD, grid, merge("funneled    ", "multiple-own", &
                           threads >= 2), threads, status, &
                           on_error=HYMPI_ON_ERROR_RETURN)
  call check("create over use mpi's MPI_COMM_WORLD", status == HYMPI_SUCCESS)
  call create_fields(d, f)
  call create_fields(d, p)
  call check_live_handles()
  call serial_heat(grid, steps, ref)
  call check_one_sweeps()

  call hympi_domain_create(deep, MPI_COMM_WORLD, grid, merge("adaptive     ", "shared-window", &
                           threads >= 2), threads, status, &
                           on_error=HYMPI_ON_ERROR_RETURN, depth=3)
  call check("create with depth 3", status == HYMPI_SUCCESS .and. hympi_domain_halo(deep) == 3)
  call create_fields(deep, q)
  call create_fields(deep, r)
  call check_blocks()
  call check_failures()
  call check_tune()

  call free_fields(q)
  call free_fields(r)
  call hympi_domain_free(deep)
  call free_fields(f)
  call free_fields(p)
  call hympi_domain_free(d, status)
  call check("free", status == HYMPI_SUCCESS .and. .not. c_associated(d%handle))
  counts = [passed, failed]
  call MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(i0, a, i0, a)', counts(1), " passed, ", counts(2), " failed"
  call MPI_Finalize(ierr)
  if (counts(2) /= 0) error stop 1

contains

  ! The integer communicator is the one used: a domain over each half of
  ! a split covers the grid once per half.
  subroutine check_communicators()
    type(hympi_domain) :: world, half
    integer :: n(3), offset(3), points, sub, halves
    call hympi_domain_create(world, MPI_COMM_WORLD, grid, "", threads, status)
    call hympi_domain_local(world, n, offset)
    call MPI_Allreduce(product(n), points, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check("use mpi: the world's domain covers the grid", &
               status == HYMPI_SUCCESS .and. points == product(grid))
    call hympi_domain_free(world)
    call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, sub, ierr)
    call hympi_domain_create(half, sub, grid, "masteronly", threads, status)
    call hympi_domain_local(half, n, offset)
    call MPI_Allreduce(product(n), points, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    halves = min(nranks, 2)
    call check("use mpi: a split communicator's domain covers the grid in each half", &
               status == HYMPI_SUCCESS .and. points == halves * product(grid))
    call hympi_domain_free(half)
    call MPI_Comm_free(sub, ierr)
  end subroutine check_communicators

  ! Creating over a live handle is refused and leaves it as it was.
  subroutine check_live_handles()
    type(c_ptr) :: before
    before = d%handle
    call hympi_domain_create(d, MPI_COMM_WORLD, grid, "", threads, status)
    msg = hympi_last_error()
    call check("a live domain handle is refused and kept", status == HYMPI_ERR_USAGE .and. &
               index(msg, "the domain handle is still live on this rank") > 0 .and. &
               c_associated(d%handle, before))
    before = f(1)%handle
    call hympi_field_create(d, f(1), status)
    msg = hympi_last_error()
    call check("a live field handle is refused and kept", status == HYMPI_ERR_USAGE .and. &
               index(msg, "hympi_field_create: the field handle is still live") > 0 .and. &
               c_associated(f(1)%handle, before))
  end subroutine check_live_handles

  ! steps single sweeps: the array form, the module-pointer form and the
  ! serial reference agree to the last bit.
  subroutine check_one_sweeps()
    real(c_double), pointer, contiguous :: a(:, :, :), b(:, :, :)
    integer :: s, cur, pc, rc
    logical :: ok
    ok = .true.
    cur = 1
    do s = 1, steps
      call hympi_sweep_arrays(d, f(cur), f(3 - cur), heat_arrays, rc)
      ok = ok .and. rc == HYMPI_SUCCESS
      cur = 3 - cur
    end do
    call hympi_field_pointer(d, p(1), a)
    call hympi_field_pointer(d, p(2), b)
    pc = 1
    do s = 1, steps
      if (pc == 1) then
        pu => a
        pu_new => b
      else
        pu => b
        pu_new => a
      end if
      call hympi_sweep(d, p(pc:pc), heat_pointers, rc)
      ok = ok .and. rc == HYMPI_SUCCESS
      pc = 3 - pc
    end do
    call check("hympi_sweep_arrays: steps ran", ok)
    call check("hympi_sweep_arrays = the pointer form, bit for bit", same(d, f(cur), p(pc)))
    call check("hympi_sweep_arrays = the serial reference, bit for bit", is_reference(d, f(cur)))
  end subroutine check_one_sweeps

  ! Blocks of 3 and 2 sweeps: the array block equals hympi_sweep_block's
  ! pointer form and the serial reference, leaves the handles and the
  ! pointers fetched before it alone, and the result is where the parity
  ! says.
  subroutine check_blocks()
    type(c_ptr) :: handles(2)
    real(c_double), pointer, contiguous :: before(:, :, :), after(:, :, :)
    integer :: s, cur, blk, rc
    logical :: ok
    handles = [q(1)%handle, q(2)%handle]
    call hympi_field_pointer(deep, q(1), before)
    ok = .true.
    cur = 1
    s = 0
    do while (s < steps)
      blk = min(3, steps - s)
      call hympi_sweep_block_arrays(deep, q(cur), q(3 - cur), blk, heat_arrays, rc)
      ok = ok .and. rc == HYMPI_SUCCESS
      call hympi_sweep_block(deep, r(1), r(2), blk, heat_pair, rc)
      ok = ok .and. rc == HYMPI_SUCCESS
      if (mod(blk, 2) == 1) cur = 3 - cur
      s = s + blk
    end do
    call hympi_field_pointer(deep, q(1), after)
    call check("hympi_sweep_block_arrays: blocks ran, handles and pointers unchanged", ok .and. &
               c_associated(q(1)%handle, handles(1)) .and. c_associated(q(2)%handle, handles(2)) &
               .and. associated(before, after))
    call check("hympi_sweep_block_arrays = hympi_sweep_block, bit for bit", same(deep, q(cur), r(1)))
    call check("hympi_sweep_block_arrays = the serial reference, bit for bit", &
               is_reference(deep, q(cur)))
    call hympi_sweep_block_arrays(deep, q(1), q(1), 2, heat_arrays, rc)
    msg = hympi_last_error()
    call check("the array block refuses u_in == u_out", rc == HYMPI_ERR_USAGE .and. &
               index(msg, "hympi_sweep_block_arrays: u_in and u_out are the same field") > 0)
  end subroutine check_blocks

  ! A failing update's message names, in Fortran's indices, a box that a
  ! failing call got (one-sweep and block forms), and a freed field is refused.
  subroutine check_failures()
    type(hympi_field) :: gone
    integer :: rc
    call hympi_sweep_arrays(d, f(1), f(2), fail_arrays, rc)
    msg = hympi_last_error()
    call check("a failing array update: HYMPI_ERR_KERNEL, its box in Fortran indices", &
               rc == HYMPI_ERR_KERNEL .and. names_failed_box(msg))
    failed_lo = -99
    call hympi_sweep_block_arrays(deep, q(1), q(2), 3, fail_arrays, rc)
    msg = hympi_last_error()
    call check("a failing array block: its box in Fortran indices", &
               rc == HYMPI_ERR_KERNEL .and. names_failed_box(msg))
    call hympi_field_create(d, gone, rc)
    call hympi_field_free(gone)
    call hympi_sweep_arrays(d, f(1), gone, heat_arrays, rc)
    msg = hympi_last_error()
    call check("a freed field is refused", rc == HYMPI_ERR_USAGE .and. &
               index(msg, "hympi_sweep_arrays: a field handle is not live") > 0)
  end subroutine check_failures

  ! hympi_tune_block_arrays (last: it overwrites q): refuses u_in == u_out
  ! and more sweeps than the depth; runs, and leaves the handles alone.
  subroutine check_tune()
    type(c_ptr) :: handles(2)
    integer :: rc, blocks
    call hympi_tune_block_arrays(deep, q(1), q(1), 3, heat_arrays, rc)
    msg = hympi_last_error()
    call check("tune_block_arrays refuses u_in == u_out", rc == HYMPI_ERR_USAGE .and. &
               index(msg, "hympi_tune_block_arrays: u_in and u_out are the same field") > 0)
    call hympi_tune_block_arrays(deep, q(1), q(2), 4, heat_arrays, rc)
    msg = hympi_last_error()
    call check("tune_block_arrays refuses more sweeps than the depth", rc == HYMPI_ERR_USAGE .and. &
               index(msg, "4 sweeps, but the domain's depth allows 1 to 3") > 0)
    handles = [q(1)%handle, q(2)%handle]
    blocks = -1
    call hympi_tune_block_arrays(deep, q(1), q(2), 3, heat_arrays, rc, blocks)
    call check("tune_block_arrays runs, the handles unchanged", rc == HYMPI_SUCCESS .and. &
               blocks >= 0 .and. c_associated(q(1)%handle, handles(1)) .and. &
               c_associated(q(2)%handle, handles(2)))
  end subroutine check_tune

  ! Whether msg names the rank and the box of a thread's failing call.
  logical function names_failed_box(text)
    character(len=*), intent(in) :: text
    character(len=64) :: rank_text
    integer :: t
    write (rank_text, '("(rank ", i0, ", thread ")') rank
    names_failed_box = .false.
    if (index(text, "the box callback returned 7") == 0) return
    if (index(text, trim(rank_text)) == 0) return
    do t = 0, threads - 1
      if (failed_lo(1, t) == -99) cycle
      if (index(text, "on box " // box_text(failed_lo(:, t), failed_hi(:, t)) // &
                " in local Fortran indices " // trim(rank_text)) > 0) names_failed_box = .true.
    end do
  end function names_failed_box

  ! Two zero fields of dom, the first set to the initial field.
  subroutine create_fields(dom, fields)
    type(hympi_domain), intent(in) :: dom
    type(hympi_field), intent(inout) :: fields(2)
    real(c_double), pointer, contiguous :: u(:, :, :)
    integer :: n(3), offset(3), i, j, k, rc(2)
    call hympi_field_create(dom, fields(1), rc(1))
    call hympi_field_create(dom, fields(2), rc(2))
    call check("fields", all(rc == HYMPI_SUCCESS))
    call hympi_domain_local(dom, n, offset)
    call hympi_field_pointer(dom, fields(1), u)
    do k = 1, n(3)
      do j = 1, n(2)
        do i = 1, n(1)
          u(i, j, k) = initial(offset(1) + i - 1, offset(2) + j - 1, offset(3) + k - 1)
        end do
      end do
    end do
  end subroutine create_fields

  subroutine free_fields(fields)
    type(hympi_field), intent(inout) :: fields(2)
    call hympi_field_free(fields(1))
    call hympi_field_free(fields(2))
  end subroutine free_fields

  ! Whether the own points of x and y are equal, bit for bit.
  logical function same(dom, x, y)
    type(hympi_domain), intent(in) :: dom
    type(hympi_field), intent(in) :: x, y
    real(c_double), pointer, contiguous :: a(:, :, :), b(:, :, :)
    integer :: n(3), offset(3)
    call hympi_domain_local(dom, n, offset)
    call hympi_field_pointer(dom, x, a)
    call hympi_field_pointer(dom, y, b)
    same = all(a(1:n(1), 1:n(2), 1:n(3)) == b(1:n(1), 1:n(2), 1:n(3)))
  end function same

  ! Whether x's own points are the serial reference's, bit for bit.
  logical function is_reference(dom, x)
    type(hympi_domain), intent(in) :: dom
    type(hympi_field), intent(in) :: x
    real(c_double), pointer, contiguous :: a(:, :, :)
    integer :: n(3), o(3)
    call hympi_domain_local(dom, n, o)
    call hympi_field_pointer(dom, x, a)
    is_reference = all(a(1:n(1), 1:n(2), 1:n(3)) == &
                       ref(o(1) + 1:o(1) + n(1), o(2) + 1:o(2) + n(2), o(3) + 1:o(3) + n(3)))
  end function is_reference

  ! The last rank's update fails under the default policy: hympi prints one
  ! line and stops every rank (exit code 3); "not stopped" must not appear.
  subroutine abort_run()
    type(hympi_domain) :: dom
    type(hympi_field) :: fields(2)
    integer :: s, rc
    call hympi_domain_create(dom, MPI_COMM_WORLD, grid, "masteronly", threads, rc)
    call create_fields(dom, fields)
    do s = 1, 3
      if (rank == nranks - 1) then
        call hympi_sweep_arrays(dom, fields(1), fields(2), fail_and_print, rc)
      else
        call hympi_sweep_arrays(dom, fields(1), fields(2), heat_arrays, rc)
      end if
    end do
    write (0, '(a, i0)') "not stopped: rank ", rank
    call MPI_Finalize(ierr)
    error stop 1
  end subroutine abort_run

  ! The two loop forms timed on one domain, round after round.
  subroutine time_forms()
    integer, parameter :: rounds = 3
    type(hympi_domain) :: dom
    type(hympi_field) :: fa(2), fp(2)
    real(c_double), pointer, contiguous :: a(:, :, :), b(:, :, :)
    real(c_double) :: ms(rounds, 2), t0
    integer :: size, steps, round, s, rc
    call get_command_argument(2, text)
    read (text, *) size
    call get_command_argument(3, text)
    read (text, *) steps
    call hympi_domain_create(dom, MPI_COMM_WORLD, [size, size, size], "masteronly", threads, rc)
    if (rc /= HYMPI_SUCCESS) error stop "time_forms: hympi_domain_create failed"
    call create_fields(dom, fa)
    call create_fields(dom, fp)
    call hympi_field_pointer(dom, fp(1), a)
    call hympi_field_pointer(dom, fp(2), b)
    do round = 1, rounds
      call MPI_Barrier(MPI_COMM_WORLD, ierr)
      t0 = MPI_Wtime()
      do s = 1, steps
        call hympi_sweep_arrays(dom, fa(1 + mod(s - 1, 2)), fa(2 - mod(s - 1, 2)), heat_arrays, rc)
      end do
      ms(round, 1) = (MPI_Wtime() - t0) / steps * 1000
      call MPI_Barrier(MPI_COMM_WORLD, ierr)
      t0 = MPI_Wtime()
      do s = 1, steps
        pu => a
        pu_new => b
        if (mod(s, 2) == 0) then
          pu => b
          pu_new => a
        end if
        call hympi_sweep(dom, fp(1 + mod(s - 1, 2):1 + mod(s - 1, 2)), heat_pointers, rc)
      end do
      ms(round, 2) = (MPI_Wtime() - t0) / steps * 1000
    end do
    if (rank == 0) then
      write (*, '(a, i0, a, i0, a, i0, a, i0, a)') "# ", size, "^3, ", steps, " steps, ", nranks, &
          " ranks x ", threads, " threads, ms per step: median (min..max) of 3 rounds"
      write (*, '(a, 3f9.3)') "arrays   ", median3(ms(:, 1)), minval(ms(:, 1)), maxval(ms(:, 1))
      write (*, '(a, 3f9.3)') "pointers ", median3(ms(:, 2)), minval(ms(:, 2)), maxval(ms(:, 2))
      write (*, '(a, f6.2)') "pointers/arrays ", median3(ms(:, 2)) / median3(ms(:, 1))
    end if
    call free_fields(fa)
    call free_fields(fp)
    call hympi_domain_free(dom)
    call MPI_Finalize(ierr)
    stop
  end subroutine time_forms

  real(c_double) function median3(x)
    real(c_double), intent(in) :: x(3)
    median3 = max(min(x(1), x(2)), min(max(x(1), x(2)), x(3)))
  end function median3

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
end program test_fortran_arrays
