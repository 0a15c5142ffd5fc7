"""Symptoms: what a failing result's error looks like, measured from the case's inputs, the expected and the actual.

Where the catalogue names a known mistake, a symptom describes the shape of any
error in the domain's terms: a constant factor and what it equals (D, sqrt(D),
int(sqrt(D)), 1/B ...), which rows differ, which table row each output row is,
a parameter that received no gradient, a dtype that was not cast back, which
boundary a check gets wrong, where an untyped exception came from. Each
detector returns a statement only when its measurement holds on the whole
output; otherwise nothing (a symptom is never guessed).
"""
from __future__ import annotations

import math
import re
from typing import Any, Callable, Iterable, Mapping, Optional

import numpy as np

from embconf.corpus.fixtures import Case
from embconf.model.outcomes import ERROR, FAIL, CaseResult
from embconf.model.record import Cause, CauseKind
from embconf.diagnosis.sinusoid_fit import fit_table

Symptom = Cause  # a measured symptom (CauseKind.SYMPTOM)
MAX_ELEMENTS = 1 << 20  # larger outputs are not analysed element by element
ROW_SEARCH_BUDGET = 5e7  # ids x table elements compared when finding which row each output row is

OWNER = {"grad_weight": "the table", "grad_token_weight": "the token table", "grad_table": "the position table",
         "grad_position_table": "the learned position table", "grad_x": "x", "values": "the row-sparse gradient"}


def symptom(key: str, summary: str, hint: str = "", alternatives: Optional[Mapping[str, str]] = None,
            title: Optional[str] = None, **measured: Any) -> Symptom:
    """One stated symptom; ``key`` identifies it across cases (for the run's verdict).

    ``summary`` is what was measured on this case; ``title`` (default: the summary) says the mistake without
    naming the case, as the verdict shows it once for every case it explains. ``alternatives`` ({key: title})
    are equally true readings of the same measurement (a factor that equals both 1/D and 1/B here); the
    verdict keeps the one most cases share.
    """
    return Cause(CauseKind.SYMPTOM, key, title or summary, summary, hint, {k: _plain(v) for k, v in measured.items()},
                 dict(alternatives or {}))


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def describe(case: Case, inputs: Mapping[str, Any], result: CaseResult) -> list[Symptom]:
    """Every symptom measured on ``result`` (a non-pass outcome of ``case``)."""
    if result.outcome == ERROR:
        return _exception(case, inputs, result)
    if result.outcome != FAIL:
        return []
    if result.error_kind is not None:
        return _rejected(case, inputs, result) if case.expected_error is None else []
    if result.actual is None:  # failed on a rule (an input modified, a view returned), not on its outputs
        return []
    actual = result.actual
    if case.expected_error is not None:
        return _accepted(case, inputs, actual)
    found: list[Symptom] = []
    missing = {m.output for m in result.mismatches if getattr(m, "kind", "") == "missing"}  # None judged as no value
    for name, want in case.expected_outputs.items():
        got = actual.get(name)
        if isinstance(want, np.ndarray) and (got is not None or name in missing):
            found += _array(case, inputs, name, want, got)
    return found


# ----- outputs of the right kind but wrong ---------------------------------------------------

def _array(case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: Any) -> list[Symptom]:
    if got is None and not name.startswith("grad"):
        return [symptom(f"none:{case.operation}:{name}", f"'{name}' is None: the operation returned no value for it")]
    if got is None:
        owner = OWNER.get(name, f"'{name}'")
        return [symptom(f"no_gradient:{case.operation}:{name}",
                        f"{owner} received no gradient ('{name}' is None): backward never reached it, so it is not in the graph the output was built from",
                        "build the output from the parameter Tensor itself (slicing or indexing it), not from a new Tensor made of its .data")]
    if not isinstance(got, np.ndarray):
        return []
    raw = case.raw_expected["outputs"][name]
    rows = raw.get("rows") if isinstance(raw, Mapping) else None
    if rows is not None and got.shape == tuple(raw["shape"]):  # the goldens pin sampled rows of a large output
        if got.dtype == want.dtype and case.operation == "sinusoidal_table":
            return _sinusoid(case, inputs, name, want, got)
        got = got[np.asarray(rows, dtype=np.int64)]
    if want.size > MAX_ELEMENTS or got.size > MAX_ELEMENTS:
        return []
    if got.dtype != want.dtype:
        return [_dtype(case, name, want, got)]
    if got.shape != want.shape:
        return _shape(case, name, want, got)
    if want.dtype.kind != "f":
        return []
    for detector in (_constant_factor,) + DETECTORS.get(case.operation, ()):
        found = detector(case, inputs, name, want, got)
        if found:
            return found
    return []


