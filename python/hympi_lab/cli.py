"""The `hympi-lab` command line: the parser and the entry point.

Each subcommand is a function taking the parsed arguments and returning an
exit code; a command's parser builder and handler live together in one
module by family: cli_model (model and its sub-commands), cli_fit, cli_advise,
cli_plot and cli_study (study, report, project, trace). cli_args holds the
parser and argument types, cli_output the tables and JSON documents.
Bad input of any kind leaves through InputError or argparse and becomes exit
code 2 with one line on stderr; a file that cannot be written (OutputError,
or standard output) exit code 4: hympi's table, docs/exit-codes.md. A
traceback means a bug.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from typing import Callable, Optional, Sequence, TextIO

from . import __version__
from .cli_advise import add_advise
from .cli_args import PROG, Parser, UsageError
from .cli_field import add_slice
from .cli_fit import add_fit
from .cli_model import add_model
from .cli_plot import add_plot
from .cli_study import add_project, add_report, add_study, add_trace
from .errors import (EXIT_INTERRUPTED, EXIT_OK, EXIT_OUTPUT, EXIT_USAGE, InputError,
                     OutputError)

__all__ = ["PROG", "build_parser", "main"]

# Laid out by hand (RawDescriptionHelpFormatter): argparse would break the
# file name at its hyphen.
DESCRIPTION = ("Performance model, fits and advice for hybrid MPI+OpenMP schemes (the equations\n"
               "of the hympi seed papers).")
EPILOG = ("exit codes: 0 done, 1 a study's run failed, 2 bad input, 4 a file or standard\n"
          "output could not be written, 130 interrupted, 143 terminated (docs/exit-codes.md).")


def build_parser() -> Parser:
    parser = Parser(prog=PROG, description=DESCRIPTION, epilog=EPILOG,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in (add_model, add_fit, add_advise, add_plot, add_study, add_report, add_project, add_trace):
        add(sub)
    add_slice(sub)  # cli_field: a plane of a field file
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the console script; returns the exit code (EXIT_*)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        args.command_line = shlex.join([PROG, *(sys.argv[1:] if argv is None else argv)])
        func: Callable[[argparse.Namespace, TextIO], int] = args.func
        code = func(args, sys.stdout)
        sys.stdout.flush()  # a full device shows here, not at exit as a traceback
        return code
    except (UsageError, InputError) as err:
        return _fail(str(err), EXIT_USAGE)
    except OutputError as err:  # the input was fine; a result file could not be written
        return _fail(str(err), EXIT_OUTPUT)
    except OSError as err:
        if err.filename is not None:
            # A file the command reads that no check caught: still one line.
            return _fail(f"{err.filename}: {err.strerror or err}", EXIT_USAGE)
        # Only writing the table or text to standard output is left unwrapped.
        _abandon_stdout()
        return _fail(f"cannot write to standard output: {err.strerror or err}", EXIT_OUTPUT)
    except (RecursionError, MemoryError) as err:
        # json.loads of a document nested thousands deep, or one too large.
        return _fail(f"the input is too large or too deeply nested to read ({type(err).__name__})",
                     EXIT_USAGE)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except SystemExit as exit_:  # --help and --version
        try:
            sys.stdout.flush()
        except OSError as err:
            _abandon_stdout()
            return _fail(f"cannot write to standard output: {err.strerror or err}", EXIT_OUTPUT)
        return exit_.code if isinstance(exit_.code, int) else EXIT_OK


def _fail(message: str, code: int) -> int:
    print(f"{PROG}: error: {_one_line(message)}", file=sys.stderr)
    return code


def _one_line(message: str) -> str:
    """The message with control characters (a '\\r' or '\\n' in a user's
    argument) escaped, so that an error stays the one line it is meant to be."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)


def _abandon_stdout() -> None:
    """Points stdout at /dev/null so that the interpreter's flush at exit does
    not fail a second time on what could not be written."""
    try:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")
    except OSError:
        pass


if __name__ == "__main__":
    sys.exit(main())
