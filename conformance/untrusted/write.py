"""Writing the files a user names on the command line (reports, expectations), safely.

Every writer of a user-named output goes through this module::

    target = OutputTarget.check(path)      # before any work: OutputError (one line) if it cannot be written
    ...                                    # the run
    target.write_text(text)                # OutputError (one line) on a write error

or ``write_text(path, text)`` for both steps at once. The rules:

- ``-`` is the runner's stdout. A path that names the runner's own stdout or stderr (``/dev/stdout``,
  ``/dev/fd/1``, ``/proc/self/fd/2``, ...) is written through that stream: a file stdout is redirected
  to is appended to, never truncated or replaced, and the ``/dev`` link is left alone.
  :attr:`OutputTarget.is_stdout` tells the caller to print its console output elsewhere.
- A symlink is followed: the file it points to is written, the link stays a link.
- A target that is not a regular file (a device such as ``/dev/null`` or ``/dev/full``, a FIFO) is
  opened and written in place: no temporary file, no rename, no node replaced. A FIFO nobody reads is
  refused instead of waited on.
- A regular file (or a new name) is written atomically: a uniquely named temporary file in the same
  directory, then renamed onto the (resolved) name, so a reader never sees half a file and an unrelated
  ``NAME.tmp`` is never touched. The file keeps its permission bits (a new one gets the umask's).
- A report written as the run goes (:meth:`OutputTarget.open_lines`, ``--report-json``) is the exception: a
  regular file is created or truncated when the run starts and written in place a line at a time, so a run
  killed halfway leaves the lines written so far.
- :meth:`OutputTarget.check` refuses a missing directory, a directory as target and an unwritable
  directory or file, so a run is never lost to a typo in a report path.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, TextIO, Union

from embconf.model.errors import UserError

STDOUT = "-"


class OutputError(UserError):
    """A named output that cannot be written; the message is one line naming the path and the reason."""


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def write_error(name: str, exc: OSError) -> OutputError:
    """A failed write to ``name`` in one line (a reader that went away said so)."""
    if isinstance(exc, BrokenPipeError) or exc.errno == errno.EPIPE:
        return OutputError(f"cannot write {name}: its reader went away")
    return OutputError(f"cannot write {name}: {_reason(exc)}")


@dataclass(frozen=True)
class OutputTarget:
    """A checked output path: where and how :meth:`write_text` will write."""

    name: str  # as the user gave it, for messages
    path: Optional[Path]  # the resolved path (None for a standard stream)
    stream_fd: Optional[int] = None  # 1 or 2 when the target is the runner's stdout or stderr
    in_place: bool = False  # a device or FIFO: opened and written directly

    @property
    def is_stdout(self) -> bool:
        return self.stream_fd == 1

    @classmethod
    def check(cls, path: Union[str, os.PathLike]) -> "OutputTarget":
        """The target for ``path``, checked for writability now (nothing is created or opened)."""
        name = os.fspath(path)
        if name == STDOUT:
            return cls(name, None, stream_fd=1)
        fd = _own_stream(name)
        if fd is not None:
            return cls(name, None, stream_fd=fd)
        resolved = Path(os.path.realpath(name))
        try:
            mode = os.stat(resolved).st_mode
        except FileNotFoundError:
            mode = None
        except OSError as exc:
            raise OutputError(f"cannot write {name}: {_reason(exc)}") from None
        if mode is not None and stat.S_ISDIR(mode):
            raise OutputError(f"cannot write {name}: it is a directory")
        if mode is not None and not stat.S_ISREG(mode):
            if not os.access(resolved, os.W_OK):
                raise OutputError(f"cannot write {name}: permission denied")
            return cls(name, resolved, in_place=True)
        parent = resolved.parent
        if not parent.is_dir():
            raise OutputError(f"cannot write {name}: directory {parent} does not exist")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise OutputError(f"cannot write {name}: directory {parent} is not writable")
        if mode is not None and not os.access(resolved, os.W_OK):
            raise OutputError(f"cannot write {name}: permission denied")
        return cls(name, resolved)

    def write_text(self, text: str) -> None:
        """Write ``text`` (UTF-8; characters UTF-8 cannot carry are backslash-escaped) by the rules above."""
        self.write_bytes(text.encode("utf-8", "backslashreplace"))

    def write_bytes(self, data: bytes) -> None:
        """Write ``data`` by the rules above (a symlink written through, a regular file atomically)."""
        try:
            if self.stream_fd is not None:
                _write_fd(self.stream_fd, data)
            elif self.path is None:
                raise OutputError(f"{self.name}: nowhere to write")
            elif self.in_place:
                _write_in_place(self.path, data)
            else:
                _write_atomic(self.path, data)
        except OSError as exc:
            raise write_error(self.name, exc) from None

    def open_lines(self) -> "LineWriter":
        """A writer of lines that reach the target as they are written (a report written as the run goes): the
        runner's stream itself, a device or FIFO opened in place, a regular file created or truncated and written
        in place (not atomically: a reader may see the lines written so far, which is the point)."""
        try:
            if self.stream_fd is not None:
                return LineWriter(self, self.stream_fd, own=False)
            if self.path is None:
                raise OutputError(f"{self.name}: nowhere to write")
            if self.in_place:
                return LineWriter(self, _open_in_place(self.path), own=True)
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
            return LineWriter(self, os.open(self.path, flags, 0o666), own=True)
        except OSError as exc:
            raise OutputError(f"cannot write {self.name}: {_reason(exc)}") from None


def write_text(path: Union[str, os.PathLike], text: str) -> None:
    """Check ``path`` and write ``text`` to it (:class:`OutputTarget`); OutputError on any problem."""
    OutputTarget.check(path).write_text(text)


def _own_stream(name: str) -> Optional[int]:
    """1 or 2 when ``name`` is the runner's own stdout or stderr (the same open file), else None."""
    if not (name.startswith("/dev/") or name.startswith("/proc/")):
        return None
    for fd in (1, 2):
        try:
            if os.path.samestat(os.stat(name), os.fstat(fd)):
                return fd
        except OSError:
            continue
    return None


