"""The sentences of the rotary symptoms, each said in the case's own terms: its scaling (rope_type, factor),
its pairing and rotary_dim, the columns measured to differ, and the attention factor it expects."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

import numpy as np

from embconf.corpus.fixtures import Case
from embconf.diagnosis.factors import epsilon, shortest, within
from embconf.diagnosis.rope_fit import NEGATED, ROWS, SHIFTED, SWAPPED, Departure, rotation
from embconf.diagnosis.symptoms.base import Symptom, symptom
from embconf.model.symptom import ROPE, SymptomKey

RESIDUAL = 1e-3  # the part of an output that is not a rotation of its input, at most, to read its angles
FIX_PRECISION = (
    "compute positions, inv_freq and their product in float32 (or wider) and round only cos/sin, once, to the "
    "activation dtype (the precision ruling of EMB-ROPE)"
)
POSITIONS_EXACT_UP_TO = {"bfloat16": 256, "float16": 2048, "half": 256}  # integers exact up to here
PRECISION_WORDS = {"half": "float16 or bfloat16 (these cases cannot tell which)"}


def scaling_of(inputs: Mapping[str, Any]) -> tuple[str, Any]:
    """(rope_type, factor) of the case's scaling ("default", None without one)."""
    scaling = inputs.get("scaling") if isinstance(inputs.get("scaling"), Mapping) else {}
    return str((scaling or {}).get("rope_type", "default")), (scaling or {}).get("factor")


def _scaling_words(inputs: Mapping[str, Any]) -> str:
    rope_type, factor = scaling_of(inputs)
    return "" if rope_type == "default" else f" ({rope_type} scaling, factor {factor})"


def _angle_words(case: Case) -> str:
    return "the angle -pos*theta_k" if case.operation == "rope_backward" else "the angle pos*theta_k"


def departure(case: Case, inputs: Mapping[str, Any], name: Departure) -> Symptom:
    """One departure of a model from the spec's computation (``rope_fit.family``), said for this operation; each
    is one mistake and is said on its own (a case showing two gets two symptoms, each not complete)."""
    op = case.operation
    if name == NEGATED and op == "rope_backward":
        return symptom(
            SymptomKey.of(ROPE, "negated", op),
            "the backward rotates by +pos*theta_k, the forward's own angle: the gradient of a rotation is the "
            "rotation by the negative angle (its transpose)",
            "rotate grad_output by -pos*theta_k: out_i = g_i*cos + g_j*sin, out_j = g_j*cos - g_i*sin",
        )
    if name == NEGATED:
        return symptom(
            SymptomKey.of(ROPE, "negated", op),
            "rotates by the negative angle -pos*theta_k: rotate_half's sign flipped (cat(x2, -x1)) or sin negated",
            "rotate_half(x) = cat(-x2, x1) and out = x*cos + rotate_half(x)*sin: out_i = x_i*cos - x_j*sin",
        )
    if name == SWAPPED:
        return symptom(
            SymptomKey.of(ROPE, "swapped", op),
            f"cos and sin swapped: each pair is rotated by pi/2 minus {_angle_words(case)}",
            "multiply x by cos(angle) and rotate_half(x) by sin(angle), not the other way round",
        )
    if name == SHIFTED:
        return symptom(
            SymptomKey.of(ROPE, name.what, op, name.detail),
            "the angles are those of position_ids +1: positions counted from 1",
            "use position_ids as given (the first token of a sequence at offset 0 has position 0)",
        )
    if name == ROWS:
        return symptom(
            SymptomKey.of(ROPE, "rows", op),
            "the angles are those of positions 0..T-1 (the row numbers): position_ids are ignored (a cache offset "
            "or packed restarts lost)",
            "index cos/sin by position_ids, not by the row number",
        )
    if name.what == "frequencies":  # a candidate mistake's frequencies
        return frequencies(case, inputs, {"candidate": name.detail})
    part, precision = name
    said = PRECISION_WORDS.get(precision, precision)
    what = {
        "inv_freq": f"inv_freq was rounded to {said} before multiplying by the positions",
        "positions": f"the positions were made in {said} (arange in the activations' dtype), not exact above "
        f"{POSITIONS_EXACT_UP_TO[precision]}",
    }.get(part, f"the angles were computed in {said} (positions, inv_freq and their product)")
    return symptom(
        SymptomKey.of(ROPE, "angle_precision", op, *name.parts),
        f"{what}: the angle error grows with the position",
        FIX_PRECISION,
        precision=precision,
    )


