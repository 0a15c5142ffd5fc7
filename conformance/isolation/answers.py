"""What the runner makes of what a worker sends or leaves behind: a reply checked (the rows it holds), the
reply of a call after which the worker's working directory had moved, and why a worker could not load the
implementation or went on no more, in words (its last output)."""

from __future__ import annotations

from typing import Any

from embconf.isolation.handle import WorkerHandle
from embconf.isolation.worker import FAILURE_PREFIX
from embconf.model.contract import Planned, Reply, Status
from embconf.model.encoding import PinnedRows, pinned_rows_problem
from embconf.processes.failures import ChildFailure, Garbled, Late, OutOfMemory


def checked_reply(message: Any, call: Planned) -> tuple[Reply, bool]:
    """(the reply, whether it spoilt the worker) from a message of the worker, whose outputs hold only the rows
    ``call`` asked for where they are not whole; Garbled otherwise."""
    if isinstance(message, tuple) and len(message) == 3 and message[0] == "reply" and isinstance(message[1], Reply):
        reply = message[1]
        for name, value in reply.outputs.items() if isinstance(reply.outputs, dict) else ():
            problem = pinned_rows_problem(value, call.rows.get(name)) if isinstance(value, PinnedRows) else ""
            if problem:
                raise Garbled(f"its output {str(name)[:40]!r}: {problem}")
        return reply, bool(message[2])
    if isinstance(message, tuple) and len(message) == 2 and message[0] == "failed":  # the worker says why
        raise Garbled(str(message[1]))
    raise Garbled(f"expected a reply, got {type(message).__name__}")


def moved(reply: Reply, change: str) -> Reply:
    """The reply of a call after which the runner found the worker's working directory changed ``change``."""
    said = reply.message if reply.status == Status.RAISED else "returned normally"
    return Reply(
        Status.RAISED,
        message=f"{said}, but the worker's working directory changed {change} during this call or an earlier one "
        "of its batch (seen by the runner; global state must be left as found)",
        detail=reply.detail,
    )


def while_loading(failure: ChildFailure, how: str) -> str:
    """Why a worker that was loading the implementation gave no answer (``how``: how it ended)."""
    if isinstance(failure, Late):
        return "it did not finish loading in time"
    if isinstance(failure, OutOfMemory):
        return f"it {failure} while loading it"
    if isinstance(failure, Garbled):
        return f"the worker sent an unreadable reply ({failure})"
    return f"the worker process {how} while loading it"


def own_failure(output: str) -> str:
    """Why the worker's own machinery could not go on, as it printed it last (:func:`worker._last_words`)."""
    said = [line for line in output.splitlines() if line.startswith(FAILURE_PREFIX)]
    return f" ({said[-1][len(FAILURE_PREFIX) :][:300]})" if said else ""


def last_words(worker: WorkerHandle) -> str:
    """The last line the worker printed, as the end of a one-line reason ('' when it printed nothing)."""
    lines = [line.strip() for line in worker.output.text().splitlines() if line.strip()]
    return f"; its last output: {lines[-1][:300]}" if lines else ""
