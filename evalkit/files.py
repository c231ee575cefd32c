"""Files evalkit reads and writes: atomic writes (readers see the old file or the new one, never
a partial one), a check that an output path can be written before any work starts, reads that
only open regular files (a named pipe would block forever), and how a report shows a path
(`shown_path`: relative to the working directory when below it)."""

from __future__ import annotations

import errno
import os
import signal
import stat
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from evalkit.errors import OutputError

WORKDIR_ENV = "EVALKIT_WORKDIR"
"""The directory `shown_path` makes paths relative to, when set: `evalkit report` sets it for the
notebook's kernel (which runs in the notebook's folder) to the directory the command was typed
in. Unset: the process's working directory."""

_FIXES = {
    errno.ENOSPC: "the disk is full; free some space or write somewhere else",
    errno.EDQUOT: "the disk quota is exceeded; free some space or write somewhere else",
    errno.EACCES: "permission denied; choose a writable path or fix the permissions",
    errno.EPERM: "permission denied; choose a writable path or fix the permissions",
    errno.EROFS: "the file system is read-only; choose a writable path",
    errno.EISDIR: "it is a directory; give a file path",
    errno.ENOTDIR: "a parent of it is a file, not a directory; choose another path",
}


def write_atomic(path: str | Path, data: str | bytes, *, remove_stale: bool = False) -> Path:
    """Replace `path` with `data` (str is written as UTF-8) via a temp file
    `.<name>.<random>.tmp` in the same folder, fsync and rename; the folder is created if needed
    and the temp file removed on any error.

    Permissions: an existing file keeps its mode; a new one gets what a plain `open(path, "w")`
    would give (0o666 minus the umask), not mkstemp's private 0o600. A path that `check_writable`
    refuses (a directory, a read-only file, an unwritable folder) and any OSError while writing
    (a full disk, say) raise OutputError naming the path, the reason and the fix; the old file
    is then untouched. `remove_stale=True` (only for callers that serialise every writer of
    `path`, e.g. under a lock) also deletes temp files of `path` left by a killed earlier write.
    """
    target = Path(path)
    check_writable(target)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else 0o666 & ~_umask()
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise OutputError(f"cannot write {target}: {os_reason(exc)}") from None
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise OutputError(f"cannot write {target}: {os_reason(exc)}; the old file is unchanged") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if remove_stale:
        for stale in target.parent.glob(f".{target.name}.*.tmp"):
            stale.unlink(missing_ok=True)
    return target


@contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM held back while the block runs and delivered when it ends: the few
    renames of a swap all happen before Ctrl-C acts. Where signals cannot be blocked (Windows)
    the block runs unchanged."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def replace_parts(build: Path, target: Path, parts: Sequence[str]) -> None:
    """Move the `parts` (names of files or folders) of the folder `build` into the folder
    `target`, each replacing what `target` holds under that name (a part `build` lacks is taken
    out of `target`), all or none: with SIGINT and SIGTERM held back (`signals_held`), and undone
    on any error (then OutputError naming `target`, which is unchanged). What `target` held is
    left in `build/.replaced/` for the caller to remove with `build`; nothing else in `target`
    is touched. `build` must be on the file system of `target` (a sibling folder)."""
    replaced = build / ".replaced"
    replaced.mkdir()
    moved: list[str] = []
    placed: list[str] = []
    with signals_held():
        try:
            for part in parts:
                here = target / part
                if here.exists() or here.is_symlink():
                    here.rename(replaced / part)
                    moved.append(part)
                if (build / part).exists():
                    (build / part).rename(here)
                    placed.append(part)
        except BaseException as exc:  # a signal that was already on its way when they were held
            for part in reversed(placed):
                (target / part).rename(build / part)
            for part in reversed(moved):
                (replaced / part).rename(target / part)
            if isinstance(exc, OSError):
                raise OutputError(f"cannot write into {target}: {os_reason(exc)}; it is unchanged") from None
            raise


def check_writable(path: str | Path) -> None:
    """Raise OutputError (naming the path, the reason and the fix) unless `write_atomic(path)`
    can succeed as far as can be told before writing: `path` is not a directory or another
    non-regular file, an existing file is not read-only (no owner write bit, or no write access),
    and the nearest existing folder above it is a writable directory. Creates nothing."""
    target = Path(path)
    if target.is_dir():
        raise OutputError(f"{target} is a directory; give a file path, e.g. {target / 'report.json'}")
    if target.exists():
        mode = target.stat().st_mode
        if not stat.S_ISREG(mode):
            raise OutputError(f"{target} is {file_kind(mode)}, not a regular file; give a file path")
        if not mode & stat.S_IWUSR or not os.access(target, os.W_OK):
            raise OutputError(
                f"{target} is read-only; make it writable (chmod u+w {target}) or choose another path"
            )
    folder = target.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise OutputError(f"cannot create {target}: {folder} is a file, not a directory; choose another path")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(
            f"cannot write {target}: the folder {folder} is not writable; choose a writable path "
            "or fix the folder's permissions"
        )


def read_regular(path: str | Path) -> bytes:
    """The bytes of `path`. Raises OSError as `open` would (FileNotFoundError, ...); a path that
    is not a regular file (a named pipe, a directory, a device) raises OSError(EINVAL) saying what
    it is, without opening it, so a pipe never blocks the caller."""
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise OSError(errno.EINVAL, f"{file_kind(mode)}, not a regular file", str(path))
    return Path(path).read_bytes()


def file_kind(mode: int) -> str:
    """What a `st_mode` denotes, for messages: 'a directory', 'a named pipe', 'a regular file'..."""
    kinds = (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    )
    return next((name for test, name in kinds if test(mode)), "a special file")


def os_reason(exc: OSError) -> str:
    """Why an OSError happened and how to fix it, for messages (`the disk is full; free ...`)."""
    return _FIXES.get(exc.errno or 0, exc.strerror or str(exc))


def shown_path(path: str | Path) -> str:
    """`path` as a report shows it to a reader: relative to the working directory (`WORKDIR_ENV`
    when set, else the process's) when it lies below it ("datasets/thresholds.json", "." for the
    directory itself), else absolute as given ("/home/runner/x" of a report from another machine
    stays as it is: the reader learns where it was). A relative `path` is returned as given: it
    already is relative to where the run was. Only the text is compared: nothing is resolved on
    disk, since the path may be another machine's."""
    given = Path(path)
    if not given.is_absolute():
        return str(path)
    target = Path(os.path.normpath(given))
    base = Path(os.path.normpath(os.path.abspath(os.environ.get(WORKDIR_ENV) or os.getcwd())))
    return str(target.relative_to(base)) if target.is_relative_to(base) else str(target)


def _umask() -> int:
    """The process umask (reading it requires setting it; restored at once)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask
