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

from typing import Any, Iterable, Optional, Protocol, cast

from embconf.adapters.base import WrappingAdapter
from embconf.model.contract import (
    Adapter,
    Forgetting,
    Planned,
    Planning,
    Preparing,
    Reason,
    Reply,
    Status,
    call_on_instance,
    renew,
)

PER_OPERATION = 2  # timeouts of one operation before its other cases are not run
IN_A_ROW = 4  # timeouts with no reply between them before no case is run
TOTAL = 5  # timeouts in a run before no case is run (with 10 s each: under a minute of hanging)


class HangPolicy(WrappingAdapter):
    """Wraps an adapter with timeouts, and stops calling it as the module docstring says. It implements the
    Protocols its adapter implements, no more (:func:`with_hang_policy` picks the class): wrapping an adapter
    that runs nothing ahead gives one that plans nothing."""

    def __init__(self, inner: Adapter) -> None:
        super().__init__(inner)
        self.by_operation: dict[str, int] = {}
        self.in_a_row = 0
        self.total = 0

    def refused(self, operation: str) -> None:
        """A call of ``operation`` was refused by the policy (an adapter that runs ahead drops its planned calls)."""

    def call_on(self, instance: int, operation: str, inputs: dict[str, Any]) -> Reply:
        refusal = self.refusal(operation)
        if refusal is not None:
            self.refused(operation)
            return Reply(Status.STOPPED, reason=Reason.HANG_POLICY, message=refusal)
        reply = call_on_instance(self.inner, instance, operation, inputs)
        if reply.status == Status.STOPPED and reply.reason != Reason.RUN_TIMEOUT:
            self.by_operation[operation] = self.by_operation.get(operation, 0) + 1
            self.in_a_row += 1
            self.total += 1
        elif reply.status != Status.STOPPED:
            self.in_a_row = 0
        return reply

    def renew(self) -> bool:
        """The next call on a newly loaded implementation, where the adapter held can renew (a worker)."""
        return renew(self.inner)

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


class PlanningHangPolicy(HangPolicy):
    """The hang policy on an adapter that runs announced calls ahead (:class:`Planning`, :class:`Forgetting`):
    calls the policy would refuse are never announced, and refused ones are dropped from what runs ahead."""

    def __init__(self, inner: PlanningAdapter) -> None:
        super().__init__(inner)
        self.ahead = inner

    def plan(self, calls: Iterable[Planned]) -> None:
        self.ahead.plan([call for call in calls if self.refusal(call.operation) is None])

    def forget(self, operation: str) -> None:
        self.ahead.forget(operation)

    def refused(self, operation: str) -> None:
        self.forget(operation)


class PreparingHangPolicy(PlanningHangPolicy):
    """The same on an adapter that also prepares what a run's dtypes need (:class:`Preparing`): the worker."""

    def __init__(self, inner: PreparingAdapter) -> None:
        super().__init__(inner)
        self.preparing = inner

    def prepare(self, dtypes: Iterable[str]) -> None:
        self.preparing.prepare(dtypes)


class PlanningAdapter(Adapter, Planning, Forgetting, Protocol):
    """An adapter that runs announced calls ahead: a protocol peer."""


class PreparingAdapter(PlanningAdapter, Preparing, Protocol):
    """An adapter that runs announced calls ahead and prepares dtypes: the worker."""


def with_hang_policy(inner: Adapter) -> HangPolicy:
    """``inner`` held to the hang policy, by the wrapper that implements exactly the Protocols it implements."""
    if isinstance(inner, Planning) and isinstance(inner, Forgetting):
        if isinstance(inner, Preparing):
            return PreparingHangPolicy(cast(PreparingAdapter, inner))
        return PlanningHangPolicy(cast(PlanningAdapter, inner))
    return HangPolicy(inner)
