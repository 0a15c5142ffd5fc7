"""The claim discipline of a diagnosed run: every cause states only what the run measured, once per mistake.

Run after the causes of every failure are known (``run.diagnose_run``), it

- says a table of NaN only of the widths whose table the run measured NaN (``sin.small_dim_nan``);
- drops a cause whose precondition the run does not show: an off-by-one range check needs an id equal to
  vocab_size let through and a larger id refused as the spec says; "rejects V - 1: the range check is off by
  one" needs no passing case of the operation that used id V - 1; a sinusoid fit's precision ("computed in
  float32") needs two cases of different sizes that show it, else the fit is said without it;
- gives one identity to the causes that state one mistake in several forms (``GROUPS``: a forward mistake and its
  backward form; the precisions of a rotary computation, which one line of code sets; a token or position
  scale measured as a factor of an output or of a gradient; a zeroed row and an all-zero table), so the
  verdict names the mistake once and its title says each form with its own cases (``titles``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Callable, Optional

import numpy as np

from embconf.corpus.fixtures import Case
from embconf.diagnosis.difference import plain_key
from embconf.diagnosis.identity import one_missing_check
from embconf.model.outcomes import PASS, CaseResult
from embconf.model.record import Cause, RunRecord
from embconf.model.symptom import ALL_ZEROS, FACTOR, POSITION_SCALE, ROPE, SINUSOID, TOKEN_SCALE, ZEROS, SymptomKey

GROUPS = {  # the identity of a catalogue mistake -> the one mistake it is a form of
    "pos.grad_start_ignored": "pos.start_ignored",
    "layer.start_pos_ignored": "pos.start_ignored",
    "bwd.padding_row_zeroed": "fwd.id0_zero_row",
    "bwd.drops_missing_ids": "fwd.negative_wraps",
    "symptom:ids_truncated": "fwd.float_truncated",  # measured as a mapping of ids to rows: the mutant's mistake
    "layer.scale_always": "token_scale",
    "layer.scale_missing": "token_scale",
    "layer.scale_d": "token_scale",
    "layer.scale_divided": "token_scale",
    "layer.scale_bfloat16": "token_scale",
    "layer.scale_sum": "position_scale",
    "rope.partial_rotates_all": "rope:passthrough",
    "rope.angles_bfloat16": "rope:precision",
    "rope.angles_float16": "rope:precision",
    "rope.inv_freq_bfloat16": "rope:precision",
    "rope.positions_in_activation_dtype": "rope:precision",
    "rope.cos_sin_bfloat16": "rope:precision",
    "bag.negative_ids_wrapped": "fwd.negative_wraps",  # the bag layer's copy of the lookup's mistake (one check)
}
SAID_AS = {  # a mistake's copy in another layer -> the mistake whose words say it (verdict: one thing, one wording)
    "bag.negative_ids_wrapped": "fwd.negative_wraps",
    "bag.backward.negative_ids_wrapped": "fwd.negative_wraps",
}
FAMILIES: tuple[tuple[Callable[[SymptomKey], bool], Optional[str]], ...] = (
    # what a symptom's key is -> the identity of the mistake it states (None: read from the output named)
    (lambda k: k.family == TOKEN_SCALE and bool(k.parts) and not _summed(k), TOKEN_SCALE),
    (lambda k: k.family == POSITION_SCALE and bool(k.parts) and not _summed(k), POSITION_SCALE),
    (lambda k: k.family == FACTOR and len(k.parts) >= 2 and k.part(0) == "gradient", None),
    (
        lambda k: k.family in ("repeated_rows", "repeated_rows_differ") and k.parts == ("token_table",),
        "repeated_rows:token_table",
    ),
    (
        lambda k: k.family == ROPE and len(k.parts) >= 2 and k.part(0) in ("angle_precision", "table_precision"),
        "rope:precision",
    ),
    (lambda k: k.family == ROPE and len(k.parts) >= 2 and k.part(0) == "passthrough", "rope:passthrough"),
)


def _summed(key: SymptomKey) -> bool:
    """A scale measured on a sum of parts (``a+b``), not one factor."""
    return any("+" in part for part in key.parts)


OUTPUT_OF = {
    "grad_token_weight": "token_scale",
    "grad_position_table": "position_scale",
    "grad_table": "position_scale",
    "grad_x": "token_scale",  # x of the positions is the layer's scaled tokens
}


def disciplined(run: RunRecord, by_id: Mapping[str, Case]) -> None:
    """Every result's causes with unmeasured preconditions dropped and each mistake under its one identity."""
    off_by_one = _off_by_one_measured(run, by_id)
    last_row_used = _last_row_passed(run, by_id)
    precisions = _sinusoid_precisions(run, by_id)
    fits = _sinusoid_fits(run, by_id)
    for result in run.results:
        kept = []
        for cause in result.causes:
            if cause.is_mutant and cause.key == "fwd.range_check_off_by_one" and not off_by_one:
                continue
            if not cause.is_mutant and cause.key == "boundary:rejects_id_V-1" and result.operation in last_row_used:
                continue
            kept.append(
                _identity(_fit_or_plain(_precision_said(_nan_measured(cause, result, by_id), precisions), fits))
            )
        result.causes = kept
    _same_symptom_same_mistake(run)
    one_missing_check(run)
    _backward_of_its_forward(run)
    _alike_as_present(run)
    _cast_as_present(run)