def _dtype(case: Case, name: str, want: np.ndarray, got: np.ndarray) -> Symptom:
    same = got.shape == want.shape and want.dtype.kind == "f" and got.dtype.kind in "fiu" and _close(got.astype(want.dtype).astype(np.float64), want.astype(np.float64), want.dtype)
    values = "cast to " + str(want.dtype) + ", the values are right" if same else "the values differ as well"
    return symptom(f"dtype:{case.operation}:{got.dtype}->{want.dtype}",
                   f"'{name}' is {got.dtype} where {want.dtype} is expected; {values}" + (": a result computed in a wider dtype and not cast back" if same else ""),
                   f"return {want.dtype} (the dtype the spec gives this output): .astype({want.dtype.name}) once at the end" if same else "",
                   got=str(got.dtype), expected=str(want.dtype))


def _shape(case: Case, name: str, want: np.ndarray, got: np.ndarray) -> list[Symptom]:
    relation = ""
    if got.shape == (1,) + want.shape:
        relation = "an extra leading axis of length 1 (a batch of one was not squeezed)"
    elif want.shape == (1,) + got.shape:
        relation = "the leading batch axis of length 1 is missing"
    elif got.ndim == want.ndim and got.shape[::-1] == want.shape:
        relation = "the axes are reversed (transposed)"
    elif got.ndim == want.ndim and got.shape[:-1] == want.shape[:-1] and got.shape[-1] % want.shape[-1] == 0:
        relation = f"the last axis is {got.shape[-1] // want.shape[-1]} times as wide"
    if not relation:
        return []
    return [symptom(f"shape:{case.operation}:{relation}", f"'{name}' has shape {list(got.shape)} for {list(want.shape)}: {relation}")]


def _close(a: np.ndarray, b: np.ndarray, dtype: np.dtype, ulps: float = 8.0) -> bool:
    eps = float(np.finfo(dtype).eps)
    scale = max(float(np.nanmax(np.abs(b))) if b.size else 0.0, 1e-30)
    with np.errstate(invalid="ignore"):
        return bool(np.all((np.abs(a - b) <= ulps * eps * (np.abs(b) + scale * 1e-3)) | (np.isnan(a) & np.isnan(b))))


def _constant_factor(case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray) -> list[Symptom]:
    """actual = r * expected for one r (on the non-zero elements; zeros stay zero)."""
    w, g = want.astype(np.float64), got.astype(np.float64)
    if not (np.isfinite(w).all() and np.isfinite(g).all()):
        return []
    nonzero = np.abs(w) > 1e-30
    if not nonzero.any() or np.any(g[~nonzero] != 0):
        return []
    ratio = float(np.median(g[nonzero] / w[nonzero]))
    if ratio == 1.0 or not _close(g, ratio * w, want.dtype, ulps=64.0):
        return []
    base = _base_scale(case, inputs)
    sizes = _sizes(case, inputs)
    if base != 1.0:
        absolute = ratio * base
        names = _factor_names(absolute, sizes)
        text = f"'{name}' is {ratio:.6g} x the expected: the tokens are scaled by {absolute:.6g}{_equals(names, sizes)} instead of sqrt(D) = {base:.6g}"
        return [symptom(f"token_scale:{names[0] if names else round(absolute, 4)}", text, factor=ratio,
                        alternatives={f"token_scale:{n}": f"the tokens are scaled by {n} instead of sqrt(D)" for n in names})]
    names = _factor_names(ratio, sizes)
    text = f"'{name}' is exactly {ratio:.6g}{_equals(names, sizes)} times the expected value"
    prefix = f"factor:{case.operation}:{name}"
    readings = {f"{prefix}:{n}": f"'{name}' is {n} times the expected value ({case.operation})" for n in names}
    readings[f"{prefix}:{ratio:.6g}"] = f"'{name}' is {ratio:.6g} times the expected value ({case.operation})"  # the number itself
    return [symptom(f"{prefix}:{names[0] if names else f'{ratio:.6g}'}", text, factor=ratio, alternatives=readings)]


