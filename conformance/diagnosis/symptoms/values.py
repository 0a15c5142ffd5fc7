"""Symptoms of a whole output: a dtype not cast back, a wrong shape, a constant factor and what it equals,
a sinusoid table fitted to its family."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from embconf.corpus.fixtures import Case
from embconf.diagnosis.difference import described
from embconf.diagnosis.factors import Factor, epsilon, factors_of, named, printed, rounding_window
from embconf.diagnosis.sinusoid_fit import LAYOUTS, Fit, candidate, fit_table
from embconf.diagnosis.symptoms.base import OWNER, PARAMETER, Symptom, symptom
from embconf.model.symptom import (
    ALL_ZEROS,
    DTYPE,
    FACTOR,
    ONE_HOT_PRODUCT,
    SHAPE,
    SINUSOID,
    TOKEN_SCALE,
    ZERO_ROWS,
    SymptomKey,
)


def dtype_symptom(case: Case, name: str, want: np.ndarray, got: np.ndarray) -> Symptom:
    same = (
        got.shape == want.shape
        and (want.dtype.kind == "f" or want.dtype.name == "bfloat16")
        and got.dtype.kind in "fiu"
        and (
            np.array_equal(got.astype(want.dtype), want, equal_nan=True)  # bitwise equal once cast (inf included)
            or close_in_ulps(got.astype(want.dtype).astype(np.float64), want.astype(np.float64), want.dtype)
        )
    )
    other = "the shape differs as well" if got.shape != want.shape else "the values differ as well"
    values = "cast to " + str(want.dtype) + ", the values are right" if same else other
    return symptom(
        SymptomKey.of(DTYPE, case.operation, f"{got.dtype}->{want.dtype}"),
        f"'{name}' is {got.dtype} where {want.dtype} is expected; {values}"
        + (": a result computed in a wider dtype and not cast back" if same else ""),
        f"return {want.dtype} (the dtype the spec gives this output): .astype({want.dtype.name}) once at the end"
        if same
        else "",
        title=f"'{name}' is {got.dtype} where {want.dtype} is expected: computed in another dtype and not cast back",
        complete=bool(same),  # with values that differ too, the dtype is one mistake of two
        got=str(got.dtype),
        expected=str(want.dtype),
    )


def shape_symptoms(case: Case, name: str, want: np.ndarray, got: np.ndarray) -> list[Symptom]:
    relation = ""
    if got.shape == (1,) + want.shape:
        relation = "an extra leading axis of length 1 (a batch of one was not squeezed)"
    elif want.shape == (1,) + got.shape:
        relation = "the leading batch axis of length 1 is missing"
    elif got.ndim == want.ndim and got.shape[::-1] == want.shape:
        relation = "the axes are reversed (transposed)"
    elif odd := _odd_width(case, want, got):
        relation = odd
    elif got.ndim == want.ndim and got.shape[:-1] == want.shape[:-1] and got.shape[-1] == 0:
        relation = "the last axis is empty (no columns)"
    elif got.ndim == want.ndim and got.shape[:-1] == want.shape[:-1] and got.shape[-1] % want.shape[-1] == 0:
        relation = f"the last axis is {got.shape[-1] // want.shape[-1]} times as wide"
    elif got.ndim == want.ndim and got.shape[:-1] == want.shape[:-1]:
        more = got.shape[-1] - want.shape[-1]
        unit = "element" if got.ndim == 1 else "column"
        relation = f"{abs(more)} {unit}{'s' if abs(more) != 1 else ''} {'too many' if more > 0 else 'too few'}"
        relation += "" if got.ndim == 1 else " in the last axis"
    if not relation:
        return []
    head = re.sub(r"\b\d+\b", "N", relation.split(":")[0].split(",")[0])  # one key whatever the sizes
    return [
        symptom(
            SymptomKey.of(SHAPE, case.operation, head),
            f"'{name}' has shape {list(got.shape)} for {list(want.shape)}: {relation}",
            title=f"'{name}' has the wrong shape: {relation}",
        )
    ]


def _odd_width(case: Case, want: np.ndarray, got: np.ndarray) -> str:
    """A sinusoid table one column off for odd D, said with what the columns it has are (when they are right)."""
    dim = want.shape[-1] if want.ndim == 2 else 0
    if case.operation != "sinusoidal_table" or dim % 2 == 0 or got.shape[:-1] != want.shape[:-1]:
        return ""
    common = min(dim, got.shape[-1])
    with np.errstate(all="ignore"):
        right = bool(np.allclose(got[:, :common].astype(np.float64), want[:, :common].astype(np.float64), atol=1e-5))
    if got.shape[-1] == dim + 1:  # said for this D only: the verdict lists the D of each case it cites
        if right:
            return f"D + 1 columns for D = {dim}, its extra last column not dropped (the first D are right)"
        return f"D + 1 columns for D = {dim}" + (
            ": the spec's table of width D + 1" if _is_table(got, want.shape[0], dim + 1) else ""
        )
    if got.shape[-1] == dim - 1:
        return f"D - 1 columns for D = {dim}" + (", the last (sine) column missing" if right else "")
    return ""


def _is_table(got: np.ndarray, max_len: int, dim: int) -> bool:
    """Whether ``got`` is the spec's canonical table of that size (within float32's rounding)."""
    from embconf.reference.sinusoid import sinusoidal_table

    with np.errstate(all="ignore"):
        table = np.asarray(sinusoidal_table(max_len, dim, "float64"), dtype=np.float64)
        return bool(np.allclose(got.astype(np.float64), table, atol=1e-5))


def close_in_ulps(a: np.ndarray, b: np.ndarray, dtype: np.dtype, ulps: float = 8.0) -> bool:
    eps = epsilon(dtype)
    scale = max(float(np.nanmax(np.abs(b))) if b.size else 0.0, 1e-30)
    with np.errstate(invalid="ignore"):
        return bool(np.all((np.abs(a - b) <= ulps * eps * (np.abs(b) + scale * 1e-3)) | (np.isnan(a) & np.isnan(b))))


def constant_factor(
    case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray
) -> list[Symptom]:
    """actual = k * expected for one k on every element (zeros stay zero): "exactly" where each element is k times
    within the dtype's rounding, else within the case's tolerance (``factors.factor_of``); k printed as measured."""
    if (
        np.any(want.astype(np.float64) != 0)
        and not np.any(got.astype(np.float64))
        and np.isfinite(want.astype(np.float64)).all()
    ):
        return [
            symptom(
                SymptomKey.of(ALL_ZEROS, case.operation, name), f"'{name}' is all zeros where the expected value is not"
            )
        ]
    found = factors_of(want, got, want.dtype, case.tolerance.get(name))
    if not found or found[0].holds(1.0):
        return []
    sizes = sizes_of(case, inputs)
    base = base_scale(case, inputs) if _tokens_only(name, inputs) else 1.0  # a token factor is said absolute

    def names_of(f: Factor) -> tuple[list[str], bool]:
        return named(Factor(f.low * base, f.high * base, "", f.exact), size_names(sizes), want.dtype)

    factor = ([f for f in found if names_of(f)[0]] or found)[0]  # the reading a name holds for, where one does
    ratio, shown = factor.value, factor.text
    if base != 1.0:
        absolute = ratio * base
        names, _ = names_of(factor)
        scaled = printed(factor.low * base, factor.high * base, absolute) or repr(absolute)
        text = (
            f"'{name}' is {shown} x the expected: the tokens are scaled by {scaled}{equals_text(names, sizes)} "
            f"instead of sqrt(D) {f'= {base:g}' if base.is_integer() else f'for D = {round(base * base)}'}"
        )
        return [
            symptom(
                SymptomKey.of(TOKEN_SCALE, names[0] if names else round(absolute, 4)),
                text,
                factor=ratio,
                alternatives={
                    SymptomKey.of(TOKEN_SCALE, n): f"the tokens are scaled by {n} instead of sqrt(D)" for n in names
                },
            )
        ]
    names, rounded = names_of(factor)
    exactly = "exactly " if factor.exact else ""
    equals = equals_text(names, sizes)
    if equals and rounded:  # k is the name's value as the output's dtype holds it (sqrt(D) computed in float32)
        equals = equals[:-1] + f", as {want.dtype} holds it)"
    text = f"'{name}' is {exactly}{shown}{equals} times the expected value"
    if name.startswith("grad"):  # one scaled gradient shows in every backward that reaches it: one mistake
        parameter = PARAMETER.get(name, name)
        prefix, what = SymptomKey.of(FACTOR, "gradient", parameter), f"the gradient of {OWNER.get(name, repr(name))}"
    else:
        prefix, what = SymptomKey.of(FACTOR, case.operation, name), f"'{name}' ({case.operation})"
    readings = {prefix.extended(n): f"{what} is {n} times the expected value" for n in names}
    readings[prefix.extended(shown)] = f"{what} is {shown} times the expected value"  # the number itself
    return [symptom(prefix.extended(names[0] if names else shown), text, factor=ratio, alternatives=readings)]


def base_scale(case: Case, inputs: Mapping[str, Any]) -> float:
    """The token factor the spec expects in a layer case (sqrt(D) when scaling), 1 elsewhere."""
    config = inputs.get("config")
    if isinstance(config, Mapping) and config.get("scale_embeddings") and case.operation.startswith("embedding_layer"):
        return math.sqrt(float(config["embed_dim"]))
    return 1.0


def _tokens_only(name: str, inputs: Mapping[str, Any]) -> bool:
    """Whether ``name`` is made of the scaled tokens alone (a factor on it is a token scale): the token table's
    gradient, or the output of a layer without positions (with positions, the output is their sum)."""
    config = inputs.get("config")
    return name == "grad_token_weight" or (
        name == "output" and isinstance(config, Mapping) and config.get("pos_encoding") == "none"
    )


def sizes_of(case: Case, inputs: Mapping[str, Any]) -> dict[str, int]:
    """The sizes a factor may equal: D, B, N (ids), T."""
    sizes: dict[str, int] = {}
    for key in ("weight", "table", "token_weight"):
        if isinstance(inputs.get(key), np.ndarray) and inputs[key].ndim == 2:
            sizes["D"] = int(inputs[key].shape[1])
    if isinstance(inputs.get("config"), Mapping):
        sizes["D"] = int(inputs["config"].get("embed_dim", sizes.get("D", 0)))
    ids = next((inputs[k] for k in ("ids", "tokens") if isinstance(inputs.get(k), np.ndarray)), None)
    if ids is not None:
        sizes["N"] = int(ids.size)
        if ids.ndim >= 2:
            sizes["B"], sizes["T"] = int(ids.shape[0]), int(ids.shape[-1])
    if isinstance(inputs.get("x"), np.ndarray) and inputs["x"].ndim == 3:
        sizes["B"], sizes["T"] = int(inputs["x"].shape[0]), int(inputs["x"].shape[1])
    return {k: v for k, v in sizes.items() if v > 1}


def size_names(sizes: Mapping[str, int]) -> dict[str, float]:
    """Every simple expression of the case's sizes a factor may equal (D, sqrt(D), int(sqrt(D)), 1/B ...)."""
    names: dict[str, float] = {"2": 2.0, "1/2": 0.5, "-1": -1.0, "0": 0.0}
    for size, n in sizes.items():
        names.update({size: n, f"1/{size}": 1.0 / n})
        if size == "D":
            names.update(
                {"sqrt(D)": math.sqrt(n), "1/sqrt(D)": 1 / math.sqrt(n), "D/2": n / 2, "sqrt(2/D)": math.sqrt(2 / n)}
            )
            if math.isqrt(n) ** 2 != n:
                names.update({"int(sqrt(D))": float(math.isqrt(n)), "1/int(sqrt(D))": 1.0 / math.isqrt(n)})
    return names