CANDIDATE_WORDS = {
    "d_minus_1": "the exponent is 2k/(d-1), not 2k/d (frequencies over d-1)",
    "step_1": "the exponent is k/d, not 2k/d (arange(0, d) without step 2)",
    "head_dim": "the exponent divides by the head dim d, not rotary_dim (partial rotary's frequencies over d)",
    "base_10000": "base 10000 instead of the case's base: the base argument is ignored",
    "yarn_truncated": "the frequencies are YaRN's with its correction range rounded to integers (floor low, ceil "
    "high), where the case's scaling says truncate: false",
    "yarn_untruncated": "the frequencies are YaRN's with its correction range left unrounded, where the case's "
    "scaling rounds it (truncate unset or true)",
    "yarn_factor_in_power": "the frequencies are YaRN's with the interpolated ones (factor*base)^(-2k/r) instead of "
    "base^(-2k/r) / factor: the factor raised to the exponent with the base",
    "dynamic_static": "the frequencies are dynamic NTK's grown for L = original_max_position_embeddings * factor, "
    "not for this call's max(position_ids) + 1",
}
CANDIDATE_FIX = {
    "yarn_truncated": "floor/ceil YaRN's correction range only when truncate is not false (EMB-ROPE-9)",
    "yarn_untruncated": "floor/ceil YaRN's correction range unless the scaling says truncate: false (EMB-ROPE-9)",
    "yarn_factor_in_power": "YaRN's interpolated frequency is theta_k / factor (EMB-ROPE-9)",
    "dynamic_static": "grow the dynamic base from each call's max(position_ids) + 1, past the original length only "
    "(EMB-ROPE-8)",
}
FREQUENCY_FIX = (
    "theta_k = base^(-2k/rotary_dim) for pair k = 0 .. rotary_dim/2 - 1 "
    "(inv_freq = 1 / base ** (arange(0, rotary_dim, 2) / rotary_dim))"
)


