"""What crosses between the runner and a worker: pickled messages over a socket (:class:`_Channel`), the
worker's captured output (:class:`_Captured`), and the allow-list that replies are unpickled with
(:func:`load_reply`), with :func:`sendable`, which makes a value fit it."""

from __future__ import annotations

import io
import os
import pickle
import socket
import struct
from typing import Any, Optional, Sequence

import numpy as np

from embconf.adapters.loading import describe_exception
from embconf.model.contract import Reason, Status
from embconf.processes.failures import Garbled
from embconf.processes.output import KEEP, OutputTail, counted_tail

DRAIN_CHUNKS = 16  # reads of 64 KiB per wake-up, so a flood cannot starve the reply


class _Captured:
    """What a worker printed: drained from a pipe (fork) or read back from a file (spawn); the tail is kept."""

    def __init__(self, fd: int, path: Optional[str] = None) -> None:
        self.fd, self.path = fd, path
        self.kept, self.open = OutputTail(), True
        if path is None:
            os.set_blocking(fd, False)

    def waitables(self) -> list[int]:
        return [self.fd] if self.path is None and self.open else []

    def drain(self) -> None:
        """Read what is there now (a bounded amount), keeping only the tail."""
        for _ in range(DRAIN_CHUNKS if self.waitables() else 0):
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                return
            if not chunk:
                self.open = False
                return
            self.kept.append(chunk)

    def reset(self) -> None:
        self.drain()
        if self.path is not None:
            os.ftruncate(self.fd, 0)
        self.kept.clear()

    def text(self) -> str:
        """The last DETAIL_LIMIT characters printed since the last reset, noting what was cut."""
        self.drain()
        return self.kept.text() if self.path is None else counted_tail(*self._file_tail())

    def _file_tail(self) -> tuple[bytes, int]:
        size = os.fstat(self.fd).st_size
        os.lseek(self.fd, max(size - KEEP, 0), os.SEEK_SET)
        return os.read(self.fd, KEEP), size

    def close(self) -> None:
        os.close(self.fd)
        if self.path is not None:
            try:
                os.unlink(self.path)
            except OSError:
                pass


_FRAME = struct.Struct("<QQI")  # length of the body, of its pickle, number of out-of-band buffers
_ALIGN = 16  # out-of-band buffers start at multiples of this in the body, so arrays built on them are aligned
SMALL_MESSAGE = 64 * 1024  # below this a message goes out in one write


class _Channel:
    """Pickled messages over a stream socket; numpy arrays travel out of band, copied by the kernel only.

    A message is a frame header, then a body: the buffer sizes, the pickle, the buffers (aligned)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def send(self, message: Any) -> None:
        buffers: list[pickle.PickleBuffer] = []
        data = pickle.dumps(message, protocol=5, buffer_callback=buffers.append)
        raws = [buffer.raw() for buffer in buffers]
        head = struct.pack(f"<{len(raws)}Q", *(raw.nbytes for raw in raws)) + data
        parts = [head, *_aligned(len(head), raws)]
        body = sum(memoryview(part).nbytes for part in parts)
        frame = _FRAME.pack(body, len(data), len(raws))
        if body < SMALL_MESSAGE:
            self.sock.sendall(b"".join([frame, *parts]))
            return
        self.sock.sendall(frame)
        for part in parts:
            self.sock.sendall(part)

    def receive(self, limit: int) -> tuple[memoryview, list[memoryview]]:
        """(the pickle, its out-of-band buffers) of the next message; EOFError when the peer has gone."""
        body_size, data_size, count = _FRAME.unpack(self._exact(_FRAME.size))
        if body_size > limit:
            raise ValueError(f"a message of {body_size} bytes exceeds the limit of {limit}")
        body = memoryview(self._exact(body_size))
        sizes = struct.unpack_from(f"<{count}Q", body)
        offset = 8 * count + data_size
        data, buffers = body[8 * count : offset], []
        for size in sizes:
            offset += -offset % _ALIGN
            buffers.append(body[offset : offset + size])
            offset += size
        if offset > body_size:
            raise ValueError("a message's buffers overrun its body")
        return data, buffers

    def _exact(self, size: int) -> bytearray:
        buffer = bytearray(size)
        view, got = memoryview(buffer), 0
        while got < size:
            count = self.sock.recv_into(view[got:])
            if not count:
                raise EOFError("the peer closed the connection")
            got += count
        return buffer

    def close(self) -> None:
        self.sock.close()


def _aligned(start: int, raws: list[memoryview]) -> list[Any]:
    """``raws`` with zero padding before each, so each begins at a multiple of _ALIGN from the body's start."""
    parts: list[Any] = []
    position = start
    for raw in raws:
        pad = -position % _ALIGN
        parts += [bytes(pad), raw]
        position += pad + raw.nbytes
    return parts