def _base_scale(case: Case, inputs: Mapping[str, Any]) -> float:
    """The token factor the spec expects in a layer case (sqrt(D) when scaling), 1 elsewhere."""
    config = inputs.get("config")
    if isinstance(config, Mapping) and config.get("scale_embeddings") and case.operation.startswith("embedding_layer"):
        return math.sqrt(float(config["embed_dim"]))
    return 1.0


def _sizes(case: Case, inputs: Mapping[str, Any]) -> dict[str, int]:
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


def _factor_names(value: float, sizes: Mapping[str, int]) -> list[str]:
    """Every simple expression of the case's sizes that a factor equals (D, sqrt(D), int(sqrt(D)), 1/B ...)."""
    names: dict[str, float] = {"2": 2.0, "1/2": 0.5, "-1": -1.0, "0": 0.0}
    for size, n in sizes.items():
        names.update({size: n, f"1/{size}": 1.0 / n})
        if size == "D":
            names.update({"sqrt(D)": math.sqrt(n), "1/sqrt(D)": 1 / math.sqrt(n), "D/2": n / 2})
            if math.isqrt(n) ** 2 != n:
                names.update({"int(sqrt(D))": float(math.isqrt(n)), "1/int(sqrt(D))": 1.0 / math.isqrt(n)})
    hits = [name for name, v in names.items() if math.isclose(value, v, rel_tol=1e-5, abs_tol=1e-9)]
    return [h for h in hits if h not in ("2", "1/2")] or hits


def _equals(names: list[str], sizes: Mapping[str, int]) -> str:
    if not names:
        return ""
    return f" (= {' = '.join(names)} for {', '.join(f'{k} = {v}' for k, v in sizes.items())})"


# ----- row stories ----------------------------------------------------------------------------

def _row_of(table: np.ndarray, row: np.ndarray) -> Optional[int]:
    """The index of the one table row equal to ``row`` (None when none or several are)."""
    if not np.isfinite(row).all():
        return None
    scale = float(np.max(np.abs(row))) if row.size else 0.0
    hits = np.flatnonzero(np.all(np.isclose(table.astype(np.float64), row.astype(np.float64), rtol=1e-5, atol=1e-5 * max(scale, 1e-3)), axis=1))
    return int(hits[0]) if hits.size == 1 else None


def _lookup_rows(case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray) -> list[Symptom]:
    """Which table row each output row is, against the ids asked for."""
    weight = inputs.get("weight")
    ids = inputs.get("ids")
    if not isinstance(weight, np.ndarray) or not isinstance(ids, np.ndarray) or got.shape != ids.shape + (weight.shape[1],):
        return []
    return _row_mapping(case, weight, ids, got)


def _row_mapping(case: Case, weight: np.ndarray, ids: np.ndarray, got: np.ndarray) -> list[Symptom]:
    flat_ids = ids.reshape(-1).astype(np.float64)
    rows = got.reshape(-1, weight.shape[1])
    if flat_ids.size > 4096 or flat_ids.size * weight.size > ROW_SEARCH_BUDGET:  # each id searches the whole table
        return []
    stories = []
    for asked, row in zip(flat_ids, rows):
        taken = _row_of(weight, row)
        if np.all(np.isnan(row)):
            stories.append((asked, "nan"))
        elif np.all(row == 0) and taken is None:
            stories.append((asked, "zeros"))
        else:
            stories.append((asked, taken))
    return _mapping_symptoms(case, weight.shape[0], stories)


