"""`hympi-lab slice`: a plane of a field file that hympi wrote
(write_field, hympi_field_write; docs/field-io.md) as a PNG or SVG."""

from __future__ import annotations

import argparse
from typing import TextIO

from . import field_file
from .cli_args import Subparsers, add_outputs

DESCRIPTION = ("Draw one plane of a field file written by hympi (FILE, raw float64, with its "
               "sidecar FILE.json): a colour map over the plane's global indices, the field's "
               "name and grid in the title. Only that plane is read (np.memmap).")


def add_slice(sub: Subparsers) -> None:
    """`slice FILE --axis z --index K -o slice.png`."""
    p = sub.add_parser("slice", help="a plane of a field file as a figure", description=DESCRIPTION)
    p.add_argument("file", metavar="FILE", help="the field's data file (its sidecar is FILE.json)")
    p.add_argument("--axis", choices=sorted(field_file.AXES), default="z",
                   help="the axis across the plane (default z: an x-y plane)")
    p.add_argument("--index", type=_whole_number, metavar="K",
                   help="the plane's global index along --axis, 0 .. N-1 (default: the middle, N // 2)")
    add_outputs(p)
    p.set_defaults(func=cmd_slice)


def cmd_slice(args: argparse.Namespace, out: TextIO) -> int:
    from . import plotting  # matplotlib loads only when a figure is drawn

    plotting.check_outputs(args.output)
    field = field_file.open_field(args.file)
    values, index, horizontal, vertical = field_file.plane(field, args.axis, args.index)
    writer = f", written on {field.writer_ranks} ranks" if field.writer_ranks else ""
    if writer and field.writer_proc_grid:
        writer += f" ({field_file.grid_text(field.writer_proc_grid)})"
    title = (f"{field.name}: plane {args.axis} = {index} of the "
             f"{field_file.grid_text(field.grid)} grid{writer}")
    plotting.field_slice(values, horizontal, vertical, title, field.name, args.output)
    print(f"wrote {', '.join(args.output)}", file=out)
    return 0


def _whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
