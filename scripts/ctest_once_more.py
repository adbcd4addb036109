"""ctest, and once more the tests that failed only the way Open MPI 4.1 now
and then fails a run that has done its work: a rank killed by SIGSEGV or
SIGBUS in MPI_Finalize (open-mpi/ompi#10117), or mpirun's report of a rank
"exiting improperly" (open-mpi/ompi#7833). python/hympi_lab/runpoint.py
says what is known of both; the study runs such a run once more, and make
test's ctest lane (scripts/run-tests.sh) does the same through this script.

    ctest_once_more.py CTEST_ARGS...

Runs `ctest CTEST_ARGS --output-junit FILE` in the current directory. When
tests fail and every failed test's output shows one of the two reports,
says so and runs them again (`ctest --rerun-failed --output-on-failure`);
the second run's status is the exit status. A failure of any other kind
runs nothing again (a second run would hide a failure of our own behind a
pass): ctest's status is the exit status."""
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

from hympi_lab.runpoint import OPEN_MPI_IMPROPER_EXIT, OPEN_MPI_RANK_CRASH


def failed_tests(junit_text: str) -> dict[str, str]:
    """Each failed test's name and output, from `ctest --output-junit`'s report."""
    failed = {}
    for case in ET.fromstring(junit_text).iter("testcase"):
        if case.get("status") == "fail":
            out = case.find("system-out")
            failed[case.get("name", "?")] = (out.text or "") if out is not None else ""
    return failed


def open_mpi_failure(output: str) -> bool:
    """Whether a test's output shows Open MPI's failure after the work."""
    return bool(OPEN_MPI_RANK_CRASH.search(output) or OPEN_MPI_IMPROPER_EXIT.search(output))


def main(ctest_args: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="hympi-ctest-") as tmp:
        report = os.path.join(tmp, "report.xml")
        status = subprocess.call(["ctest", *ctest_args, "--output-junit", report])
        if status == 0:
            return 0
        try:
            with open(report, encoding="utf-8", errors="replace") as f:
                failed = failed_tests(f.read())
        except (OSError, ET.ParseError) as err:
            print(f"ctest_once_more.py: no report of the failed tests ({err}): not run again",
                  flush=True)
            return status
    if not failed:
        return status
    others = [name for name, output in failed.items() if not open_mpi_failure(output)]
    if others:
        print(f"ctest_once_more.py: {', '.join(others)} failed otherwise: nothing run again", flush=True)
        return status
    print(f"ctest_once_more.py: {', '.join(failed)} failed only with Open MPI's report of a rank "
          "killed in MPI_Finalize or exiting improperly (open-mpi/ompi#10117, #7833): once more",
          flush=True)
    return subprocess.call(["ctest", "--rerun-failed", "--output-on-failure"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