def _mapping_symptoms(case: Case, vocab: int, stories: list[tuple[float, Any]]) -> list[Symptom]:
    wrong = [(a, t) for a, t in stories if not (isinstance(t, int) and float(t) == a)]
    if not wrong or any(t is None for _, t in wrong):
        return []
    rules: list[tuple[str, Callable[[float, Any], bool], str]] = [
        ("rounded", lambda a, t: isinstance(t, int) and np.isfinite(a) and t == int(np.round(a)) and t != int(np.trunc(a)), "a float id is rounded to the nearest integer"),
        ("truncated", lambda a, t: isinstance(t, int) and np.isfinite(a) and t == int(np.trunc(a)) and t != int(np.round(a)) and 0 <= a < vocab, "a float id is truncated toward zero"),
        ("rounded or truncated", lambda a, t: isinstance(t, int) and np.isfinite(a) and t == int(np.trunc(a)) == int(np.round(a)) and 0 <= a < vocab,
         "a float id is cast to an integer (rounded or truncated: this id cannot tell which)"),
        ("wrapped", lambda a, t: isinstance(t, int) and np.isfinite(a) and a == int(a) and t == int(a) % vocab, "an id outside [0, V) wraps around (indexes from the end)"),
        ("clamped", lambda a, t: isinstance(t, int) and t == int(np.clip(np.nan_to_num(a, nan=0.0, posinf=vocab - 1, neginf=0), 0, vocab - 1)), "an id outside [0, V) is clamped to the nearest row"),
        ("shifted", None, ""),
        ("zero row", lambda a, t: t == "zeros", "an id that indexes no row gives a row of zeros"),
        ("nan row", lambda a, t: t == "nan", "an id that indexes no row gives a row of NaN"),
    ]
    shifts = {t - a for a, t in wrong if isinstance(t, int) and np.isfinite(a)}
    for label, rule, text in rules:
        if label == "shifted":
            if len(wrong) > 1 and len(shifts) == 1 and all(isinstance(t, int) for _, t in wrong) and (shift := next(iter(shifts))) != 0:
                text = f"every id i reads row i {'+' if shift > 0 else '-'} {abs(int(shift))} (rows shifted by {int(shift)})"
                return [symptom(f"ids_shifted:{int(shift)}", _mapping_text(wrong, text))]
            continue
        if all(rule(a, t) for a, t in wrong):
            both = {"ids_rounded": "a float id is rounded to the nearest integer", "ids_truncated": "a float id is truncated toward zero"}
            return [symptom(f"ids_{label.replace(' ', '_')}", _mapping_text(wrong, text), "validate ids before indexing (EMB-IDX)" if case.expected_error else "",
                            alternatives=both if label == "rounded or truncated" else None)]
    return []


def _mapping_text(wrong: list[tuple[float, Any]], text: str) -> str:
    shown = ", ".join(f"id {a:g} -> {'row ' + str(t) if isinstance(t, int) else 'a row of ' + t}" for a, t in wrong[:4])
    return f"{shown}: {text}"


def _table_gradient_rows(case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray) -> list[Symptom]:
    """Which rows of a dense table gradient differ: repeated ids only, never-used rows, or every used row."""
    ids_name = "tokens" if name == "grad_token_weight" else "ids"
    ids = inputs.get(ids_name)
    if not isinstance(ids, np.ndarray) or want.ndim != 2 or name not in ("grad_weight", "grad_token_weight"):
        return []
    counts = np.bincount(ids.reshape(-1).astype(np.int64), minlength=want.shape[0])[: want.shape[0]]
    differs = ~np.all(np.isclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-5, atol=1e-6), axis=1)
    bad = set(np.flatnonzero(differs).tolist())
    unused = set(np.flatnonzero(counts == 0).tolist())
    repeated = set(np.flatnonzero(counts > 1).tolist())
    if bad and bad <= unused:
        return [symptom(f"untouched_rows:{case.operation}:{name}",
                        f"only rows no id uses differ: rows {sorted(bad)[:6]} should be exactly zero and are not",
                        "start the gradient from zeros on every call (EMB-BWD-2)", rows=sorted(bad)[:16])]
    if bad and bad <= repeated and set(np.flatnonzero(counts == 1).tolist()):
        return [symptom(f"repeated_rows:{case.operation}:{name}",
                        f"only the rows of repeated ids differ (rows {sorted(bad)[:6]}): repeated ids do not accumulate as a sum",
                        "accumulate every occurrence: np.add.at (EMB-BWD-1)", rows=sorted(bad)[:16])]
    return []