def factor_names(value: float, sizes: Mapping[str, int]) -> list[str]:
    """The expressions of the case's sizes that a fitted factor equals (within 1e-5: a fit, not a predicate)."""
    hits = [n for n, v in size_names(sizes).items() if math.isclose(value, v, rel_tol=1e-5, abs_tol=1e-9)]
    return [h for h in hits if h not in ("2", "1/2")] or hits


def equals_text(names: list[str], sizes: Mapping[str, int]) -> str:
    if not names or not sizes:  # a name with nothing it was computed from is no measurement
        return ""
    return f" (= {' = '.join(names)} for {', '.join(f'{k} = {v}' for k, v in sizes.items())})"


def sinusoid_table(
    case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray
) -> list[Symptom]:
    fit = fit_table(got, int(inputs["max_len"]), int(inputs["embed_dim"]))
    if fit is None:
        return []
    words, shown = fit.departures(), []
    declared = _declared_departures(case, name, want, int(inputs["embed_dim"]))
    words = [w for w in words if w not in declared]  # what the declared convention itself is, is no mistake
    if fit.amplitude != 1.0:  # c, row 0's stored value: every k that rounds to it in the table's dtype holds
        sizes = {"D": int(inputs["embed_dim"])}
        below, above = rounding_window(np.asarray([fit.amplitude]), got.dtype)
        low, high = fit.amplitude - float(below[0]), fit.amplitude + float(above[0])
        amplitude = printed(low, high, fit.amplitude) or repr(fit.amplitude)
        names, _ = named(Factor(low, high, amplitude, True), size_names(sizes), got.dtype)
        words.append(f"every value multiplied by {names[0] if names else amplitude}")
        shown = words[:-1] + [f"every value multiplied by {amplitude}{equals_text(names, sizes)}"]
    precision = f"computed in {fit.precision}" if fit.precision != "float64" else ""
    if not words and not precision:
        return []
    title, text = (_sinusoid_text(w, precision) for w in (words, shown or words))
    plain = described(name, want, got, rule=case.tolerance.get(name)) if want.shape == got.shape else ""
    return [
        symptom(
            SymptomKey.of(SINUSOID, ";".join(words + [precision])),
            text,
            hint="the declared convention's table, positions from 0 (EMB-SIN-V1)"
            if declared
            else "w_k = 10000^(-2k/D); sin at column 2k, cos at 2k+1, positions from 0 (EMB-SIN-2)",
            title=title,
            **fit.params(),
            precision=fit.precision,
            plain=plain,  # said instead of the fit where the run's cases do not identify it (claims)
        )
    ]


