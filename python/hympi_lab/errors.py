"""The exceptions the CLI turns into exit codes (InputError 2, OutputError 4),
and the codes themselves."""

# Exit codes: hympi's (app/main.cpp), documented once in docs/exit-codes.md;
# python/tests/test_exit_codes.py drives each from both commands. hympi's 3
# (cg not converged) has no hympi-lab counterpart.
EXIT_OK = 0
EXIT_FAILED = 1       # a study's run failed after it started
EXIT_USAGE = 2        # bad input: nothing ran
EXIT_OUTPUT = 4       # a result file, or standard output, could not be written
EXIT_INTERRUPTED = 130  # Ctrl-C; a study resumes with --resume DIR
EXIT_TERMINATED = 143   # SIGTERM (a Slurm time limit, scancel); the same


class OutputError(Exception):
    """A result file could not be written (disk full, permissions). Exit code 4:
    the input was fine; earlier good files are kept and no partial file is left."""


class InputError(Exception):
    """Bad input: an invalid value, an unreadable or wrong-schema file, data a
    fit cannot use. The message is one line, fit to print after
    "hympi-lab: error: "."""