def _position_rows(case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray) -> list[Symptom]:
    """Which table row each position received (actual - x), against start_pos + t."""
    table, x, start = inputs.get("table"), inputs.get("x"), inputs.get("start_pos", 0)
    if not isinstance(table, np.ndarray) or not isinstance(x, np.ndarray) or got.shape != x.shape or x.ndim != 3 or x.shape[1] == 0:
        return []
    added = (got.astype(np.float64) - x.astype(np.float64))[0]
    taken = [_row_of(table, row) for row in added]
    if any(t is None for t in taken) or not isinstance(start, (int, np.integer)):
        return []
    wanted = list(range(int(start), int(start) + x.shape[1]))
    if len(set(taken)) == 1 and len(wanted) > 1:
        return [symptom("positions_one_row", f"every position received the same table row {taken[0]} (one row for every token) instead of rows {wanted[0]}..{wanted[-1]}",
                        "add table[start_pos + t] at position t: table[start_pos : start_pos + T]", row=taken[0])]
    if len(wanted) > 1 and taken == wanted[::-1]:
        return [symptom("positions_reversed", f"the positions are in reverse order: position t received table row {wanted[-1]} - t (rows {wanted[-1]}..{wanted[0]})",
                        "add table[start_pos + t] at position t: table[start_pos : start_pos + T], not reversed")]
    shifts = {t - w for t, w in zip(taken, wanted)}
    if len(shifts) == 1:
        shift = shifts.pop()
        return [symptom(f"positions_shifted:{shift}", f"position t received table row start_pos + t {'+' if shift > 0 else '-'} {abs(shift)} (the slice is shifted by {shift})")]
    return []


def _position_gradient(case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray) -> list[Symptom]:
    """The slice rows of grad_table against single sequences of grad_output."""
    grad, start = inputs.get("grad_output"), inputs.get("start_pos", 0)
    if name != "grad_table" or not isinstance(grad, np.ndarray) or grad.ndim != 3 or not isinstance(start, (int, np.integer)):
        return []
    rows = got[int(start): int(start) + grad.shape[1]].astype(np.float64)
    total = grad.astype(np.float64).sum(axis=(0, 1))
    nonzero = np.flatnonzero(np.any(got != 0, axis=1))
    if grad.shape[1] > 1 and nonzero.size == 1 and np.allclose(got[nonzero[0]], total, rtol=1e-5, atol=1e-5 * max(float(np.abs(total).max()), 1e-3)):
        return [symptom("positions_one_row", f"the whole gradient (summed over batch and positions) lands in row {nonzero[0]}: one table row is used for every position",
                        "add table[start_pos + t] at position t: table[start_pos : start_pos + T]", row=int(nonzero[0]))]
    for b, label in ((0, "first"), (grad.shape[0] - 1, "last")) if grad.shape[0] > 1 else ():
        if np.allclose(rows, grad[b].astype(np.float64), rtol=1e-6, atol=1e-7):
            return [symptom(f"position_grad_sequence:{label}",
                            f"grad_table's slice rows are the {label} sequence's gradient (grad_output[{b}]) alone, not the sum over the batch of {grad.shape[0]}",
                            "sum grad_output over the batch axis (EMB-POS-4)")]
    return []


def _layer_parts(case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray) -> list[Symptom]:
    """actual = a * token rows + b * position rows: the factors each part received."""
    config, weight, tokens = inputs.get("config"), inputs.get("token_weight"), inputs.get("tokens")
    if not isinstance(config, Mapping) or not isinstance(weight, np.ndarray) or not isinstance(tokens, np.ndarray) or tokens.size == 0:
        return []
    rows = weight.astype(np.float64)[tokens.astype(np.int64)]
    c = _base_scale(case, inputs)
    positions = want.astype(np.float64) - c * rows
    if not np.any(positions) or not np.any(rows):
        return []
    basis = np.stack([rows.reshape(-1), positions.reshape(-1)], axis=1)
    (a, b), *_ = np.linalg.lstsq(basis, got.astype(np.float64).reshape(-1), rcond=None)
    if not _close(got.astype(np.float64), a * rows + b * positions, want.dtype, ulps=64.0) or (math.isclose(a, c, rel_tol=1e-5) and math.isclose(b, 1.0, rel_tol=1e-5)):
        return []
    sizes = _sizes(case, inputs)
    token_names, position_names = _factor_names(a, sizes), _factor_names(b, sizes)
    parts, keys = [], []
    if not math.isclose(a, c, rel_tol=1e-5):
        parts.append(f"the tokens are multiplied by {a:.6g}{_equals(token_names, sizes)} instead of {c:.6g}" + (" (sqrt(D))" if c != 1 else ""))
        keys.append(f"token_scale:{token_names[0] if token_names else round(a, 4)}")
    if not math.isclose(b, 1.0, rel_tol=1e-5):
        parts.append(f"the positions are multiplied by {b:.6g}{_equals(position_names, sizes)} instead of 1")
        keys.append(f"position_scale:{position_names[0] if position_names else round(b, 4)}")
    alternatives = {f"token_scale:{n}": f"the tokens are scaled by {n} instead of sqrt(D)" for n in token_names} if len(keys) == 1 and keys[0].startswith("token") else None
    return [symptom("+".join(keys), f"'{name}' = a * token rows + b * position rows: {' and '.join(parts)}", alternatives=alternatives,
                    token_factor=a, position_factor=b)]