def _alike_as_present(run: RunRecord) -> None:
    """Frequencies two readings give alike on a case ("step_1|head_dim") are the reading the run shows elsewhere
    on its own, when it shows one: the same mistake, not another."""
    alone = {_last(c): c.identity for r in run.results for c in r.causes if _frequency_reading(c)}
    for result in run.results:
        result.causes = [_as_present(c, alone) for c in result.causes]


CAST, CAST_EITHER = "fwd.float_truncated", "ids_rounded_or_truncated"


def _cast_as_present(run: RunRecord) -> None:
    """A float id that cannot tell rounding from truncation (0.5 -> row 0) is the truncation the run shows on
    other ids, when it shows it and shows no rounding: the same cast, not another mistake."""
    seen = {c.identity for r in run.results for c in r.causes}
    if CAST not in seen or "symptom:ids_rounded" in seen:
        return
    for result in run.results:
        result.causes = [
            replace(c, mistake=CAST) if not c.is_mutant and c.key == CAST_EITHER else c for c in result.causes
        ]


def _frequencies(cause: Cause) -> Optional[SymptomKey]:
    """The key of a rotary frequencies reading (``rope:frequencies:...``), else None."""
    key = cause.symptom
    return (
        key if key is not None and key.family == ROPE and len(key.parts) >= 2 and key.part(0) == "frequencies" else None
    )


def _alike(key: SymptomKey) -> bool:
    """Two readings given alike (``step_1|head_dim``)."""
    return any("|" in part for part in key.parts)


def _last(cause: Cause) -> str:
    key = cause.symptom
    return key.part(-1) if key is not None else ""


def _frequency_reading(cause: Cause) -> bool:
    key = _frequencies(cause)
    return key is not None and not _alike(key)


def _as_present(cause: Cause, alone: Mapping[str, str]) -> Cause:
    key = _frequencies(cause)
    if key is None or not _alike(key):
        return cause
    present = [alone[part] for part in key.part(-1).split("|") if part in alone]
    return replace(cause, mistake=present[0]) if present else cause


def _same_symptom_same_mistake(run: RunRecord) -> None:
    """A symptom measured alike on several cases is one mistake: where a catalogue mistake owns it on some case
    (``identity.merge_shown``), it owns it on every case of the run."""
    owner: dict[str, str] = {}
    for result in run.results:
        for cause in result.causes:
            if not cause.is_mutant and cause.mistake and cause.key not in owner:
                owner[cause.key] = cause.mistake
    for result in run.results:
        result.causes = [
            replace(c, mistake=owner[c.key]) if not c.is_mutant and not c.mistake and c.key in owner else c
            for c in result.causes
        ]


