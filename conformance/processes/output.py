"""What a child process printed: the tail the runner keeps (:class:`OutputTail`) and the two ways a reply
shows it (the peer's stderr after a mark, the worker's output since the last call)."""

from __future__ import annotations

import threading
from collections import deque

from embconf.processes.limits import DETAIL_LIMIT

KEEP = 64 * 1024  # bytes of a child's output kept


class OutputTail:
    """The last ``keep`` bytes (at least) a child printed, and how many it printed in all.

    Chunks are appended as they are read (by a drain thread or the waiting runner) and read back
    as text; a lock makes the two safe from different threads."""

    def __init__(self, keep: int = KEEP) -> None:
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self._keep = keep
        self._lock = threading.Lock()
        self.total = 0

    def append(self, chunk: bytes) -> None:
        with self._lock:
            self._chunks.append(chunk)
            self._size += len(chunk)
            self.total += len(chunk)
            while self._size - len(self._chunks[0]) >= self._keep:
                self._size -= len(self._chunks.popleft())

    def clear(self) -> None:
        """Forget everything printed so far (the count starts again at 0)."""
        with self._lock:
            self._chunks.clear()
            self._size = self.total = 0

    def data(self, mark: int = 0) -> bytes:
        """The bytes kept of what was printed after the first ``mark`` bytes."""
        with self._lock:
            data = b"".join(self._chunks)
            start = self.total - len(data)
        return data[max(mark - start, 0) :]

    def since(self, mark: int, limit: int = DETAIL_LIMIT) -> str:
        """What was printed after byte ``mark``, at most its last ``limit`` bytes, cut at a line ('...')."""
        data = self.data(mark)
        clipped = len(data) > limit
        text = data[-limit:].decode("utf-8", "replace")
        return ("...\n" + text.split("\n", 1)[-1] if clipped else text).rstrip("\n")

    def text(self, limit: int = DETAIL_LIMIT) -> str:
        """Everything printed since the last :meth:`clear`, as :func:`counted_tail` shows it."""
        with self._lock:
            data, total = b"".join(self._chunks), self.total
        return counted_tail(data, total, limit)


def counted_tail(data: bytes, total: int, limit: int = DETAIL_LIMIT) -> str:
    """The last ``limit`` bytes of ``data`` (the end of ``total`` bytes printed), saying how many are not shown."""
    shown = data[-limit:]
    cut = f"[{total - len(shown)} earlier bytes of output not shown]\n" if total > len(shown) else ""
    return cut + shown.decode("utf-8", "replace")