def _sinusoid(case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray) -> list[Symptom]:
    fit = fit_table(got, int(inputs["max_len"]), int(inputs["embed_dim"]))
    if fit is None:
        return []
    words = fit.departures()
    precision = f"computed in {fit.precision}" if fit.precision != "float64" else ""
    if not words and not precision:
        return []
    text = "the table is the spec's sinusoid except: " + "; ".join(words) if words else "the table is the spec's sinusoid"
    text += (f", {precision}" if words else f" {precision}") if precision else ""
    return [symptom("sinusoid:" + ";".join(words + [precision]), text, hint="w_k = 10000^(-2k/D); sin at column 2k, cos at 2k+1, positions from 0 (EMB-SIN-2)",
                    **fit.params(), precision=fit.precision)]


DETECTORS: dict[str, tuple[Callable[..., list[Symptom]], ...]] = {
    "embedding_forward": (_lookup_rows,),
    "embedding_backward": (_table_gradient_rows,),
    "embedding_layer_backward": (_table_gradient_rows,),
    "learned_positions_forward": (_position_rows,),
    "learned_positions_backward": (_position_gradient,),
    "embedding_layer_forward": (_layer_parts,),
    "sinusoidal_table": (_sinusoid,),
}


# ----- errors: rejected, accepted, raised --------------------------------------------------

def _window(case: Case, inputs: Mapping[str, Any]) -> Optional[tuple[Any, int, int]]:
    """(start_pos, T, max_len) of a positions or layer case."""
    start = inputs.get("start_pos", 0)
    if isinstance(inputs.get("x"), np.ndarray) and isinstance(inputs.get("table"), np.ndarray) and inputs["x"].ndim == 3:
        return start, int(inputs["x"].shape[1]), int(inputs["table"].shape[0])
    config, tokens = inputs.get("config"), inputs.get("tokens")
    if isinstance(config, Mapping) and isinstance(tokens, np.ndarray) and tokens.ndim >= 1 and "max_seq_len" in config:
        return start, int(tokens.shape[-1]), int(config["max_seq_len"])
    return None


def _rejected(case: Case, inputs: Mapping[str, Any], result: CaseResult) -> list[Symptom]:
    """A valid input refused: which boundary."""
    window = _window(case, inputs)
    if window and isinstance(window[0], (int, np.integer)):
        start, seq, length = window
        if seq == 0:
            return [symptom("rejects_empty_sequence", "rejects an empty sequence (T = 0), which is valid and gives an empty result")]
        if start + seq == length:
            return [symptom("boundary:rejects_s+T=L", f"rejects start_pos + T = max_seq_len ({start} + {seq} = {length}), the last window that fits: the length check is off by one",
                            "reject only start_pos + T > max_seq_len (EMB-POS-6)")]
    ids = inputs.get("ids", inputs.get("tokens"))
    weight = inputs.get("weight", inputs.get("token_weight"))
    if isinstance(ids, np.ndarray) and isinstance(weight, np.ndarray) and ids.size and weight.ndim == 2 and ids.dtype.kind in "iu":
        if int(ids.max()) == weight.shape[0] - 1:
            return [symptom("boundary:rejects_id_V-1", f"rejects id {weight.shape[0] - 1} = V - 1, the last row: the range check is off by one",
                            "reject only ids >= vocab_size (EMB-IDX-2)")]
    return []