def frequencies(case: Case, inputs: Mapping[str, Any], p: Mapping[str, Any]) -> Symptom:
    """Frequencies other than the case's theta_k (said with the case's scaling; the sign is said apart)."""
    key = SymptomKey.of(ROPE, "frequencies", case.operation)
    rope_type, factor = scaling_of(inputs)
    candidate = p.get("candidate")
    if candidate == "every_band":
        return symptom(
            key.extended("every_band"),
            f"every frequency is divided by the scaling factor {factor}: {rope_type} scales only the "
            "low-frequency bands (the high-frequency ones keep theta_k), so the factor was applied to every band",
            f"apply {rope_type}'s band rule: wavelengths below the high-frequency cutoff keep theta_k, those above "
            "the low-frequency cutoff get theta_k / factor, the band between is interpolated",
        )
    if candidate == "scaling_ignored":
        return symptom(
            key.extended("scaling_ignored"),
            f"the frequencies are the unscaled theta_k = base^(-2k/rotary_dim): the case's {rope_type} scaling "
            f"(factor {factor}) is ignored",
            f"apply {rope_type} scaling to theta_k as the case's scaling asks (EMB-ROPE-9)",
        )
    if candidate == "factor_multiplied":
        return symptom(
            key.extended("factor_multiplied"),
            f"every frequency is multiplied by the linear factor {factor} instead of divided by it (inv_freq * "
            f"factor, or positions * factor): each is {float(factor) ** 2:g} times the scaled theta_k",
            "linear scaling divides: theta_k / factor (or position / factor) (EMB-ROPE-7)",
        )
    if candidate in CANDIDATE_WORDS:
        return symptom(key.extended(candidate), CANDIDATE_WORDS[candidate], CANDIDATE_FIX.get(candidate, FREQUENCY_FIX))
    if candidate and all(part in CANDIDATE_WORDS for part in candidate.split("|")):  # alike on this case
        readings = " or ".join(CANDIDATE_WORDS[part] for part in candidate.split("|"))
        return symptom(
            key.extended(candidate),
            f"the frequencies are those of either reading, which give the same frequencies here: {readings}",
            FREQUENCY_FIX,
        )
    spec = f"the spec's theta_k{_scaling_words(inputs)}"
    if "ratio" in p:
        ratio = float(p["ratio"])
        shown = within(float(p.get("low", ratio)), float(p.get("high", ratio)), ratio)
        return symptom(
            key.extended("ratio"),
            f"every frequency is {shown} times {spec}",
            "theta_k = base^(-2k/rotary_dim), angle = position * theta_k (with the scaling the case asks for)",
            ratio=ratio,
        )
    if "base" in p and rope_type == "default" and abs(float(p["base"]) - 1.0) < 1e-3:
        return symptom(
            key.extended("one"),
            "every frequency is 1: the exponent evaluates to 0 (e.g. integer division arange(0, r, 2) // r)",
            FREQUENCY_FIX,
        )
    if "base" in p and rope_type == "default":
        return symptom(
            key.extended("base"),
            f"the frequencies follow base {within(float(p.get('low', p['base'])), float(p.get('high', p['base'])), float(p['base']))} "
            f"instead of {shortest(float(inputs['base']))}",
            FREQUENCY_FIX,
            base=float(p["base"]),
        )
    return symptom(
        key,
        f"the frequencies differ from {spec}: every pair is a rotation by position times a frequency of its own",
        FREQUENCY_FIX,
    )


def attention_factor(inputs: Mapping[str, Any]) -> Optional[float]:
    """The attention factor the case's scaling gives cos and sin (1 unless yarn), None when it is invalid."""
    from embconf.reference.errors import EmbeddingError
    from embconf.reference.rope import inverse_frequencies

    try:
        return float(inverse_frequencies(inputs["rotary_dim"], inputs["base"], inputs.get("scaling"), 0)[1])
    except (EmbeddingError, KeyError, TypeError, ValueError):
        return None


def amplitude_departs(case: Case, p: Mapping[str, Any]) -> bool:
    """Whether the measured amplitude (``low`` to ``high``, widened by the output dtype's roundings) excludes 1:
    only then are cos and sin some other number of times the expected (a bfloat16 table's 1.001 is its rounding)."""
    factor = float(p["factor"])
    low, high = float(p.get("low", factor)), float(p.get("high", factor))
    noise = AMPLITUDE_ULPS * epsilon(_output_dtype(case))
    return not low * (1 - noise) <= 1.0 <= high * (1 + noise)


