"""Input arrays in memory the runner shares with its forked worker, so that the runner itself sees what
the implementation did to them (EMB-GEN-1) and code in the worker cannot hide it.

Where the platform forks, each worker inherits an :class:`Arena`: an anonymous shared mapping made
before the fork. Before a batch of calls goes out (the worker is then idle) the runner copies the
batch's plain numeric input arrays into it and sends :class:`SharedArray` placeholders in their place;
the worker hands the implementation arrays on that memory, uncopied. After each reply the runner
compares its own originals with the shared memory (:meth:`Placed.changes`). An array that does not fit
travels in the message as before and is checked in the worker. The implementation cannot shrink an
anonymous mapping under the runner: unmapping it in the worker leaves the runner's mapping intact.
"""

from __future__ import annotations

import mmap
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from embconf.adapters.guard import modified_inputs

ARENA_BYTES = 64 * 2**20  # address space reserved per worker; only the pages a batch touches are used
_ALIGN = 64


@dataclass(frozen=True)
class SharedArray:
    """Stands for an input array at ``offset`` in the worker's arena (what crosses the channel)."""

    offset: int
    dtype: str
    shape: tuple[int, ...]


@dataclass
class Placed:
    """One call's inputs as placed in the arena: the runner's originals and its views of the shared copies."""

    originals: dict[str, np.ndarray] = field(default_factory=dict)
    views: dict[str, np.ndarray] = field(default_factory=dict)

    def changes(self) -> list[str]:
        """The runner's own judgement: one message per shared input the call changed."""
        return modified_inputs(self.originals, self.views)


class Arena:
    """An anonymous shared mapping: made by the runner, inherited by one forked worker."""

    def __init__(self, size: int = ARENA_BYTES) -> None:
        self.memory = mmap.mmap(-1, size)  # MAP_SHARED: the fork's writes are the runner's to read
        self.size = size

    def place(self, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[tuple[str, dict[str, Any]]], list[Placed]]:
        """The calls with their shareable arrays replaced by placeholders, and what was placed per call.
        Call only while no call sent before is unanswered: the arena is reused from its start."""
        offset, sent, placed = 0, [], []
        for operation, inputs in calls:
            record, replaced = Placed(), dict(inputs)
            for name, value in inputs.items():
                if not _shareable(value) or offset + value.nbytes > self.size:
                    continue
                view = np.ndarray(value.shape, value.dtype, buffer=self.memory, offset=offset)
                view[...] = value
                record.originals[name], record.views[name] = value, view
                replaced[name] = SharedArray(offset, value.dtype.str, tuple(value.shape))
                offset += value.nbytes + (-value.nbytes % _ALIGN)
            sent.append((operation, replaced))
            placed.append(record)
        return sent, placed

    def views(self, inputs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """The worker's side: (the inputs that came in the message, arrays on the shared memory)."""
        plain = {name: value for name, value in inputs.items() if not isinstance(value, SharedArray)}
        shared = {
            name: np.ndarray(value.shape, np.dtype(value.dtype), buffer=self.memory, offset=value.offset)
            for name, value in inputs.items()
            if isinstance(value, SharedArray)
        }
        return plain, shared

    def close(self) -> None:
        try:
            self.memory.close()
        except BufferError:  # a view of it is still alive: the mapping goes with the last one
            pass


def _shareable(value: Any) -> bool:
    """Plain numeric arrays (not bfloat16, whose dtype does not survive its string form, nor objects)."""
    return isinstance(value, np.ndarray) and value.dtype.kind in "biuf"


def new_arena(start_method: str) -> Optional[Arena]:
    """An arena for a forked worker (None under spawn: nothing is shared, the worker checks alone)."""
    return Arena() if start_method == "fork" else None