def _accepted(case: Case, inputs: Mapping[str, Any], actual: Mapping[str, Any]) -> list[Symptom]:
    """A result where an error was expected: which boundary is open, and what was computed instead."""
    window = _window(case, inputs)
    if window and isinstance(window[0], (int, np.integer)) and case.expected_error == "sequence_too_long":
        start, seq, length = window
        if start + seq == length + 1:
            return [symptom("boundary:accepts_s+T=L+1", f"accepts start_pos + T = max_seq_len + 1 ({start} + {seq} = {length + 1}): the length check is off by one",
                            "reject start_pos + T > max_seq_len (EMB-POS-6)")]
    if window and not isinstance(window[0], (int, np.integer)) and case.expected_error == "invalid_start_pos":
        return [symptom("accepts_non_integer_start_pos", f"accepts start_pos = {window[0]!r}, which is not an integer, and returns a result",
                        "check start_pos is an integer (not bool, not float) before using it (EMB-POS-7)")]
    weight, ids, out = inputs.get("weight"), inputs.get("ids"), actual.get("output")
    if case.operation == "embedding_forward" and isinstance(weight, np.ndarray) and isinstance(ids, np.ndarray) and isinstance(out, np.ndarray) \
            and out.shape == ids.shape + (weight.shape[1],) and ids.size <= 4096:
        with np.errstate(all="ignore"):
            return _row_mapping(case, weight, ids, out)
    return []


_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)\n\s+(.+)')
_RAISED = re.compile(r"raised (\w+): ([^\n(]*)")


def _exception(case: Case, inputs: Mapping[str, Any], result: CaseResult) -> list[Symptom]:
    """An untyped exception: its type, the implementation frame it came from, and the check that should have come first."""
    raised = _RAISED.search(result.message)
    if not raised:
        return []
    frames = [m for m in _FRAME.finditer(result.message) if "/embconf/" not in m.group(1) and "/conformance/" not in m.group(1)]
    where = ""
    if frames:
        path, line, function, code = frames[-1].groups()
        where = f" at {path.rsplit('/', 1)[-1]}:{line} in {function} (`{code.strip()[:80]}`)"
        if len(frames) > 1:  # the first frame of the traceback is where the implementation was entered
            path, line, function, code = frames[0].groups()
            where += f", reached from {path.rsplit('/', 1)[-1]}:{line} in {function} (`{code.strip()[:80]}`)"
    should = f"; this input should be rejected with {case.expected_error} before it is used" if case.expected_error else "; this input is valid"
    culprit = _culprit(case, inputs)
    return [symptom(f"untyped:{raised.group(1)}:{case.expected_error}", f"raised {raised.group(1)}{where}{culprit}{should}",
                    f"check the input first and raise the spec's {case.expected_error} (EMB-ERR-1)" if case.expected_error else "",
                    exception=raised.group(1))]


def _culprit(case: Case, inputs: Mapping[str, Any]) -> str:
    """The input the expected error is about, shown."""
    name = {"invalid_start_pos": "start_pos", "sequence_too_long": "start_pos", "invalid_index": "ids", "index_out_of_range": "ids"}.get(case.expected_error or "")
    if name is None or name not in inputs:
        return ""
    value = inputs[name]
    shown = repr(value) if not isinstance(value, np.ndarray) else np.array2string(value.reshape(-1)[:6], separator=", ")
    return f" on {name} = {shown}"


def history_symptom(case: Case, result: CaseResult, earlier: Iterable[tuple[Case, CaseResult]]) -> list[Symptom]:
    """The gradient is this call's plus the gradient an earlier call returned: a buffer reused across calls."""
    for name, want in case.expected_outputs.items():
        got = (result.actual or {}).get(name)
        if not isinstance(want, np.ndarray) or not isinstance(got, np.ndarray) or got.shape != want.shape or not name.startswith("grad"):
            continue
        leftover = got.astype(np.float64) - want.astype(np.float64)
        if not np.any(np.abs(leftover) > 1e-6):
            continue
        for other_case, other in earlier:
            before = (other.actual or {}).get(name)
            if other_case.operation == case.operation and isinstance(before, np.ndarray) and before.shape == got.shape \
                    and np.any(before) and np.allclose(leftover, before.astype(np.float64), rtol=1e-5, atol=1e-6):
                return [symptom(f"stale_buffer:{case.operation}:{name}",
                                f"'{name}' is the right gradient plus exactly the gradient an earlier call returned ({other_case.id}): a buffer kept across calls and never zeroed",
                                "allocate a fresh zero gradient on every backward call (EMB-BWD-2)",
                                title=f"'{name}' is the right gradient plus exactly the gradient an earlier call returned: a buffer kept across calls and never zeroed",
                                earlier=other_case.id)]
    return []
