"""A forked worker never finalizes the runner's objects: a collection in the worker (an implementation's own
``gc.collect()``, the bench's memory measurement) would run their finalizers, and a finalizer may wait forever on
a lock a thread of the runner held at the fork (onnxruntime's session does: the bench hung on it)."""

from __future__ import annotations

import gc
import os
import threading
from pathlib import Path

import numpy as np

from embconf.isolation import IsolatedAdapter
from embconf.model.contract import Status

HELD = threading.Lock()  # held by a thread of the runner while the worker is forked


class Finalized:
    """Cyclic garbage of the runner whose finalizer records where it ran and waits on the held lock."""

    def __init__(self, record: Path) -> None:
        self.record, self.cycle = record, self

    def __del__(self) -> None:
        with open(self.record, "a", encoding="utf-8") as out:
            out.write(f"{os.getpid()}\n")
        if HELD.acquire(timeout=5):  # the worker's copy of the lock is held by a thread the worker does not have
            HELD.release()


def test_a_collection_in_the_worker_finalizes_nothing_of_the_runner(tmp_path: Path) -> None:
    record = tmp_path / "finalized"
    module = tmp_path / "collects.py"
    module.write_text(
        "import gc\nimport numpy as np\n\n\ndef embedding_forward(weight, ids):\n"
        "    gc.collect()  # an implementation's own collection\n    return np.take(weight, ids, axis=0)\n",
        encoding="utf-8",
    )
    release = threading.Event()
    holder = threading.Thread(target=lambda: (HELD.acquire(), release.wait(), HELD.release()))
    gc.disable()  # the garbage waits for a collection, as a runner's may between two of its own
    try:
        Finalized(record)
        holder.start()
        adapter = IsolatedAdapter(f"functions:{module}")
        try:
            reply = adapter.call("embedding_forward", {"weight": np.eye(3, dtype=np.float32), "ids": np.array([2])})
        finally:
            adapter.close()
    finally:
        release.set()
        holder.join()
        gc.enable()
        gc.collect()  # the runner finalizes its own garbage
    assert reply.status == Status.OUTPUTS
    assert record.read_text(encoding="utf-8").split() == [str(os.getpid())]  # by the runner, never by the worker
