"""A case of calls on one instance (spec section 9.7, EMB-STA-1): its calls made in order on one fresh instance
of the implementation, each judged against its own golden. The case's outcome is its first call that does not
pass, with that call's number; a call whose inputs repeat an earlier call's must also return that call's bits."""

from __future__ import annotations

import json
from collections.abc import Mapping
from itertools import count
from typing import Any, Callable, Optional

import numpy as np

from embconf.corpus.fixtures import Case
from embconf.judging.messages import reproduction
from embconf.model.contract import Adapter, Capabilities, Reply, Status, call_on_instance
from embconf.model.outcomes import FAIL, PASS, CaseResult

_INSTANCES = count(1)
Judge = Callable[[Case, Reply, Optional[Capabilities]], CaseResult]


def new_instance() -> int:
    """A number no instance of this process has had: each run of a case of calls gets a fresh instance."""
    return next(_INSTANCES)


def sequence_inapplicable(case: Case, caps: Capabilities) -> Optional[str]:
    """Why a case of calls does not apply (one of its operations or features not claimed), or None."""
    return next((reason for op in case.operations if (reason := caps.applies(op, case.features))), None)


def run_sequence(adapter: Adapter, case: Case, caps: Optional[Capabilities], instance: int, judge: Judge) -> CaseResult:
    """Every call of ``case`` on ``instance``, each judged by ``judge(call, reply, caps)``: the first that does not
    pass is the case's result (its number in ``call``, and in its message), else the last call's. Every call is
    made, after a failing one too, as the plan announced them (an adapter that runs calls ahead keeps to it), but
    none after a call that timed out or crashed (its process is gone, and more timeouts would stop the run)."""
    answered: dict[str, tuple[int, Mapping[str, Any]]] = {}  # a call's inputs -> the first call with them
    decided: Optional[CaseResult] = None
    for number, call in enumerate(case.calls, 1):
        reply = call_on_instance(adapter, instance, call.operation, call.inputs())
        if reply.status in (Status.STOPPED, Status.DIED) and decided is not None:
            break
        if decided is not None:
            continue
        result = judge(call, reply, caps)
        if result.outcome == PASS and reply.status == Status.OUTPUTS:
            result = _same_as_before(call, reply, number, answered) or result
        if result.outcome != PASS:
            result.call = number  # the message names it too (the call's label)
            decided = result
            if reply.status in (Status.STOPPED, Status.DIED):
                break
        elif number == len(case.calls):
            decided = result
    assert decided is not None  # a case of calls has two or more (the fixture loader checks it)
    return decided


def _same_as_before(
    call: Case, reply: Reply, number: int, answered: dict[str, tuple[int, Mapping[str, Any]]]
) -> Optional[CaseResult]:
    """A failure when an earlier call with the same inputs returned other bits (EMB-STA-1), else None (and the
    call's outputs are remembered for the calls after it)."""
    key = json.dumps(call.raw_inputs, sort_keys=True)
    if key not in answered:
        answered[key] = (number, reply.outputs)
        return None
    first, earlier = answered[key]
    differing = [name for name, value in reply.outputs.items() if not _same_bits(earlier.get(name), value)]
    if not differing:
        return None
    headline = (
        f"{', '.join(repr(name) for name in differing)} not bit for bit what call {first} returned for the same "
        "inputs on this instance (EMB-STA-1: a repeated call gives the same result)"
    )
    return CaseResult(call.id, call.requirements, call.features, call.operation, FAIL, reproduction(call, headline))


def _same_bits(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    return type(a) is type(b) and (a == b or (a != a and b != b))


__all__ = ["new_instance", "run_sequence", "sequence_inapplicable"]