def amplitude(case: Case, inputs: Mapping[str, Any], p: Mapping[str, Any]) -> Symptom:
    """cos and sin ``p["factor"]`` times the expected (measured between ``low`` and ``high`` on the pairs): yarn's
    attention factor applied twice or not applied when that factor (or its inverse) lies within what was measured
    (widened by the output dtype's roundings), else the factor as measured."""
    factor = float(p["factor"])
    low, high = float(p.get("low", factor)), float(p.get("high", factor))
    noise = AMPLITUDE_ULPS * epsilon(_output_dtype(case))
    lo, hi = low * (1 - noise), high * (1 + noise)
    shown = within(low, high, factor, noise)
    expected = attention_factor(inputs)
    rope_type, _ = scaling_of(inputs)
    if expected is not None and expected != 1.0 and lo <= expected <= hi:
        return symptom(
            SymptomKey.of(ROPE, "amplitude", case.operation, "twice"),
            f"cos and sin are {shown} times the expected, the {rope_type} attention factor {within(lo, hi, expected)} "
            "itself: the factor is applied twice (cos and sin each take it once)",
            "multiply cos and sin by the attention factor once",
            factor=factor,
        )
    if expected is not None and expected != 1.0 and lo <= 1.0 / expected <= hi:
        return symptom(
            SymptomKey.of(ROPE, "amplitude", case.operation, "missing"),
            f"cos and sin are {shown} times the expected, 1 / the {rope_type} attention factor "
            f"{within(1.0 / hi, 1.0 / lo, expected)}: the attention factor is not applied",
            "multiply cos and sin by the attention factor (scaling['attention_factor'], or 0.1*ln(factor) + 1)",
            factor=factor,
        )
    return symptom(
        SymptomKey.of(ROPE, "amplitude", case.operation),
        f"cos and sin are {shown} times the expected: a rotation keeps each pair's length"
        + (f" (times the attention factor {shortest(expected)} only)" if expected not in (None, 1.0) else ""),
        "cos(angle) and sin(angle) themselves (times yarn's attention factor only)",
        factor=factor,
    )


AMPLITUDE_ULPS = 8.0  # roundings of the output dtype a measured amplitude ratio may carry


def _output_dtype(case: Case) -> np.dtype:
    """The dtype of the case's first array output (what the amplitude was measured from)."""
    arrays = [v for v in case.expected_outputs.values() if isinstance(v, np.ndarray)]
    return arrays[0].dtype if arrays else np.dtype(np.float32)


def column_ranges(columns: list[int]) -> str:
    """[16, 17, 18, 64, 65] -> '16..18, 64..65'."""
    runs: list[list[int]] = []
    for c in columns:
        if runs and c == runs[-1][-1] + 1:
            runs[-1].append(c)
        else:
            runs.append([c])
    return ", ".join(f"{r[0]}..{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


def passthrough(
    case: Case, inputs: Mapping[str, Any], source: np.ndarray, want: np.ndarray, got: np.ndarray, noise: float
) -> Symptom:
    """Features past rotary_dim changed: which columns (measured), rotated or not, and which rotary columns were
    left as they came in."""
    d, r, pairing = want.shape[-1], int(inputs["rotary_dim"]), str(inputs["pairing"])
    wide = got.astype(np.float64).reshape(-1, d)
    same_as_input = np.all(wide == source.astype(np.float64).reshape(-1, d), axis=0)
    moved = np.any(want.astype(np.float64).reshape(-1, d) != source.astype(np.float64).reshape(-1, d), axis=0)
    changed = [c for c in range(r, d) if not same_as_input[c]]
    unrotated = [c for c in range(r) if same_as_input[c] and moved[c]]
    whole = rotation(source, got, d, pairing)
    rotated = whole.residual <= RESIDUAL and not np.allclose(whole.phi[:, r // 2 :], 0.0, atol=noise)
    zeroed = bool(changed) and not np.any(wide[:, changed])
    said = "set to zero" if zeroed else ("rotated" if rotated and len(changed) == d - r else "changed")
    text = (
        f"features {column_ranges(changed)} (of the pass-through features {r}..{d - 1}, rotary_dim = {r}) are "
        f"{said}; partial rotary passes them through unchanged"
    )
    if unrotated:
        text += f"; features {column_ranges(unrotated)}, which rotate, are left as they came in"
    return symptom(
        SymptomKey.of(
            ROPE, "passthrough", case.operation, {"rotated": "rotated", "set to zero": "zeroed"}.get(said, "changed")
        ),
        text,
        "rotate only x[..., :rotary_dim] and concatenate x[..., rotary_dim:] back unchanged",
        title=f"pass-through features (past rotary_dim) are {said}; partial rotary passes them through unchanged",
        columns=changed[:64],
        unrotated=unrotated[:64],
    )
