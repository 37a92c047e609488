"""Writing the output file the way ptxas does: through the path the user named.

ptxas opens `-o PATH` for writing and writes into it. That is what a user expects of
`-o /dev/null`, of `-o /proc/self/fd/1` (a link to a pipe), of a symbolic link (its target is
written, the link stays) and of a file the user may not write (refused). We keep one
improvement over a plain write: where PATH is a regular file we own (or none exists yet),
the data goes to a temporary file beside it that is renamed over PATH, so a reader never
sees half a cubin and an I/O error leaves the old file intact. The replacement keeps the
old file's permission bits. Everything else is written through, in place:
device nodes, pipes, sockets, symbolic links, files with other hard links, files of
another owner.
"""
from __future__ import annotations

import os
import stat


class OutputError(OSError):
    """The output path cannot be written (ptxas: "Output file '…' could not be opened")."""


def write_output(path: str, data: bytes) -> None:
    """Write `data` to `path` as ptxas would (see the module docstring)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        info = None
    except OSError as e:
        raise OutputError(str(e)) from None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise OutputError(f"{path} is a directory")
    if info is not None and not stat.S_ISREG(info.st_mode):
        _write_through(path, data)             # symbolic link, device, pipe, socket
        return
    if info is not None and not os.access(path, os.W_OK):
        raise OutputError(f"{path} is not writable")
    replaceable = info is None or (info.st_nlink == 1 and info.st_uid == os.geteuid())
    if not replaceable:
        _write_through(path, data)
        return
    mode = stat.S_IMODE(info.st_mode) if info is not None else None
    _replace(path, data, mode)


def _write_through(path: str, data: bytes) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    except OSError as e:
        raise OutputError(str(e)) from None
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _replace(path: str, data: bytes, mode: int | None) -> None:
    """Temporary file in the same folder, then rename over `path`. (Made as
    `tempfile.mkstemp` would, without importing it: start-up time counts.)"""
    folder = os.path.dirname(os.path.abspath(path))
    for n in range(1 << 16):
        tmp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.{n}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            break
        except FileExistsError:
            continue
        except OSError as e:
            raise OutputError(str(e)) from None
    else:
        raise OutputError(f"no temporary name free beside {path}")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