def _declared_departures(case: Case, name: str, want: np.ndarray, dim: int) -> list[str]:
    """The departures of the expected table itself from the canonical one (a declared convention's layout or
    exponent, read on the rows the goldens pin): none for the canonical table."""
    raw = case.raw_expected["outputs"][name]
    rows = np.asarray(raw["rows"], dtype=np.int64) if isinstance(raw, Mapping) and raw.get("rows") is not None else None
    rows = np.arange(want.shape[0]) if rows is None else rows
    if want.ndim != 2 or want.shape != (rows.size, dim) or dim < 2:
        return []
    expected = want.astype(np.float64)
    for form in ("2k/D", "k/(h-1)"):
        for layout in LAYOUTS:
            member = Fit("10000", form, -1, 0, layout, "float64")
            table, _ = candidate(rows, dim, member)
            if np.allclose(table, expected, atol=1e-4):
                return member.departures()
    return []


def _sinusoid_text(words: list[str], precision: str) -> str:
    text = (
        "the table is the spec's sinusoid except: " + "; ".join(words) if words else "the table is the spec's sinusoid"
    )
    return text + ((f", {precision}" if words else f" {precision}") if precision else "")


def zero_rows(case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray) -> list[Symptom]:
    """A few rows of a table all zeros where the expected rows are not (position 0 zeroed as a padding row, ...);
    not complete when other rows differ as well."""
    if want.ndim != 2 or got.shape != want.shape or want.shape[0] < 2:
        return []
    zeroed = np.all(got == 0, axis=1) & np.any(want != 0, axis=1)
    rows = [int(r) for r in np.flatnonzero(zeroed)]
    if not rows or len(rows) > 3 or len(rows) == want.shape[0]:
        return []
    others = np.ones(want.shape[0], dtype=bool)
    others[rows] = False
    rest = bool(
        np.any(~np.isclose(got[others].astype(np.float64), want[others].astype(np.float64), rtol=1e-5, atol=1e-6))
    )
    which = f"row{'s' if len(rows) > 1 else ''} {', '.join(map(str, rows))} of '{name}'"
    text = f"{which} {'are' if len(rows) > 1 else 'is'} all zeros where the expected row is not"
    return [
        symptom(
            SymptomKey.of(ZERO_ROWS, case.operation, name, ",".join(map(str, rows))), text, complete=not rest, rows=rows
        )
    ]