def _write_fd(fd: int, data: bytes) -> None:
    """Straight to the runner's stdout or stderr, after what the console has buffered."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    _write_all(fd, data)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _write_in_place(path: Path, data: bytes) -> None:
    """A device or FIFO: opened without creating, truncating or renaming anything."""
    fd = _open_in_place(path)
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)


def _open_in_place(path: Path) -> int:
    """A device or FIFO opened for writing without creating, truncating or renaming anything; a FIFO nobody
    reads is refused (ENXIO), not waited on."""
    flags = os.O_WRONLY | getattr(os, "O_NOCTTY", 0)
    is_fifo = stat.S_ISFIFO(os.stat(path).st_mode)
    try:
        fd = os.open(path, flags | (os.O_NONBLOCK if is_fifo else 0))
    except OSError as exc:
        if is_fifo and exc.errno == errno.ENXIO:
            raise OSError(errno.ENXIO, "it is a pipe that no process reads") from None
        raise
    if is_fifo:  # opened without blocking; now write with the reader's pace
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    return fd


def _write_atomic(path: Path, data: bytes) -> None:
    """A temporary file with a unique name beside ``path``, renamed onto it."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    import tempfile  # only when a file is written (start-up)

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class ConsoleStream:
    """The console as a text stream that cannot end the run.

    Each line reaches the reader when it is written, even through a pipe: a CI log or ``| tee`` shows
    progress as it happens, and a Ctrl-C message comes after the lines written before it. Characters the
    underlying stream's encoding cannot carry (a lone surrogate under UTF-8, anything non-ASCII under
    ``LANG=C`` or ``PYTHONIOENCODING=ascii:strict``) are backslash-escaped. When the reader goes away
    (``embconf run | head``), later writes are dropped and :attr:`lost` is set: the run goes on, its report
    files are written and its exit code stands.
    """

    def __init__(self, stream: Optional[TextIO]) -> None:
        self.stream = stream
        self.encoding = getattr(stream, "encoding", None) or "utf-8"
        self.lost = stream is None  # a stream closed before the runner started (``>&-``) has no reader

    def write(self, text: str) -> int:
        if not self.lost:
            try:
                assert self.stream is not None  # not lost
                self.stream.write(text.encode(self.encoding, "backslashreplace").decode(self.encoding, "replace"))
                if "\n" in text:
                    self.stream.flush()
            except OSError as exc:
                self._reader_gone(exc)
        return len(text)

    def flush(self) -> None:
        if not self.lost:
            try:
                assert self.stream is not None  # not lost
                self.stream.flush()
            except OSError as exc:
                self._reader_gone(exc)

    def isatty(self) -> bool:
        return not self.lost and hasattr(self.stream, "isatty") and bool(self.stream.isatty())  # type: ignore[union-attr]

    def _reader_gone(self, exc: OSError) -> None:
        if not (isinstance(exc, BrokenPipeError) or exc.errno in (errno.EPIPE, errno.EINVAL)):
            raise exc
        self.lost = True
        if self.stream is None:
            return
        try:  # what is still buffered would fail again at exit: point the descriptor at /dev/null
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.stream.fileno())
            os.close(devnull)
        except (OSError, AttributeError, ValueError):
            pass


def open_standard_streams() -> None:
    """Descriptors 0, 1 and 2 open (on the null device where the caller closed them, as in ``embconf run >&-``),
    so that no file, socket or pipe the runner opens later takes their number and a child's output cannot
    land in a report; a closed ``sys.stdout`` or ``sys.stderr`` (Python sets it to None) becomes a
    :class:`ConsoleStream` without a reader, so printing to it drops the text instead of failing."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    if sys.stdout is None:
        sys.stdout = ConsoleStream(None)
    if sys.stderr is None:
        sys.stderr = ConsoleStream(None)


PathLike = Union[str, "os.PathLike[str]"]


def as_target(target: Union[PathLike, OutputTarget]) -> OutputTarget:
    """``target`` itself when already checked, else the checked target of a path (for writers' signatures)."""
    return target if isinstance(target, OutputTarget) else OutputTarget.check(target)


class LineWriter:
    """A report written a line at a time as a run goes (:meth:`OutputTarget.open_lines`): each line reaches the
    file (or stream) when it is written, so a run killed halfway leaves the lines written so far. OutputError
    (one line) when a write fails."""

    def __init__(self, target: OutputTarget, fd: Optional[int], own: bool) -> None:
        self.target, self.fd, self.own = target, fd, own

    def write(self, text: str) -> None:
        if self.fd is None:
            raise OutputError(f"cannot write {self.target.name}: it is closed")
        data = text.encode("utf-8", "backslashreplace")
        try:
            if self.own:
                _write_all(self.fd, data)
            else:
                _write_fd(self.fd, data)
        except OSError as exc:
            raise write_error(self.target.name, exc) from None

    def close(self) -> None:
        if self.fd is not None and self.own:
            os.close(self.fd)
        self.fd = None
