! The Fortran wrapper of the report (hympi_report_json's optional fields=,
! field_names=, compiler= and flags=): each named field's checksum in the
! report is hympi_checksum's, to the last digit written; the program's
! compiler_version() and compiler_options() beside hympi's; the call
! without them still works; names that are not one per field, and a name
! given twice, are HYMPI_ERR_USAGE on every rank. Prints "N passed, M
! failed" from rank 0.
program fortran_report
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: compiler_version, compiler_options
  use mpi_f08
  use hympi
  implicit none
  type(hympi_domain) :: domain
  type(hympi_field) :: fields(2)
  real(c_double), pointer, contiguous :: a(:, :, :), b(:, :, :)
  real(c_double) :: sum(2), l2(2)
  integer :: provided, rank, status, passed, failed, n(3), offset(3), i, j, k
  character(len=64) :: path
  character(len=:), allocatable :: text

  passed = 0
  failed = 0
  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call hympi_domain_create(domain, MPI_COMM_WORLD, [10, 9, 8], "", 1, status)
  call check("a domain", status == HYMPI_SUCCESS)
  call hympi_field_create(domain, fields(1), status)
  call hympi_field_create(domain, fields(2), status)
  call hympi_field_pointer(domain, fields(1), a)
  call hympi_field_pointer(domain, fields(2), b)
  call hympi_domain_local(domain, n, offset)
  do k = 1, n(3)
    do j = 1, n(2)
      do i = 1, n(1)
        a(i, j, k) = real(mod(offset(1) + i, 5), c_double) - 1.75_c_double + 0.5_c_double * (offset(3) + k)
        b(i, j, k) = -3 * a(i, j, k) + 0.125_c_double * (offset(2) + j)
      end do
    end do
  end do
  call hympi_checksum(domain, fields(1), sum(1), l2(1))
  call hympi_checksum(domain, fields(2), sum(2), l2(2))
  ! One file per run of the test (ctest may run both builds at once).
  write (path, '(a, i0, a)') "/tmp/hympi-fortran-report-", getpid_of_rank0(), ".json"

  call hympi_report_json(domain, trim(path), "f", status, fields=fields, field_names=["a", "b"], &
                         compiler=compiler_version(), flags=compiler_options())
  call check("a report of two named fields", status == HYMPI_SUCCESS)
  if (rank == 0) then
    text = file_text(trim(path))
    call check_here("a's checksum is hympi_checksum's", has_value(text, "a", "sum", sum(1)) .and. &
                    has_value(text, "a", "l2", l2(1)))
    call check_here("b's checksum is hympi_checksum's", has_value(text, "b", "sum", sum(2)) .and. &
                    has_value(text, "b", "l2", l2(2)))
    call check_here("the program's compiler beside hympi's", &
                    index(text, '"app_compiler": "' // compiler_version() // '"') > 0 .and. &
                    index(text, '"app_flags": "') > 0 .and. index(text, '"compiler": "') > 0)
  end if
  call hympi_report_json(domain, trim(path), "f", status)
  call check("the call without the new arguments still writes a report", status == HYMPI_SUCCESS)
  call hympi_report_json(domain, trim(path), "f", status, fields=fields)
  call check("fields without names: field1, field2", status == HYMPI_SUCCESS)
  if (rank == 0) then
    text = file_text(trim(path))
    call check_here("field2 is b", has_value(text, "field2", "sum", sum(2)))
  end if
  call hympi_report_json(domain, trim(path), "f", status, fields=fields, field_names=["a"])
  call check("fewer names than fields", status == HYMPI_ERR_USAGE .and. &
             index(hympi_last_error(), "give one name per field") > 0)
  call hympi_report_json(domain, trim(path), "f", status, fields=fields(1:1), field_names=["a", "b"])
  call check("more names than fields", status == HYMPI_ERR_USAGE)
  call hympi_report_json(domain, trim(path), "f", status, fields=fields, field_names=["a", "a"])
  call check("a name given twice", status == HYMPI_ERR_USAGE .and. &
             index(hympi_last_error(), "given twice") > 0)
  if (rank == 0) then
    open (newunit=i, file=trim(path), status="old", iostat=status)
    if (status == 0) close (i, status="delete")
  end if
  call hympi_field_free(fields(1))
  call hympi_field_free(fields(2))
  call hympi_domain_free(domain)
  if (rank == 0) write (*, '(i0, a, i0, a)') passed, " passed, ", failed, " failed"
  call MPI_Finalize()
  if (failed > 0) stop 1

contains

  ! A check every rank makes: failed on every rank when it fails on one.
  subroutine check(what, ok)
    character(len=*), intent(in) :: what
    logical, intent(in) :: ok
    integer :: mine, any
    mine = merge(0, 1, ok)
    call MPI_Allreduce(mine, any, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD)
    if (any == 0) then
      passed = passed + 1
    else
      failed = failed + 1
      if (.not. ok) write (*, '(a, i0, a)') "FAIL rank ", rank, ": " // what // " (" // hympi_last_error() // ")"
    end if
  end subroutine check

  ! A check of rank 0 alone (the file it reads).
  subroutine check_here(what, ok)
    character(len=*), intent(in) :: what
    logical, intent(in) :: ok
    if (ok) then
      passed = passed + 1
    else
      failed = failed + 1
      write (*, '(a)') "FAIL: " // what
    end if
  end subroutine check_here

  ! Rank 0's process id on every rank.
  integer function getpid_of_rank0() result(pid)
    interface
      integer(c_int) function c_getpid() bind(C, name="getpid")
        import :: c_int
      end function c_getpid
    end interface
    pid = int(c_getpid())
    call MPI_Bcast(pid, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
  end function getpid_of_rank0

  function file_text(name) result(text)
    character(len=*), intent(in) :: name
    character(len=:), allocatable :: text
    integer :: unit, size, rc
    open (newunit=unit, file=name, access="stream", form="unformatted", status="old", iostat=rc)
    if (rc /= 0) then
      text = ""
      return
    end if
    inquire (unit=unit, size=size)
    allocate(character(len=size) :: text)
    read (unit, iostat=rc) text
    close (unit)
  end function file_text

  ! Whether the report holds `key`: value (read as a double, equal to it)
  ! in the checksums entry of field `name` (keys sorted: field, l2, sum).
  logical function has_value(text, name, key, value)
    character(len=*), intent(in) :: text, name, key
    real(c_double), intent(in) :: value
    integer :: at, from, to, rc
    real(c_double) :: read_value
    has_value = .false.
    at = index(text, '"field": "' // name // '"')
    if (at == 0) return
    from = index(text(at:), '"' // key // '": ')
    if (from == 0) return
    from = at + from - 1 + len(key) + 4
    to = from + scan(text(from:), ',}' // new_line('a')) - 2
    read (text(from:to), *, iostat=rc) read_value
    has_value = rc == 0 .and. read_value == value
  end function has_value
end program fortran_report
