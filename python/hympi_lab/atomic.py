"""Writing a file so that it is either complete or not there: every file
hympi-lab writes (--json, plots, the report, results.csv, fit.json,
study.json) goes through here.

The bytes go to a temporary file beside the target, made with mkstemp
(O_CREAT|O_EXCL|O_NOFOLLOW under an unpredictable name: a symbolic link
planted there is never followed), are flushed to disk and renamed over the
target. The file keeps the mode of the one it replaces (a 0600 file stays
0600); a new one gets the umask's default (0666 & ~umask), as open() would
give it. A failure of any kind removes the temporary file, keeps an earlier
good target, and is OutputError "cannot write PATH: reason" (exit 4).

A symbolic link at the target itself is followed (the file it names is
written, the link stays), and a device or FIFO (/dev/stdout, /dev/full) is
written in place: renaming over it would replace the device node.
"""

from __future__ import annotations

import os
import stat
import tempfile
from typing import BinaryIO, Callable, Union

from .errors import OutputError

__all__ = ["write_atomic", "write_with", "check_target", "probe_directory"]


def write_atomic(path: Union[str, os.PathLike], data: Union[str, bytes]) -> None:
    """Write `data` (text as UTF-8, newlines as given) to `path` atomically."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    write_with(path, lambda handle: handle.write(raw))


def write_with(path: Union[str, os.PathLike], write: Callable[[BinaryIO], object]) -> None:
    """Call `write` with a binary file handle and put what it wrote at `path`
    atomically (a figure's savefig writes into the handle)."""
    shown = os.fspath(path)
    target = os.path.realpath(shown)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as err:  # a file given as a directory: ENOTDIR
        raise OutputError(f"cannot write {shown}: {err.strerror or err}") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise OutputError(f"cannot write {shown}: is a directory")
    if st is not None and not stat.S_ISREG(st.st_mode):
        _write_in_place(shown, target, write)
        return
    directory, name = os.path.split(target)
    try:
        fd, tmp = tempfile.mkstemp(dir=directory or ".", prefix=f".{name}.", suffix=".tmp")
    except OSError as err:
        raise OutputError(f"cannot write {shown}: {err.strerror or err}") from None
    try:
        os.fchmod(fd, stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except OSError as err:
        _unlink_quietly(tmp)
        raise OutputError(f"cannot write {shown}: {err.strerror or err}") from None
    except BaseException:
        _unlink_quietly(tmp)  # a bug or Ctrl-C in `write`: no temporary file is left
        raise
    _sync_directory(directory or ".")


def check_target(path: Union[str, os.PathLike]) -> None:
    """The OutputError write_with(path) would end in for the kind of path
    (a directory, a file where a directory should be, no such directory),
    raised before a command's work; creates nothing."""
    shown = os.fspath(path)
    target = os.path.realpath(shown)
    try:
        if stat.S_ISDIR(os.stat(target).st_mode):
            raise OutputError(f"cannot write {shown}: is a directory")
        return
    except FileNotFoundError:
        pass
    except OSError as err:
        raise OutputError(f"cannot write {shown}: {err.strerror or err}") from None
    directory = os.path.dirname(target) or "."
    if not os.path.isdir(directory):
        raise OutputError(f"cannot write {shown}: No such file or directory")


def probe_directory(directory: Union[str, os.PathLike], size: int = 0) -> None:
    """What a write into `directory` will meet, found before a run: a
    temporary file is created there (and `size` bytes written and flushed to
    disk), then removed. OutputError names the reason (not a directory, no
    permission, read-only, no space left)."""
    shown = os.fspath(directory)
    try:
        fd, tmp = tempfile.mkstemp(dir=shown, prefix=".write-test.", suffix=".tmp")
    except OSError as err:
        raise OutputError(f"cannot write in {shown}: {err.strerror or err}") from None
    try:
        block = b"\0" * min(size, 1 << 20)
        left = size
        while left > 0:
            left -= os.write(fd, block[:left])
        os.fsync(fd)
    except OSError as err:
        raise OutputError(f"cannot write in {shown}: {err.strerror or err}") from None
    finally:
        os.close(fd)
        _unlink_quietly(tmp)


def _write_in_place(shown: str, target: str, write: Callable[[BinaryIO], object]) -> None:
    try:
        with open(target, "wb") as handle:
            write(handle)
    except OSError as err:
        raise OutputError(f"cannot write {shown}: {err.strerror or err}") from None


def _umask() -> int:
    # Read back by setting it: the process is single-threaded when it writes.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _sync_directory(directory: str) -> None:
    """The rename itself on disk (best effort: some file systems refuse)."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
