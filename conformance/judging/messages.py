"""Failure messages that are minimal reproductions: what was asked, where it differs, by how much."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Sequence

import numpy as np

from embconf.corpus.fixtures import Case
from embconf.judging.compare import Mismatch, number_text

MAX_INLINE = 12  # arrays up to this many elements are shown whole in a message


def show(value: Any) -> str:
    """A compact, exact-enough rendering of an input or output value."""
    if isinstance(value, np.ndarray):
        if value.size <= MAX_INLINE:
            body = np.array2string(value, separator=", ", precision=8, floatmode="maxprec")
            return body.replace("\n", "")
        return f"<{value.dtype} array of shape {list(value.shape)}>"
    return repr(value)


def returned_summary(outputs: Mapping[str, Any]) -> str:
    """What came back where an error was expected: each output briefly, a large array as its shape and the
    values of its first row (so an out-of-bounds read's garbage, 1.1e-43, shows)."""
    parts = []
    for name, value in list(outputs.items())[:4]:
        if isinstance(value, np.ndarray) and value.size > MAX_INLINE:
            first = value.reshape(-1, value.shape[-1])[0] if value.ndim else value
            row = np.array2string(first[:MAX_INLINE], separator=", ", precision=8, floatmode="maxprec").replace(
                "\n", ""
            )
            parts.append(f"'{name}' = <{value.dtype} array of shape {list(value.shape)}, first row {row}>")
        else:
            parts.append(f"'{name}' = {show(value)}"[:300])
    return "; ".join(parts)


def _scalar(value: Any) -> str:
    """A value as its dtype prints it: 1.7296883 for a float32, not its float64 expansion."""
    return str(value) if isinstance(value, np.generic) else number_text(value)


def inputs_summary(case: Case, inputs: Mapping[str, Any]) -> str:
    return ", ".join(f"{name}={show(value)}" for name, value in inputs.items())


def mismatch_text(case: Case, inputs: Mapping[str, Any], mismatch: Mismatch) -> str:
    """One mismatch, with the gradient's row story where the output is a table gradient."""
    if mismatch.kind != "value":
        return mismatch.summary
    lines = [mismatch.summary + f": expected {_scalar(mismatch.expected)}, got {_scalar(mismatch.actual)}"]
    if mismatch.error is not None:
        lines.append(
            f"|error| {mismatch.error:.6g} > tolerance {mismatch.bound:.6g}; {mismatch.failing} of {mismatch.total} elements out of tolerance"
        )
    row_story = _gradient_row_story(case, inputs, mismatch)
    if row_story:
        lines.append(row_story)
    return "\n".join(lines)


_TABLE_GRADIENTS = {"grad_weight": "ids", "grad_token_weight": "tokens", "values": "ids"}


def _gradient_row_story(case: Case, inputs: Mapping[str, Any], mismatch: Mismatch) -> str:
    """'Row 0 is used twice so its gradient should be [2, 2], got [1, 1]', for table gradients."""
    if not mismatch.index or "actual_row" not in mismatch.extra:
        return ""
    got = f"{show(np.asarray(mismatch.extra['expected_row']))}, got {show(np.asarray(mismatch.extra['actual_row']))}"
    if mismatch.output in ("grad_table", "grad_position_table"):
        row = mismatch.index[0]
        start = inputs.get("start_pos", 0)
        seq = inputs["x"].shape[1] if "x" in inputs else np.asarray(inputs["tokens"]).shape[-1]
        if isinstance(start, int) and start <= row < start + seq:
            return f"Row {row} is position {row} of the slice [{start}, {start + seq}) so its gradient should be the batch sum {got}"
        return f"Row {row} is outside the slice [{start}, {start + seq}) so its gradient should be exactly zero {got}"
    ids_name = _TABLE_GRADIENTS.get(mismatch.output)
    if ids_name is None or ids_name not in inputs:
        return ""
    ids = np.asarray(inputs[ids_name]).reshape(-1)
    row = mismatch.index[0]
    if mismatch.output == "values":  # the row-sparse form: index i holds the i-th smallest id
        row = int(np.unique(ids.astype(np.int64))[row]) if ids.size else row
    uses = int(np.count_nonzero(ids == row))
    times = {0: "never used", 1: "used once", 2: "used twice"}.get(uses, f"used {uses} times")
    return f"Row {row} is {times} so its gradient should be {got}"


def mismatch_headline(mismatches: list[Mismatch]) -> str:
    """What differs, said once: the one-line mismatches themselves, and 'wrong value' for those detailed below."""
    said = [m.summary for m in mismatches if m.kind != "value"]
    if any(m.kind == "value" for m in mismatches):
        said.append("wrong value")
    return "; ".join(said)


def reproduction(case: Case, headline: str, mismatches: Sequence[Mismatch] = ()) -> str:
    """The whole failure message of a case (its inputs are decoded only here, when something failed).

    Mismatches other than values are one line each and already make the headline (mismatch_headline),
    so only value mismatches get their own lines.
    """
    inputs = case.inputs()
    parts = [
        f"{case.label} [{', '.join(case.requirements)}] {case.operation}: {headline}",
        f"inputs: {inputs_summary(case, inputs)}",
    ]
    parts += [mismatch_text(case, inputs, m) for m in mismatches if m.kind == "value"]
    return "\n".join(parts)
