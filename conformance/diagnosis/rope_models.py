"""The angles a rotary case's spec and its known mistakes give: what the rope symptoms read an output against.

``spec_frequencies`` is the reference's theta_k for the case's configuration; ``mistaken`` the frequencies of the
catalogue's frequency mistakes that apply to it, which ``rope_fit.family`` combines with the other departures
(positions, precision, sense, cos/sin swapped) into the models it tries; ``identified`` files a rope symptom under the mistake it
is the effect of (the catalogue's id where it has one), whatever operation it was measured on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Optional

import numpy as np

from embconf.model.record import Cause
from embconf.model.symptom import ROPE, SEPARATOR, SymptomKey


def spec_frequencies(inputs: Mapping[str, Any], positions: np.ndarray) -> Optional[np.ndarray]:
    """The spec's theta_k (h,) for the case's configuration (the reference's), None when it is invalid."""
    from embconf.reference.errors import EmbeddingError
    from embconf.reference.rope import inverse_frequencies

    try:
        theta, _ = inverse_frequencies(
            inputs["rotary_dim"], inputs["base"], inputs.get("scaling"), int(positions.max(initial=0))
        )
    except (EmbeddingError, KeyError, TypeError, ValueError):
        return None
    return np.asarray(theta, dtype=np.float64)


def mistaken(inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The (unsigned) frequencies theta_k (h,) of the catalogue's frequency mistakes that apply to this case."""
    base, r = float(inputs["base"]), int(inputs["rotary_dim"])
    k = np.arange(r // 2, dtype=np.float64)
    x = inputs.get("x")
    d = int(x.shape[-1]) if isinstance(x, np.ndarray) and x.ndim >= 1 else r
    scaling = inputs.get("scaling") if isinstance(inputs.get("scaling"), Mapping) else {}
    rope_type, factor = str((scaling or {}).get("rope_type", "default")), (scaling or {}).get("factor")
    found: dict[str, np.ndarray] = {}
    if rope_type in ("llama3", "yarn") and isinstance(factor, (int, float)) and factor > 0:
        found["every_band"] = base ** (-2.0 * k / r) / float(factor)
    if rope_type in ("linear", "llama3", "yarn") and isinstance(factor, (int, float)) and factor not in (0, 1):
        found["scaling_ignored"] = base ** (-2.0 * k / r)  # the case's scaling left out altogether
    if rope_type == "linear" and isinstance(factor, (int, float)) and factor > 0 and factor != 1:
        found["factor_multiplied"] = base ** (-2.0 * k / r) * float(factor)  # inv_freq * factor, not / factor
    found.update(_reported(inputs, r, base, scaling or {}, rope_type))
    if rope_type == "default":
        if r > 2:
            found["d_minus_1"] = base ** (-2.0 * k / (r - 1))
        found["step_1"] = base ** (-k / r)
        if d != r:
            found["head_dim"] = base ** (-2.0 * k / d)
        if base != 10000.0:
            found["base_10000"] = 10000.0 ** (-2.0 * k / r)
    return _alike(found)


def _reported(
    inputs: Mapping[str, Any], r: int, base: float, scaling: Mapping[str, Any], rope_type: str
) -> dict[str, np.ndarray]:
    """The frequencies of the mistakes found in public trackers (mutants/rope_reports.py) that apply to this case."""
    from embconf.mutants.rope_reports import factor_in_power, static_dynamic
    from embconf.reference.errors import EmbeddingError
    from embconf.reference.rope import inverse_frequencies

    positions = np.asarray(inputs["position_ids"])
    largest = int(positions.max(initial=0)) if positions.dtype.kind in "iu" else 0
    found: dict[str, np.ndarray] = {}
    try:
        spec = np.asarray(inverse_frequencies(r, base, scaling, largest)[0], dtype=np.float64)
        if rope_type == "yarn":
            rounds = scaling.get("truncate") is not False
            changed = {**scaling, "truncate": not rounds}
            found["yarn_untruncated" if rounds else "yarn_truncated"] = inverse_frequencies(r, base, changed, largest)[
                0
            ]
            found["yarn_factor_in_power"] = factor_in_power(r, base, scaling, largest)[0]
        if rope_type == "dynamic":
            found["dynamic_static"] = static_dynamic(r, base, scaling, largest)[0]
    except (EmbeddingError, KeyError, TypeError, ValueError):
        return {}
    return {
        name: np.asarray(freq, dtype=np.float64)
        for name, freq in found.items()
        if not np.allclose(np.asarray(freq, dtype=np.float64), spec, rtol=1e-9, atol=0.0)
    }


def _alike(found: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Candidates whose frequencies are equal on this case under one name ("head_dim|step_1"): the case cannot
    tell them apart, so neither is said alone."""
    out: dict[str, np.ndarray] = {}
    for name, freq in found.items():
        same = next((n for n, f in out.items() if f.shape == freq.shape and np.allclose(f, freq, rtol=1e-12)), None)
        if same is None:
            out[name] = freq
        else:
            out[f"{same}|{name}"] = out.pop(same)
    return out


MISTAKE_OF = {  # (kind, operation or "", detail) -> the catalogue mistake a symptom is the effect of
    ("pairing", "", ""): "rope.pairing_swapped",
    ("negated", "rope_forward", ""): "rope.rotate_half_sign",
    ("negated", "rope_tables", ""): "rope.rotate_half_sign",
    ("negated", "rope_backward", ""): "rope.backward_rotates_forward",
    ("swapped", "", ""): "rope.cos_sin_swapped",
    ("shifted", "", "1"): "rope.positions_from_1",
    ("rows", "", ""): "rope.position_ids_ignored",
    ("frequencies", "", "d_minus_1"): "rope.frequencies_over_d_minus_1",
    ("frequencies", "", "step_1"): "rope.frequencies_step_1",
    ("frequencies", "", "base_10000"): "rope.base_ignored",
    ("frequencies", "", "every_band"): "rope.scaling_every_band",
    ("amplitude", "", "missing"): "rope.yarn_attention_factor_missing",
    ("angle_precision", "", "angles:bfloat16"): "rope.angles_bfloat16",
    ("angle_precision", "", "angles:float16"): "rope.angles_float16",
    ("angle_precision", "", "float16_overflow"): "rope.angles_float16",
    ("angle_precision", "", "inv_freq:bfloat16"): "rope.inv_freq_bfloat16",
    ("angle_precision", "", "positions:bfloat16"): "rope.positions_in_activation_dtype",
    ("angle_precision", "", "positions:float16"): "rope.positions_in_activation_dtype",
    ("angle_precision", "", "positions:half"): "rope.positions_in_activation_dtype",
    ("angle_precision", "", "angles:half"): "rope.angles_float16",
    ("angle_precision", "", "inv_freq:half"): "rope.inv_freq_bfloat16",
    ("table_precision", "", ""): "rope.cos_sin_bfloat16",
    ("passthrough", "", "rotated"): "rope.partial_rotates_all",
    ("frequencies", "", "head_dim"): "rope.partial_frequencies_over_head_dim",
    ("frequencies", "", "scaling_ignored"): "rope.scaling_ignored",
    ("frequencies", "", "factor_multiplied"): "rope.linear_factor_multiplied",
    ("frequencies", "", "yarn_truncated"): "rope.yarn_always_truncates",
    ("frequencies", "", "yarn_untruncated"): "rope.yarn_never_truncates",
    ("frequencies", "", "yarn_factor_in_power"): "rope.yarn_factor_in_power",
    ("frequencies", "", "dynamic_static"): "rope.dynamic_static_length",
}


def identified(found: Cause) -> Cause:
    """``found`` under the identity of its mistake, whatever the operation it was measured on (the catalogue's
    id when the catalogue has the mistake), so the verdict names it once."""
    key = found.symptom
    if key is None or key.family != ROPE or len(key.parts) < 2:
        return found
    kind, operation, detail = key.part(0), key.part(1), SEPARATOR.join(key.parts[2:])
    if kind == "pairing":
        detail = ""
    mistake = MISTAKE_OF.get((kind, operation, detail)) or MISTAKE_OF.get((kind, "", detail))
    return replace(found, mistake=mistake or str(SymptomKey.of(ROPE, kind, detail)))
