"""The hang policy: a hang costs a few case timeouts, not one per case.

Each case waits at most the case timeout (10 s by default) and a case over it is a ``timeout``. After
that the runner stops sending the implementation the cases most likely to hang too:

- after PER_OPERATION timeouts of one operation, its remaining cases are not run;
- after IN_A_ROW timeouts with no other reply between them, or TOTAL in the whole run, no remaining
  case is run.

A case not run is reported as a ``timeout`` (a problem: the run fails) whose message says why, e.g.
"not run: embedding_backward timed out on 2 earlier cases". The same policy holds for the worker and
for protocol peers (:func:`open_adapter` wraps both); ``--in-process`` has no timeouts at all.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

from embconf.adapters.base import AdapterBase
from embconf.model.contract import Adapter, Capabilities, Planned, Reason, Reply, Status

PER_OPERATION = 2  # timeouts of one operation before its other cases are not run
IN_A_ROW = 4  # timeouts with no reply between them before no case is run
TOTAL = 5  # timeouts in a run before no case is run (with 10 s each: under a minute of hanging)


class HangPolicy(AdapterBase):
    """Wraps an adapter with timeouts, and stops calling it as the module docstring says."""

    def __init__(self, inner: Adapter) -> None:
        self.inner = inner
        self.kind, self.target = inner.kind, inner.target
        self.by_operation: dict[str, int] = {}
        self.in_a_row = 0
        self.total = 0

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    def capabilities(self) -> Capabilities:
        return self.inner.capabilities()

    def plan(self, calls: Iterable[Planned]) -> None:
        plan = getattr(self.inner, "plan", None)
        if plan is not None:
            plan([call for call in calls if self.refusal(call[0]) is None])

    def prepare(self, dtypes: Iterable[str]) -> None:
        prepare = getattr(self.inner, "prepare", None)
        if prepare is not None:
            prepare(dtypes)

    def close(self) -> None:
        self.inner.close()

    def call(self, operation: str, inputs: dict[str, Any]) -> Reply:
        refusal = self.refusal(operation)
        if refusal is not None:
            forget = getattr(self.inner, "forget", None)
            if forget is not None:
                forget(operation)
            return Reply(Status.STOPPED, reason=Reason.HANG_POLICY, message=refusal)
        reply = self.inner.call(operation, inputs)
        if reply.status == Status.STOPPED and reply.reason != Reason.RUN_TIMEOUT:
            self.by_operation[operation] = self.by_operation.get(operation, 0) + 1
            self.in_a_row += 1
            self.total += 1
        elif reply.status != Status.STOPPED:
            self.in_a_row = 0
        return reply

    def refusal(self, operation: str) -> Optional[str]:
        """Why a call of ``operation`` is not made now (the policy), or None when it is."""
        if self.in_a_row >= IN_A_ROW:
            return f"not run: the implementation timed out on {self.in_a_row} earlier cases in a row (the hang policy)"
        if self.total >= TOTAL:
            return f"not run: the implementation timed out on {self.total} earlier cases (the hang policy)"
        count = self.by_operation.get(operation, 0)
        if count >= PER_OPERATION:
            return f"not run: {operation} timed out on {count} earlier cases (the hang policy)"
        return None
