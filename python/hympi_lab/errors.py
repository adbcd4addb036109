"""The one exception type that the CLI turns into exit code 2."""


class InputError(Exception):
    """Bad input: an invalid value, an unreadable or wrong-schema file, data a
    fit cannot use. The message is one line, fit to print after
    "hympi-lab: error: "."""