TRANSPOSE = (
    "the backward rotates by +pos*theta_k: the exact transpose of this implementation's forward, which rotates by "
    "-pos*theta_k, so consistent with it (the forward's sense is the mistake; fixed there, the backward follows)"
)
NEGATED_FORWARD = "rope.rotate_half_sign"
NEGATED_BACKWARD = ("rope.backward_rotates_forward", "rope.tables.backward_rotates_forward")


def _backward_of_its_forward(run: RunRecord) -> None:
    """A backward rotating by +angle where the forward rotates by -angle is the forward's exact transpose: one
    mistake (the forward's sense), not a second one in the backward."""
    forward_negated = any(
        c.identity == NEGATED_FORWARD for r in run.results if r.operation != "rope_backward" for c in r.causes
    )
    if not forward_negated:
        return
    for result in run.results:
        result.causes = [
            replace(c, mistake=NEGATED_FORWARD, title=TRANSPOSE, summary=TRANSPOSE)
            if c.identity in NEGATED_BACKWARD or c.symptom == SymptomKey.of(ROPE, "negated", "rope_backward")
            else c
            for c in result.causes
        ]


def _identity(cause: Cause) -> Cause:
    group = GROUPS.get(cause.identity)
    if group:
        return replace(cause, mistake=group)
    key = cause.symptom
    if key is None or (cause.mistake and not _rope_mistake(cause.mistake)):  # a catalogue identity stays
        return cause
    for states, family in FAMILIES:
        if states(key):
            named = family or OUTPUT_OF.get(_output_named(cause.summary) or "")
            return replace(cause, mistake=named) if named else cause
    operation, output = re.match(r"\w*", key.part(0)), re.match(r"\w*", key.part(1))
    if (
        key.family in ZEROS
        and len(key.parts) >= 2
        and operation
        and output
        and operation[0] == key.part(0) != ""
        and output[0]
    ):
        return replace(cause, mistake=str(SymptomKey.of(ALL_ZEROS, operation[0], output[0])))
    return cause


def _rope_mistake(mistake: str) -> bool:
    """A mistake identity a rotary symptom measured (``rope:...``), not a catalogue one."""
    key = SymptomKey.parse(mistake)
    return key.family == ROPE and bool(key.parts)


def _output_named(summary: str) -> Optional[str]:
    found = re.match(r"'(\w+)'", summary)
    return found.group(1) if found else None


NAN_CLAUSE = ": D = 2 or 3 gives a table of NaN"  # sin.small_dim_nan's title: said only of the widths measured NaN


def _nan_measured(cause: Cause, result: CaseResult, by_id: Mapping[str, Case]) -> Cause:
    """A mistake said to give a table of NaN for small widths names the case's width when its table is NaN,
    and no width when it is not (a width refused before the division, or a wide table, shows no NaN)."""
    if not cause.is_mutant or NAN_CLAUSE not in cause.title or result.id not in by_id:
        return cause
    table = (result.actual or {}).get("table")
    width = by_id[result.id].inputs().get("embed_dim")
    nan = isinstance(table, np.ndarray) and table.size > 0 and bool(np.isnan(table.astype(np.float64)).all())
    said = f": D = {width} gives a table of NaN" if nan else ""
    return replace(cause, title=cause.title.replace(NAN_CLAUSE, said), summary=cause.summary.replace(NAN_CLAUSE, said))


def _ids_of(inputs: Mapping[str, Any]) -> Optional[np.ndarray]:
    ids = inputs.get("ids", inputs.get("tokens"))
    return ids if isinstance(ids, np.ndarray) and ids.dtype.kind in "iu" and ids.size else None


def _vocab(inputs: Mapping[str, Any]) -> Optional[int]:
    weight = inputs.get("weight", inputs.get("token_weight"))
    return int(weight.shape[0]) if isinstance(weight, np.ndarray) and weight.ndim == 2 else None


