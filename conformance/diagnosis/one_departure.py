"""One departure, one identity: a reading that measured a catalogue mistake's effect mixed with another's.

Two departures of one module can meet on one case, and the case then reads as neither: a generic reading
(``rope:frequencies:OP``: the frequencies differ, fitted to no named mistake) where a llama3 case has base
500000 and the module both ignores the base and its scaling. When replaying the run's fitted frequency mistake of
the same operation, on the case's inputs changed as the run's other fitted mistake changes them (the base ignored:
base 10000), gives the implementation's outputs, the reading is that mistake's (``frequency_departure``), and its
title says the base it was measured with.

A layer that reads its pos_encoding as no positions (``position_scale:0``) is the memory mistake of counting an
unknown pos_encoding as none (``mem.unknown_pos_as_none``) when the run shows that mistake and the layer's
pos_encoding is one that mistake reads as unknown (``unknown_pos_encoding``): measured on the case's own value,
never every position scale.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from embconf.corpus.fixtures import Case
from embconf.judging.compare import out_of_tolerance
from embconf.model.contract import Status
from embconf.model.record import Cause, RunRecord
from embconf.model.symptom import POSITION_SCALE
from embconf.reference.layer import POS_ENCODINGS

FREQUENCIES = "frequencies"
BASE_IGNORED = "rope.base_ignored"
DEFAULT_BASE = 10000.0  # the base a module that ignores the case's uses
UNKNOWN_POS = "mem.unknown_pos_as_none"


def _frequency_reading(cause: Cause) -> tuple[str, str] | None:
    """(operation, fit) of a frequency reading ('' for the generic one), else None."""
    key = cause.symptom
    if cause.is_mutant or key is None or key.family != "rope" or key.part(0) != FREQUENCIES:
        return None
    return key.part(1), key.part(2)


def frequency_departure(run: RunRecord, by_id: Mapping[str, Case]) -> None:
    """Each generic frequency reading given the identity of the run's one fitted frequency mistake of its
    operation whose reply (with the base the run's base mistake uses, when it shows one) is the case's outputs."""
    fitted: dict[str, dict[str, Cause]] = {}  # operation -> identity -> a fitted cause (first seen)
    for result in run.results:
        for cause in result.causes:
            found = _frequency_reading(cause)
            if found and found[1] and cause.mistake:
                fitted.setdefault(found[0], {}).setdefault(cause.identity, cause)
    for result in run.results:
        case = by_id.get(result.id)
        if case is None or not result.actual:
            continue
        causes = []
        for cause in result.causes:
            found = _frequency_reading(cause)
            mistakes = fitted.get(found[0], {}) if found and not found[1] else {}
            owner = _explaining(case, result.actual, mistakes)
            causes.append(cause if owner is None else _folded(cause, owner, case, mistakes))
        result.causes = causes


def _explaining(case: Case, actual: Mapping[str, Any], mistakes: Mapping[str, Cause]) -> str | None:
    """The one fitted mistake (besides the base ignored) whose reply, with the base the run uses, is ``actual``."""
    bases = [DEFAULT_BASE] if BASE_IGNORED in mistakes else [None]
    owners = [
        identity
        for identity in mistakes
        if identity != BASE_IGNORED and any(_replays(identity, case, actual, base) for base in bases)
    ]
    return owners[0] if len(owners) == 1 else None


def _replays(identity: str, case: Case, actual: Mapping[str, Any], base: float | None) -> bool:
    """Whether the mutant of mistake ``identity`` for the case's operation, on the case's inputs (``base`` in
    place of the case's), gives ``actual`` within the case's tolerance."""
    from embconf.diagnosis.replay import mutant_reply
    from embconf.mutants import catalogue

    mutant = next(
        (m for m in catalogue() if identity in (m.id, m.mistake) and case.operation in m.covered_operations), None
    )
    if mutant is None:
        return False
    inputs = dict(case.inputs())
    if base is not None:
        inputs["base"] = base
    reply = mutant_reply(mutant, case, inputs)
    if reply.status != Status.OUTPUTS or not reply.outputs:
        return False
    for name, value in reply.outputs.items():
        want, have = np.asarray(value), np.asarray(actual.get(name))
        tol = case.tolerance.get(name, {"kind": "exact"})
        if want.shape != have.shape or out_of_tolerance(want, have, tol).any():
            return False
    return True


def _folded(cause: Cause, owner: str, case: Case, mistakes: Mapping[str, Cause]) -> Cause:
    """``cause`` as mistake ``owner``'s, its title saying the base it was measured with and what the mistake does."""
    from embconf.mutants import get

    try:
        does = f"the module {get(owner).description}"
    except KeyError:
        does = f"they are {owner}'s"
    base = case.inputs().get("base")
    if BASE_IGNORED in mistakes and base is not None and float(base) != DEFAULT_BASE:
        does = f"with base {DEFAULT_BASE:g} in place of the case's {float(base):g} (the base ignored), {does}"
    return replace(cause, mistake=owner, title=f"{cause.title}; {does}")


def unknown_pos_encoding(run: RunRecord, by_id: Mapping[str, Case]) -> None:
    """Each "positions not added" reading of a layer whose pos_encoding the run's memory mistake reads as unknown
    (so as none) given that mistake's identity."""
    shown = any(c.id == UNKNOWN_POS for result in run.results for c in result.causes)
    if not shown:
        return
    for result in run.results:
        case = by_id.get(result.id)
        config = case.inputs().get("config") if case is not None else None
        if not isinstance(config, Mapping) or config.get("pos_encoding", "learned") in POS_ENCODINGS:
            continue
        result.causes = [replace(c, mistake=UNKNOWN_POS) if _no_positions(c) else c for c in result.causes]


def _no_positions(cause: Cause) -> bool:
    key = cause.symptom
    return not cause.is_mutant and key is not None and key.family == POSITION_SCALE and key.part(0) == "0"
