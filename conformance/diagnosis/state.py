"""State measured, not inferred: a case that failed inside the run and passed when it was run again alone on a fresh
instance (:mod:`embconf.judging.alone`) failed only after other calls ran. Its cause is state carried across calls,
citing the cases, and no per-case mistake: what it returned in the run was another call's leftover, so no mistake
is measured on it (nor ruled out by it). A gradient that is the right one plus exactly an earlier call's (a buffer
kept and never zeroed, ``history_symptom``) is the same state, said as measured.

Dynamic-scaling state is named from what the calls of a case of calls measured (EMB-STA-2): a failing call whose
outputs are those of dynamic NTK frequencies grown for an earlier, longer call on the instance (the reference with
the earlier call's length, replayed) kept them, whichever rule of keeping the code follows; said where no catalogue
mistake matched the call."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Optional

import numpy as np

from embconf.corpus.fixtures import Case
from embconf.diagnosis.symptoms.base import symptom
from embconf.judging.alone import Alone
from embconf.model.contract import Reply
from embconf.model.outcomes import DIAGNOSED, FAIL, CaseResult
from embconf.model.record import Cause, RunRecord
from embconf.model.rope import ROTATIONS
from embconf.model.symptom import STALE_BUFFER, STATE, SymptomKey

CARRIED = str(SymptomKey.of(STATE, "carried"))  # the mistake: one entry whatever the operations that show it
TITLE = "fails only after other calls ran: state carried across calls (each case passes when run alone on {fresh})"
HINT = (
    "keep nothing between calls that changes a result, or key what is kept by everything the result depends on "
    "(the inputs' values, not only their shape or length) (EMB-STA-1)"
)


def carried(run: RunRecord, alone: Alone) -> set[str]:
    """The failing cases that passed alone (state carried), except those whose answers changed from one run to the
    next (nondeterministic: passing alone says nothing of state there)."""
    return {
        r.id
        for r in run.results
        if r.id in alone.passed and r.outcome in DIAGNOSED and r.id not in run.nondeterministic
    }


def state_carried(run: RunRecord, by_id: Mapping[str, Case], alone: Alone, measured: Mapping[str, list[Cause]]) -> None:
    """Each case that failed in the run and passed alone gets state carried as its one cause (a stale gradient
    buffer, when ``measured`` on it, said as such)."""
    ids = carried(run, alone)
    for result in run.results:
        case = by_id.get(result.id)
        if result.id in ids and case is not None:
            stale = [c for c in measured.get(result.id, []) if _family(c) == STALE_BUFFER]
            result.causes = stale[:1] or [_carried(case, alone)]


def dynamic_state(run: RunRecord, by_id: Mapping[str, Case]) -> None:
    """Each failing call of a case of calls that no catalogue mistake matched and whose outputs are the frequencies
    grown for an earlier, longer call: that state kept is its one cause."""
    for result in run.results:
        case = by_id.get(result.id)
        if case is None or result.outcome != FAIL or any(c.is_mutant and c.complete for c in result.causes):
            continue
        kept = dynamic_kept(case, result)
        if kept is not None:
            result.causes = [kept]


def dynamic_kept(case: Case, result: CaseResult) -> Optional[Cause]:
    """The reading "frequencies grown for an earlier call kept" when the call's outputs are the reference's with
    the dynamic NTK frequencies of an earlier, longer call on its instance, else None."""
    from embconf.adapters.base import call_python
    from embconf.diagnosis.replay import reply_matches
    from embconf.mutants.rope import Slip, backward, forward

    inputs = case.inputs()
    if case.operation not in ROTATIONS or not case.before or not _dynamic(inputs.get("scaling")):
        return None
    own = _length(inputs)
    original = int(inputs["scaling"].get("original_max_position_embeddings", 0))
    lengths = sorted({_length(c.inputs()) for c in case.before if _dynamic(c.inputs().get("scaling"))}, reverse=True)
    operation = forward if case.operation == ROTATIONS[0] else backward
    for length in (n for n in lengths if n > max(own, original)):
        reply: Reply = call_python(case.operation, operation(Slip(largest=length - 1)), **inputs)
        if reply_matches(case, inputs, reply, result):
            return _dynamic_kept(case, own, length)
    return None


def _dynamic_kept(case: Case, own: int, length: int) -> Cause:
    said = (
        "dynamic NTK: frequencies grown for an earlier, longer call on the instance are used by a later, shorter "
        "call: state kept across calls (EMB-STA-2)"
    )
    return symptom(
        SymptomKey.of(STATE, "dynamic_kept", case.operation),
        f"{case.label} (length {own}) rotates with the frequencies grown for an earlier call's length {length}, "
        f"not its own: dynamic NTK state kept across calls (EMB-STA-2)",
        "compute each call's frequencies from its own max(position_ids) + 1 (EMB-ROPE-8): grow them for a long "
        "call, and compute them again, not keep them, for every later call (EMB-STA-2)",
        title=said,
        mistake=str(SymptomKey.of(STATE, "dynamic_kept")),  # one mistake, forward and backward
        kept_length=length,
    )


def _dynamic(scaling: Any) -> bool:
    return isinstance(scaling, Mapping) and scaling.get("rope_type") == "dynamic"


def _length(inputs: Mapping[str, Any]) -> int:
    """A call's length for dynamic NTK: its largest position + 1."""
    return int(np.max(np.asarray(inputs.get("position_ids", 0)), initial=0)) + 1


def one_state(run: RunRecord) -> None:
    """State carried across calls and the one state mistake the run names elsewhere (a catalogue mistake in state
    kept between calls, dynamic NTK frequencies kept, a stale gradient buffer, on cases of calls) are one defect:
    the carried cases join that mistake's entry. With none, or several, they stay an entry of their own."""
    others = {c.identity for r in run.results for c in r.causes if c.complete and _kept_state(c)} - {CARRIED}
    if len(others) != 1:
        return
    (identity,) = others
    for result in run.results:
        result.causes = [replace(c, mistake=identity) if c.identity == CARRIED else c for c in result.causes]


def _kept_state(cause: Cause) -> bool:
    """Whether a cause is a mistake in state kept between calls."""
    if cause.is_mutant:
        from embconf.mutants import registry

        mutant = registry().get(cause.key)
        return mutant is not None and mutant.fresh is not None
    return _family(cause) in (STATE, STALE_BUFFER)


def _carried(case: Case, alone: Alone) -> Cause:
    title = TITLE.format(fresh=alone.fresh)
    return symptom(
        SymptomKey.of(STATE, "carried", case.operation),
        f"{case.label} fails after the calls before it in the run and passes when run again alone on {alone.fresh}: "
        f"state carried across calls changed its result ({alone.said()})",
        HINT,
        title=title,
        mistake=CARRIED,
    )


def _family(cause: Cause) -> str:
    key = cause.symptom
    return key.family if key is not None else ""


__all__ = ["CARRIED", "carried", "dynamic_kept", "dynamic_state", "one_state", "state_carried"]