def one_hot_product(
    case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray
) -> list[Symptom]:
    """NaN exactly where a lookup computed as a one-hot matrix product puts it (0 x inf = 0 x NaN = NaN): in every
    output column whose table column holds a non-finite value in another row; a gather copies rows instead."""
    weight, ids = inputs.get("weight"), inputs.get("ids")
    if (
        not isinstance(weight, np.ndarray)
        or not isinstance(ids, np.ndarray)
        or weight.ndim != 2
        or ids.dtype.kind not in "iu"
        or ids.size == 0
        or got.shape != ids.shape + weight.shape[1:]
    ):
        return []
    table = weight.astype(np.float64)
    flat = ids.reshape(-1).astype(np.int64)
    if np.all(np.isfinite(table)) or flat.min() < 0 or flat.max() >= table.shape[0]:
        return []
    bad = ~np.isfinite(table)
    others_bad = bad.sum(axis=0)[None, :] - bad[flat]  # non-finite values in the column, in rows not picked
    predicted = np.isnan(table[flat]) | (others_bad > 0)
    rows, expected = got.reshape(-1, table.shape[1]).astype(np.float64), want.reshape(-1, table.shape[1])
    if not np.array_equal(np.isnan(rows), predicted) or not np.any(predicted & ~np.isnan(expected)):
        return []
    rest = ~predicted
    complete = bool(np.array_equal(rows[rest], expected[rest].astype(np.float64)))
    text = (
        f"'{name}' is NaN wherever another row of the table holds inf or NaN in that column: the lookup is computed "
        "as a product with a one-hot matrix (0 x inf = NaN), not a gather of rows"
    )
    hint = "gather the rows (weight[ids]); a one-hot matrix product spreads any inf or NaN of the table into every row"
    return [symptom(SymptomKey.of(ONE_HOT_PRODUCT, case.operation), text, hint, complete=complete)]
