"""The exceptions the CLI turns into exit codes: InputError 2, OutputError 1."""


class OutputError(Exception):
    """A result file could not be written (disk full, permissions). Exit code 1:
    the input was fine; earlier good files are kept and no partial file is left."""


class InputError(Exception):
    """Bad input: an invalid value, an unreadable or wrong-schema file, data a
    fit cannot use. The message is one line, fit to print after
    "hympi-lab: error: "."""