# ----- what the runner accepts back --------------------------------------------------------------------

_NUMPY_MODULES = frozenset(
    {"numpy", "numpy.core.multiarray", "numpy._core.multiarray", "numpy.core.numeric", "numpy._core.numeric"}
)
_NUMPY_NAMES = frozenset({"dtype", "ndarray", "scalar", "_reconstruct", "_frombuffer"})
_ALLOWED = frozenset(
    {
        ("embconf.model.contract", "Reply"),
        ("embconf.model.contract", "Capabilities"),
        ("embconf.model.contract", "Status"),
        ("embconf.model.contract", "Reason"),
        ("embconf.model.encoding", "PinnedRows"),  # an output's rows the runner asked for alone (checked on arrival)
        (__name__, "Unsendable"),
        ("builtins", "complex"),
        ("builtins", "set"),
        ("builtins", "frozenset"),
        ("builtins", "slice"),
        ("ml_dtypes", "bfloat16"),  # the dtype of bfloat16 arrays (spec 1.1, EMB-HLF-2): a scalar type, no code runs
    }
)


_ENUMS = (Status, Reason)  # the enums a reply holds


def _enum_member(owner: Any, name: Any) -> Any:
    """What ``builtins.getattr`` may rebuild in a reply: a member of the reply's own enums, nothing else (some
    Python releases, Debian's 3.11.2 among them, pickle an enum member as ``getattr(Enum, name)``)."""
    if owner in _ENUMS and isinstance(name, str) and name in owner.__members__:
        return owner[name]
    raise pickle.UnpicklingError("a reply may use builtins.getattr only for a member of Status or Reason")


class _ReplyUnpickler(pickle.Unpickler):
    """Unpickles only replies: numpy arrays and scalars, plain Python values and embconf's own records."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("builtins", "getattr"):
            return _enum_member
        if (module, name) in _ALLOWED or (module in _NUMPY_MODULES and name in _NUMPY_NAMES):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"a reply may not contain {module}.{name}")


def load_reply(data: Any, buffers: Sequence[Any] = ()) -> Any:
    try:
        return _ReplyUnpickler(io.BytesIO(data), buffers=buffers).load()
    except Exception as exc:  # whatever a garbled pickle raises
        raise Garbled(describe_exception(exc)) from None


class Unsendable:
    """Stands in for a returned value that cannot cross to the runner (a generator, a custom object)."""

    def __init__(self, value: Any) -> None:
        self.text = _safe_repr(value)[:200]

    def __repr__(self) -> str:
        return self.text


def _safe_repr(value: Any) -> str:
    try:
        return repr(value)
    except Exception:
        return "(unprintable)"


SENDABLE_DEPTH = 32  # containers nested deeper than this are not sent (they could not be read back safely)


def sendable(value: Any, depth: int = 0) -> Any:
    """``value`` made of plain types only: arrays as base ndarrays, Python scalars as the built-in types,
    containers rebuilt (up to SENDABLE_DEPTH deep), and anything else replaced by an :class:`Unsendable`."""
    if isinstance(value, np.ndarray):
        return (
            np.asarray(value) if value.dtype.kind in "biufcUS" or value.dtype.name == "bfloat16" else Unsendable(value)
        )
    if isinstance(value, np.generic):
        return value if value.dtype.kind in "biufcUS" or value.dtype.name == "bfloat16" else Unsendable(value)
    for plain in (bool, int, float, complex, str, bytes):
        if isinstance(value, plain):
            return plain(value)  # type: ignore[arg-type]  # value is an instance of plain: a copy of the builtin type
    if value is None:
        return None
    if depth >= SENDABLE_DEPTH and type(value) in (list, tuple, set, frozenset, dict):
        return Unsendable(value)
    if type(value) in (list, tuple, set, frozenset):
        return type(value)(sendable(item, depth + 1) for item in value)
    if type(value) is dict:
        return {sendable(key, depth + 1): sendable(item, depth + 1) for key, item in value.items()}
    return Unsendable(value)