def _off_by_one_measured(run: RunRecord, by_id: Mapping[str, Case]) -> bool:
    """An id equal to vocab_size was not refused as the spec says, and an id above it (none negative) was."""
    at_vocab = above = False
    for result in run.results:
        case = by_id.get(result.id)
        if case is None or case.operation != "embedding_forward" or case.expected_error != "index_out_of_range":
            continue
        inputs = case.inputs()
        ids, vocab = _ids_of(inputs), _vocab(inputs)
        if ids is None or vocab is None or int(ids.min()) < 0:
            continue
        if int(ids.max()) == vocab and result.outcome != PASS:
            at_vocab = True
        if int(ids.max()) > vocab and result.outcome == PASS:
            above = True
    return at_vocab and above


def _last_row_passed(run: RunRecord, by_id: Mapping[str, Case]) -> set[str]:
    """The operations with a passing valid case whose ids use the last row (V - 1): their range check admits it."""
    found = set()
    for result in run.results:
        case = by_id.get(result.id)
        if case is None or result.outcome != PASS or case.expected_error is not None:
            continue
        inputs = case.inputs()
        ids, vocab = _ids_of(inputs), _vocab(inputs)
        if ids is not None and vocab is not None and int(ids.max()) == vocab - 1:
            found.add(case.operation)
    return found


PRECISION = re.compile(r"[;,]? ?computed in (float16|float32)")
IDENTIFYING_WIDTH = 8  # a table this wide (4 pairs) identifies a fit on its own


def _sinusoid_fits(run: RunRecord, by_id: Mapping[str, Case]) -> set[str]:
    """The sinusoid fits (keys, without precision) the run identifies: shown by two sizes, or by a wide table."""
    sizes: dict[str, set[Any]] = {}
    for result in run.results:
        case = by_id.get(result.id)
        for cause in result.causes:
            if case is not None and _sinusoid(cause):
                width = case.inputs().get("embed_dim")  # the width is what tells fits apart
                key = PRECISION.sub("", cause.key)
                sizes.setdefault(key, set()).add(width)
                if isinstance(width, int) and width >= IDENTIFYING_WIDTH:
                    sizes[key].add("wide")
    return {key for key, seen in sizes.items() if len(seen) >= 2}


def _fit_or_plain(cause: Cause, fits: set[str]) -> Cause:
    """A sinusoid fit the run does not identify is said as what was measured (``measured['plain']``)."""
    plain = cause.measured.get("plain")
    if not _sinusoid(cause) or PRECISION.sub("", cause.key) in fits or not plain:
        return cause
    kept = {k: v for k, v in cause.measured.items() if k == "plain"}
    key = plain_key("sinusoidal_table", "table", str(plain))
    return replace(cause, key=key, title=str(plain), summary=str(plain), measured=kept)


def _sinusoid_precisions(run: RunRecord, by_id: Mapping[str, Case]) -> set[str]:
    """The precisions two or more sinusoid cases of different sizes fitted (a precision one size shows is no fit)."""
    sizes: dict[str, set[tuple[Any, Any]]] = {}
    for result in run.results:
        case = by_id.get(result.id)
        for cause in result.causes:
            found = PRECISION.search(cause.key) if _sinusoid(cause) else None
            if found and case is not None:
                inputs = case.inputs()
                sizes.setdefault(found.group(1), set()).add((inputs.get("max_len"), inputs.get("embed_dim")))
    return {precision for precision, seen in sizes.items() if len(seen) >= 2}


def _sinusoid(cause: Cause) -> bool:
    """A fitted sinusoid table's symptom."""
    key = cause.symptom
    return key is not None and key.family == SINUSOID and bool(key.parts)


def _precision_said(cause: Cause, precisions: set[str]) -> Cause:
    found = PRECISION.search(cause.key) if _sinusoid(cause) else None
    if found is None or found.group(1) in precisions:
        return cause
    clause = f"computed in {found.group(1)}"

    def without(text: str) -> str:
        return text.replace(f", {clause}", "").replace(f" {clause}", "")

    key = cause.key.replace(f";{clause}", "").replace(clause, "")
    measured = {k: v for k, v in cause.measured.items() if k != "precision"}
    return replace(cause, key=key, title=without(cause.title), summary=without(cause.summary), measured=measured)
