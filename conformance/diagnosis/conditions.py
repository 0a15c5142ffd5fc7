"""Run-level conditions: when a symptom happens, measured across the run's cases of the same operation.

A symptom seen on some cases of an operation and not on others is stated with the condition that separates
them, when one of a few plain properties does exactly (every case it happens on has it, no other case of that
operation does): a parameter that gets a gradient only for some option value, an exception raised exactly when
``embed_dim`` is odd or the ids are 0-d. Nothing is added when no property separates them. A window one past
the end that is accepted is called an off-by-one length check only when the run shows a check that counts
start_pos: a longer window with start_pos > 0 refused as it must be. A coarse refusal of the last window that
fits is called an off-by-one length check only when the same check refuses no valid window with room to spare.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Callable, Optional

import numpy as np

from embconf.corpus.fixtures import Case
from embconf.diagnosis.symptoms.errors import window_of
from embconf.model.contract import UNSPECIFIED
from embconf.model.outcomes import ERROR, FAIL, PASS
from embconf.model.record import RunRecord
from embconf.model.symptom import CONSTRUCTOR, NO_GRADIENT, SEPARATOR, UNTYPED


def conditional_gradients(run: RunRecord, by_id: dict[str, Case]) -> None:
    """A parameter that got no gradient on some cases: does it get one exactly when a config option differs?"""
    for result in run.results:
        for number, cause in enumerate(result.causes):
            key = cause.symptom
            if key is None or key.family != NO_GRADIENT:
                continue
            operation, name = key.part(0), SEPARATOR.join(key.parts[1:])
            got, missed = _options_by_outcome(run, by_id, operation, name)
            for option in sorted({k for config in got + missed for k in config}):
                without, with_ = {repr(c.get(option)) for c in missed}, {repr(c.get(option)) for c in got}
                if got and missed and not without & with_:
                    when = f"; it gets one when {option} is {' or '.join(sorted(with_))}, never when it is {' or '.join(sorted(without))}"
                    stated = replace(
                        cause,
                        summary=cause.summary + when,
                        title=cause.title + when,
                        measured={**cause.measured, "option": option},
                    )
                    result.causes = [*result.causes[:number], stated, *result.causes[number + 1 :]]
                    break


def _options_by_outcome(
    run: RunRecord, by_id: dict[str, Case], operation: str, name: str
) -> tuple[list[dict], list[dict]]:
    """The configs of the cases of ``operation`` whose ``name`` got an array, and of those where it got None."""
    got: list[dict] = []
    missed: list[dict] = []
    for result in run.results:
        case = by_id.get(result.id)
        if (
            case is None
            or case.operation != operation
            or result.actual is None
            or not isinstance(case.expected_outputs.get(name), np.ndarray)
        ):
            continue
        config = case.inputs().get("config")
        if isinstance(config, dict):
            (missed if result.actual.get(name) is None else got).append(config)
    return got, missed


JUDGED = (PASS, FAIL, ERROR)  # outcomes that say whether the case raised


def _embed_dim(inputs: Mapping[str, Any]) -> Optional[int]:
    config = inputs.get("config")
    if isinstance(config, Mapping) and isinstance(config.get("embed_dim"), int):
        return int(config["embed_dim"])
    if isinstance(inputs.get("embed_dim"), (int, np.integer)):
        return int(inputs["embed_dim"])
    for name in ("weight", "table", "x"):
        value = inputs.get(name)
        if isinstance(value, np.ndarray) and value.ndim >= 1:
            return int(value.shape[-1])
    return None


def _ids_ndim(inputs: Mapping[str, Any]) -> Optional[int]:
    for name in ("ids", "tokens", "indices"):
        value = inputs.get(name)
        if isinstance(value, np.ndarray):
            return value.ndim
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):  # a single id held as a number
            return 0
    return None


def _property(
    measure: Callable[[Mapping[str, Any]], Optional[int]], test: Callable[[int], bool]
) -> Callable[[Mapping[str, Any]], Optional[bool]]:
    def holds(inputs: Mapping[str, Any]) -> Optional[bool]:
        value = measure(inputs)
        return None if value is None else test(value)

    return holds


def _flat_ids(with_offsets: bool) -> Callable[[Mapping[str, Any]], Optional[bool]]:
    """1-d ids with offsets given (a bag's batched form: the offsets split them into bags), or without (no batch
    axis); None without ids."""

    def holds(inputs: Mapping[str, Any]) -> Optional[bool]:
        ndim = _ids_ndim(inputs)
        return None if ndim is None else ndim == 1 and (inputs.get("offsets") is not None) == with_offsets

    return holds


PROPERTIES: dict[str, Callable[[Mapping[str, Any]], Optional[bool]]] = {
    "embed_dim is odd": _property(_embed_dim, lambda d: d % 2 == 1),
    "embed_dim is odd and at least 3": _property(_embed_dim, lambda d: d % 2 == 1 and d >= 3),
    "embed_dim is 1": _property(_embed_dim, lambda d: d == 1),
    "the ids are 0-d (a single id)": _property(_ids_ndim, lambda n: n == 0),
    "the ids are 1-d (no batch axis)": _flat_ids(with_offsets=False),
    "the ids are 1-d with offsets (the bags of a batch, one after another)": _flat_ids(with_offsets=True),
}


def crash_conditions(run: RunRecord, by_id: dict[str, Case]) -> None:
    """An untyped exception raised on some valid cases of an operation: the property of exactly those cases."""
    crashed: dict[str, set[str]] = {}
    for result in run.results:
        for cause in result.causes:
            raised = cause.symptom
            if (
                not cause.is_mutant
                and raised is not None
                and (raised.family == CONSTRUCTOR or (raised.family == UNTYPED and raised.part(-1) == str(None)))
            ):  # a constructor failure, or a valid case raised
                crashed.setdefault(cause.key, set()).add(result.id)
    for key, ids in crashed.items():
        condition = _separating(run, by_id, ids)
        if condition is None:
            continue
        when = f"; it raises whenever {condition}, and on no other valid case"
        for result in run.results:
            if result.id in ids:
                result.causes = [
                    replace(
                        c, title=c.title + when, summary=c.summary + when, measured={**c.measured, "when": condition}
                    )
                    if c.key == key and not c.is_mutant
                    else c
                    for c in result.causes
                ]


def _separating(run: RunRecord, by_id: dict[str, Case], ids: set[str]) -> Optional[str]:
    """The property every case in ``ids`` has and no other valid case of its operation has (the same property for
    every operation, narrowed by a config option where one operation needs it); None when there is none."""
    groups: dict[str, tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]] = {}
    for result in run.results:
        case = by_id.get(result.id)
        if case is None or case.expected_error is not None or result.outcome not in JUDGED:
            continue
        inside, outside = groups.setdefault(case.operation, ([], []))
        (inside if result.id in ids else outside).append(case.inputs())
    groups = {op: pair for op, pair in groups.items() if pair[0]}
    if not any(outside for _, outside in groups.values()):
        return None
    for name, holds in PROPERTIES.items():
        narrowed = [_narrowing(holds, inside, outside) for inside, outside in groups.values()]
        if all(n is not None for n in narrowed):
            clauses = sorted({n for n in narrowed if n})
            return name + (f" (with {', '.join(clauses)})" if clauses else "")
    return None


def _narrowing(
    holds: Callable[[Mapping[str, Any]], Optional[bool]],
    inside: list[Mapping[str, Any]],
    outside: list[Mapping[str, Any]],
) -> Optional[str]:
    """ "" when ``holds`` separates inside from outside, "OPTION VALUE" when it does on one config option's value, None
    when it does not."""
    if not all(holds(i) is True for i in inside):
        return None
    if all(holds(o) is False for o in outside):
        return ""
    for option, value in _shared_options(inside):
        if all(holds(o) is False or _option(o, option) != value for o in outside):
            return f"{option} {value!r}"
    return None


def _option(inputs: Mapping[str, Any], option: str) -> Any:
    config = inputs.get("config")
    return config.get(option) if isinstance(config, Mapping) else None


def _shared_options(inside: list[Mapping[str, Any]]) -> list[tuple[str, Any]]:
    """The (option, value) pairs of the config every case in ``inside`` has in common (plain values only)."""
    configs = [c for i in inside if isinstance(c := i.get("config"), Mapping)]
    if len(configs) != len(inside) or not configs:
        return []
    first = configs[0]
    return [
        (k, v)
        for k, v in sorted(first.items())
        if isinstance(v, (str, bool, int)) and all(c.get(k) == v for c in configs)
    ]


def off_by_one(run: RunRecord, by_id: dict[str, Case]) -> None:
    """``start_pos + T = max_seq_len + 1`` accepted: an off-by-one check when a window two or more past the end
    is refused that the same check on T alone would accept; a check that leaves start_pos out when every refused
    window is longer than the table by itself and every window that fits by itself is accepted."""
    _boundary_refusals_measured(run, by_id)
    key = "boundary:accepts_s+T=L+1"
    refused: dict[tuple[str, Any], list[tuple[int, int, int]]] = {}  # each window past the end refused, by check
    accepted: dict[tuple[str, Any], list[tuple[int, int, int]]] = {}  # ... and answered
    for result in run.results:
        case = by_id.get(result.id)
        if case is None or case.expected_error != "sequence_too_long":
            continue
        window = _integer_window(case.inputs())
        if window is not None and result.outcome == PASS:
            refused.setdefault(_check_of(case), []).append(window)
        elif window is not None and result.outcome == FAIL and result.error_kind is None and result.actual:
            accepted.setdefault(_check_of(case), []).append(window)
    for result in run.results:
        case = by_id.get(result.id)
        if case is None or not any(c.key == key and not c.is_mutant for c in result.causes):
            continue
        window = _integer_window(case.inputs())
        if window is None:
            continue
        check = _check_of(case)  # only windows the same check judged say how it counts
        said = _boundary_reading(window[0] > 0, refused.get(check, []), accepted.get(check, []))
        if said:
            result.causes = [
                replace(c, title=c.title + said, summary=c.summary + said) if c.key == key and not c.is_mutant else c
                for c in result.causes
            ]


REJECTS_LAST = "boundary:rejects_s+T=L"


def _boundary_refusals_measured(run: RunRecord, by_id: dict[str, Case]) -> None:
    """``start_pos + T = max_seq_len`` refused with no error kind (a coarse exception) says nothing of the length
    check when the same check refuses a valid window with room to spare (``start_pos + T < max_seq_len``, an
    empty one too): what raised is not the boundary. Dropped there."""
    roomy = set()
    for result in run.results:
        case = by_id.get(result.id)
        if case is None or case.expected_error is not None or result.outcome not in (FAIL, ERROR):
            continue
        window = _integer_window(case.inputs())
        if window is not None and result.error_kind is not None and window[0] + window[1] < window[2]:
            roomy.add(_check_of(case))
    for result in run.results:
        case = by_id.get(result.id)
        if case is not None and result.error_kind == UNSPECIFIED and _check_of(case) in roomy:
            result.causes = [c for c in result.causes if c.is_mutant or c.key != REJECTS_LAST]


def _check_of(case: Case) -> tuple[str, Any]:
    """Which length check judges a window: the operation's, and in the layer the position encoding's."""
    config = case.inputs().get("config")
    return case.operation, config.get("pos_encoding", "learned") if isinstance(config, Mapping) else None


def _boundary_reading(moved: bool, refused: list[tuple[int, int, int]], accepted: list[tuple[int, int, int]]) -> str:
    """What the refused and accepted windows say of a check that accepts one window one past the end."""
    if not moved:  # start_pos 0: a check on T off by one refuses T = L + 2
        longer = [w for w in refused if w[0] == 0 and w[1] - w[2] >= 2]
        return "; a longer window is refused, so the length check is off by one" if longer else ""
    counts_start = [w for w in refused if w[0] > 0 and w[1] <= w[2]]  # refused though T alone fits
    if counts_start and not any(w[0] > 0 and w[0] + w[1] - w[2] >= 2 for w in accepted):
        return "; a longer window is refused, so the length check is off by one"
    if not counts_start and any(w[0] > 0 and w[1] <= w[2] for w in accepted) and any(w[1] > w[2] for w in refused):
        return "; only a window longer than the table by itself is refused: the length check leaves start_pos out"
    return ""


def _integer_window(inputs: Mapping[str, Any]) -> Optional[tuple[int, int, int]]:
    """(start_pos, T, max_len) of a positions or layer case whose start_pos is an integer (absent: 0)."""
    window = window_of({**inputs, "start_pos": 0} if inputs.get("start_pos") is None else inputs)
    if window is None or not isinstance(window[0], (int, np.integer)) or isinstance(window[0], bool):
        return None
    return int(window[0]), window[1], window[2]
