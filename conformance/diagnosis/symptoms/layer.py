"""The layer's output read as its parts: actual = a * token rows + b * position rows, the factor each part received
(the tokens multiplied by D instead of sqrt(D), the positions not added), said only where the fit holds on every
element within the case's tolerance, each factor printed with the digits that tell it from the expected one."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Callable

import numpy as np

from embconf.corpus.fixtures import Case
from embconf.diagnosis.difference import apart
from embconf.diagnosis.symptoms.base import Symptom, symptom
from embconf.diagnosis.symptoms.values import base_scale, close_in_ulps, equals_text, factor_names, size_names, sizes_of
from embconf.judging.compare import out_of_tolerance
from embconf.model.symptom import POSITION_SCALE, TOKEN_SCALE, SymptomKey

ZERO_FACTOR = 1e-6  # a fitted factor this small is 0: the part is not there


def layer_parts(case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray) -> list[Symptom]:
    """actual = a * token rows + b * position rows: the factors each part received, the simplest that fits every
    element (the expected positions, then a named factor, before the least-squares numbers)."""
    config, weight, tokens = inputs.get("config"), inputs.get("token_weight"), inputs.get("tokens")
    if (
        not isinstance(config, Mapping)
        or not isinstance(weight, np.ndarray)
        or not isinstance(tokens, np.ndarray)
        or tokens.size == 0
    ):
        return []
    rows = weight.astype(np.float64)[tokens.astype(np.int64)]
    c = base_scale(case, inputs)
    positions = want.astype(np.float64) - c * rows
    if not np.any(positions) or not np.any(rows):
        return []
    basis = np.stack([rows.reshape(-1), positions.reshape(-1)], axis=1)
    (a, b), *_ = np.linalg.lstsq(basis, got.astype(np.float64).reshape(-1), rcond=None)
    a, b = (0.0 if abs(v) < ZERO_FACTOR else float(v) for v in (a, b))  # a fit of 1e-9 is a part left out
    rule = case.tolerance.get(name)

    def fits(token: float, position: float) -> bool:  # every element, within the case's tolerance (or 4 roundings)
        fitted = token * rows + position * positions
        if isinstance(rule, Mapping) and rule.get("kind") == "close":
            return not out_of_tolerance(fitted, got, rule).any()
        return close_in_ulps(got.astype(np.float64), fitted, want.dtype, ulps=4.0)

    sizes = sizes_of(case, inputs)
    named = size_names(sizes)
    simple = [(c, 1.0)] + [(v, 1.0) for v in named.values()] + [(a, 1.0), (a, 0.0)] + [(a, v) for v in named.values()]
    a, b = next(((x, y) for x, y in simple + [(a, b)] if fits(x, y)), (math.nan, math.nan))  # the simplest that fits
    if math.isnan(a) or (math.isclose(a, c, rel_tol=1e-5) and math.isclose(b, 1.0, rel_tol=1e-5)):
        return []
    token_names = [n for n in factor_names(a, sizes) if fits(named[n], b)]  # a name only where its value fits too
    position_names = [n for n in factor_names(b, sizes) if fits(a, named[n])]
    parts: list[str] = []
    keys: list[SymptomKey] = []
    if not math.isclose(a, c, rel_tol=1e-5):
        said, instead = _fitting(a, c, lambda k: fits(k, b)), apart(a, c)[1]
        parts.append(
            f"the tokens are multiplied by {said}{equals_text(token_names, sizes)} instead of {instead}"
            + (" (sqrt(D))" if c != 1 else "")
        )
        keys.append(SymptomKey.of(TOKEN_SCALE, token_names[0] if token_names else round(a, 4)))
    if b == 0.0:
        parts.append("the positions are not added (their factor is 0)")
        keys.append(SymptomKey.of(POSITION_SCALE, 0))
    elif not math.isclose(b, 1.0, rel_tol=1e-5):
        parts.append(
            f"the positions are multiplied by {_fitting(b, 1.0, lambda k: fits(a, k))}{equals_text(position_names, sizes)} "
            "instead of 1"
        )
        keys.append(SymptomKey.of(POSITION_SCALE, position_names[0] if position_names else round(b, 4)))
    expected = "sqrt(D)" if c != 1 else "1 (scale_embeddings is false)"
    alternatives = (
        {SymptomKey.of(TOKEN_SCALE, n): f"the tokens are scaled by {n} instead of {expected}" for n in token_names}
        if len(keys) == 1 and keys[0].family == TOKEN_SCALE
        else None
    )
    return [
        symptom(
            SymptomKey.summed(keys),
            f"'{name}' = a * token rows + b * position rows: {' and '.join(parts)}",
            alternatives=alternatives,
            token_factor=a,
            position_factor=b,
        )
    ]


def _fitting(value: float, other: float, holds: Callable[[float], bool]) -> str:
    """``value`` printed with the digits that keep the reading true (the output fitted with the printed number, as
    the case judges it) and tell it apart from ``other`` (the factor expected)."""
    shown = apart(value, other)[0]
    for digits in range(len(shown.replace("-", "").replace(".", "").lstrip("0")), 18):
        text = f"{value:.{digits}g}"
        if float(text) != other and holds(float(text)):
            return text
    return repr(value)
