"""Symptoms of errors: a valid input rejected, an invalid one accepted, an untyped exception and where it came from."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Optional

import numpy as np

from embconf.corpus.fixtures import Case
from embconf.diagnosis.factors import shortest
from embconf.diagnosis.symptoms.base import Symptom, symptom
from embconf.diagnosis.symptoms.raised import cast_failure, constructor_failure
from embconf.diagnosis.symptoms.rows import row_mapping
from embconf.diagnosis.symptoms.values import base_scale
from embconf.model.contract import UNSPECIFIED
from embconf.model.outcomes import CaseResult
from embconf.model.symptom import ACCEPTS, UNTYPED, SymptomKey
from embconf.model.vocabulary import optional_inputs


def window_of(inputs: Mapping[str, Any]) -> Optional[tuple[Any, int, int]]:
    """(start_pos, T, max_len) of a positions or layer case."""
    start = inputs.get("start_pos", 0)
    if (
        isinstance(inputs.get("x"), np.ndarray)
        and isinstance(inputs.get("table"), np.ndarray)
        and inputs["x"].ndim == 3
    ):
        return start, int(inputs["x"].shape[1]), int(inputs["table"].shape[0])
    config, tokens = inputs.get("config"), inputs.get("tokens")
    if isinstance(config, Mapping) and isinstance(tokens, np.ndarray) and tokens.ndim >= 1 and "max_seq_len" in config:
        return start, int(tokens.shape[-1]), int(config["max_seq_len"])
    return None


def _refused_for(kind: str, case: Case, inputs: Mapping[str, Any], result: CaseResult) -> bool:
    """Whether the refusal can be about ``kind``: it names that kind, or names none (a coarse error) and the case
    carries no optional input (padding_idx, ...) that could be what was refused instead."""
    if result.error_kind == kind:
        return True
    optional = [name for name in optional_inputs(case.operation) if inputs.get(name) is not None]
    return result.error_kind == UNSPECIFIED and not optional


def rejected(case: Case, inputs: Mapping[str, Any], result: CaseResult) -> list[Symptom]:
    """A valid input refused: which boundary (said only when the refusal is about that boundary)."""
    window = window_of(inputs)
    if window and isinstance(window[0], (int, np.integer)):
        start, seq, length = window
        if seq == 0:
            return [
                symptom(
                    "rejects_empty_sequence",
                    "rejects an empty sequence (T = 0), which is valid and gives an empty result",
                )
            ]
        if start + seq == length and _refused_for("sequence_too_long", case, inputs, result):
            return [
                symptom(
                    "boundary:rejects_s+T=L",
                    f"rejects start_pos + T = max_seq_len ({start} + {seq} = {length}), the last window that fits: the length check is off by one",
                    "reject only start_pos + T > max_seq_len (EMB-POS-6)",
                )
            ]
    ids = inputs.get("ids", inputs.get("tokens"))
    weight = inputs.get("weight", inputs.get("token_weight"))
    if (
        isinstance(ids, np.ndarray)
        and isinstance(weight, np.ndarray)
        and ids.size
        and weight.ndim == 2
        and ids.dtype.kind in "iu"
        and _refused_for("index_out_of_range", case, inputs, result)
    ):
        if int(ids.max()) == weight.shape[0] - 1:
            return [
                symptom(
                    "boundary:rejects_id_V-1",
                    f"rejects id {weight.shape[0] - 1} = V - 1, the last row: the range check is off by one",
                    "reject only ids >= vocab_size (EMB-IDX-2)",
                )
            ]
    return []


def accepted(case: Case, inputs: Mapping[str, Any], actual: Mapping[str, Any]) -> list[Symptom]:
    """A result where an error was expected: which boundary is open, and what was computed instead."""
    window = window_of(inputs)
    if window and isinstance(window[0], (int, np.integer)) and case.expected_error == "sequence_too_long":
        start, seq, length = window
        if start + seq == length + 1:
            return [
                symptom(
                    "boundary:accepts_s+T=L+1",
                    f"accepts start_pos + T = max_seq_len + 1 ({start} + {seq} = {length + 1}), one past the last window that fits",
                    "reject start_pos + T > max_seq_len (EMB-POS-6)",
                    title="accepts start_pos + T = max_seq_len + 1, one past the last window that fits",
                )
            ]
    if window and not isinstance(window[0], (int, np.integer)) and case.expected_error == "invalid_start_pos":
        return [
            symptom(
                "accepts_non_integer_start_pos",
                f"accepts start_pos = {window[0]!r}, which is not an integer, and returns a result",
                "check start_pos is an integer (not bool, not float) before using it (EMB-POS-7)",
            )
        ]
    weight, ids, out = inputs.get("weight"), inputs.get("ids"), actual.get("output")
    if case.operation == "embedding_layer_forward":  # the layer's token rows: what its ids read
        weight, ids, out = inputs.get("token_weight"), inputs.get("tokens"), _token_rows(case, inputs, out)
    if (
        case.operation in ("embedding_forward", "embedding_layer_forward")
        and isinstance(weight, np.ndarray)
        and isinstance(ids, np.ndarray)
        and isinstance(out, np.ndarray)
        and out.shape == ids.shape + (weight.shape[1],)
        and ids.size <= 4096
    ):
        with np.errstate(all="ignore"):
            found = row_mapping(case, weight, ids, out) or garbage_rows(weight, ids, out)
        if found:
            return found
    return [_unrefused(case)]


def _token_rows(case: Case, inputs: Mapping[str, Any], out: Any) -> Optional[np.ndarray]:
    """A layer output's token rows, (output - positions) / c, the positions and c the spec's for the case's config
    (None when the config itself is refused, or the positions rotate the tokens rather than add to them)."""
    from embconf.reference.errors import EmbeddingError
    from embconf.reference.layer import embedding_layer_forward

    config, weight, tokens = inputs.get("config"), inputs.get("token_weight"), inputs.get("tokens")
    if (
        not isinstance(config, Mapping)
        or config.get("pos_encoding") == "rope"
        or not isinstance(weight, np.ndarray)
        or not isinstance(tokens, np.ndarray)
        or not isinstance(out, np.ndarray)
    ):
        return None
    try:  # the positions alone: a table of zeros read at valid ids
        positions = embedding_layer_forward(
            config, np.zeros_like(weight), inputs.get("position_table"), np.zeros(tokens.shape, np.int64),
            inputs.get("start_pos", 0),
        )  # fmt: skip
    except EmbeddingError:
        return None
    if positions.shape != out.shape:
        return None
    with np.errstate(all="ignore"):
        return (out.astype(np.float64) - positions.astype(np.float64)) / base_scale(case, inputs)


def garbage_rows(weight: np.ndarray, ids: np.ndarray, out: np.ndarray) -> list[Symptom]:
    """Every id outside [0, V) got values that are no row of the table (nor zeros, nor NaN), every valid id its own
    row: an unchecked read outside the table. The values that came back are shown, denormals named as such."""
    vocab, flat, rows = weight.shape[0], ids.reshape(-1), out.reshape(-1, weight.shape[1])
    outside = [(a, r) for a, r in zip(flat.tolist(), rows) if not (float(a).is_integer() and 0 <= a < vocab)]
    inside = [(int(a), r) for a, r in zip(flat.tolist(), rows) if float(a).is_integer() and 0 <= a < vocab]
    if not outside or any(not np.array_equal(r, weight[a]) for a, r in inside):
        return []
    table = weight.astype(np.float64)
    for _, row in outside:
        values = row.astype(np.float64)
        if not np.any(values) or np.all(np.isnan(values)):
            return []
        if np.isfinite(values).all() and np.any(np.all(np.isclose(table, values, rtol=1e-6, atol=0.0), axis=1)):
            return []
    values = np.concatenate([r.astype(np.float64) for _, r in outside])
    finite = values[np.isfinite(values) & (values != 0)]
    tiny = float(np.finfo(weight.dtype).tiny) if weight.dtype.kind == "f" else 0.0
    denormal = finite.size > 0 and bool(np.all(np.abs(finite) < tiny))
    shown = ", ".join(
        f"id {shortest(a)} -> {np.array2string(r[:4], precision=3, separator=', ')}" for a, r in outside[:2]
    )
    example = _held(float(finite[0]), weight.dtype) if denormal else ""
    kind = f" (denormal numbers such as {example}, as integer bits read as floats give)" if denormal else ""
    text = (
        f"an id outside [0, V) returns values that are no row of the table{kind}: an unchecked read outside the table"
    )
    return [
        symptom(
            "ids_read_outside_table",
            f"{shown}: {text}",
            "check 0 <= id < vocab_size and raise index_out_of_range before reading (EMB-IDX-1/2)",
            title=text,
            denormal=denormal,
        )
    ]


def _held(value: float, dtype: np.dtype) -> str:
    """``value`` with two significant digits when those are the number ``dtype`` holds (1.4e-45, float32's
    smallest denormal), else with as many as it takes (``factors.shortest``)."""
    text = f"{value:.2g}"
    return text if np.asarray(float(text)).astype(dtype) == np.asarray(value).astype(dtype) else shortest(value, dtype)


def _unrefused(case: Case) -> Symptom:
    """Nothing more precise measured: the refusal the spec requires did not happen."""
    kind = case.expected_error
    return symptom(
        SymptomKey.of(ACCEPTS, case.operation, kind),
        f"returns a result where the spec raises {kind}{_culprit(case, case.inputs())}",
        f"check the input before computing and raise {kind} (EMB-ERR-1)",
        title=f"{case.operation} returns a result where the spec raises {kind}: its check is missing or too lenient",
    )


_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)\n\s+(.+)')
_RAISED = re.compile(r"raised (\w+): ([^\n(]*)")


def exception(case: Case, inputs: Mapping[str, Any], result: CaseResult) -> list[Symptom]:
    """An untyped exception: its type, the implementation frame it came from, and the check that should have come first."""
    raised = _RAISED.search(result.message)
    if not raised:
        return []
    frames = [
        m
        for m in _FRAME.finditer(result.message)
        if "/embconf/" not in m.group(1) and "/conformance/" not in m.group(1) and not _wrapper(m.group(1))
    ]
    where, statement, line, entry, called, raised_at = "", "", "", "", False, ""
    if frames:
        innermost = frames[-1]
        where, statement = f" at {_frame_text(innermost)}", innermost.group(4).strip()
        line = f"{_file(innermost)}:{innermost.group(2)}"
        raised_at = f"{line}:{innermost.group(3)}"  # file:line:function
        # where the implementation was entered: the first frame of the user's own code (a library frame, such as
        # Keras's filtered-traceback handler, only when no other is left)
        own = [m for m in frames if not _library(m.group(1))]
        entered = (own or frames)[0]
        if entered is not innermost:
            entry = f", reached from {_frame_text(entered)}"
            called = bool(own) and _file(entered) != _file(innermost)
        own_check = statement.startswith(("raise ", "assert "))  # its own check refused: said as such below
        failed = (
            None
            if own_check
            else constructor_failure(
                raised.group(1),
                raised.group(2),
                f"{own[0].group(3)} {_file(own[0])}" if own else "",
                f"{_file(innermost)}:{innermost.group(2)}",
                _frame_text(innermost),
            )
        )
        failed = failed or cast_failure(case, inputs, raised.group(1), statement, _frame_text(innermost))
        if failed:  # the line that raised is the cause, whatever the input
            return [failed]
    checked = statement.startswith(("raise ", "assert "))
    if case.expected_error and checked:  # refused before use, by its own check, with another exception
        should = f"; its own check refuses this input, with {raised.group(1)} where the spec's error is {case.expected_error}"
    elif case.expected_error:
        should = f"; this input should be rejected with {case.expected_error} before it is used"
    else:
        should = "; this input is valid"
    culprit = _culprit(case, inputs)
    frame: dict[str, Any] = {"raised_at": raised_at} if raised_at else {}  # file:line:function that raised
    return [
        symptom(
            SymptomKey.of(UNTYPED, raised.group(1), case.expected_error),
            f"raised {raised.group(1)}{where}{entry}{culprit}{should}",
            (
                f"raise the spec's {case.expected_error} from that check"
                if checked
                else f"check the input first and raise the spec's {case.expected_error}"
            )
            + " (EMB-ERR-1)"
            if case.expected_error
            else "",
            # the input shown belongs to the case, not the entry; so does the caller, unless it is the code's own
            # line that called into another file's (a TinyTorch autograd frame reached from the student's file)
            title=f"raised {raised.group(1)}{where}{entry if called else ''}{should}",
            exception=raised.group(1),
            line=line,  # the line that raised (file:line): one missing check, whichever error each input should get
            checked_by=statement.split(" ", 1)[0] if checked else "",  # a check of its own: raise or assert
            **frame,
        )
    ]


def _file(frame: re.Match) -> str:
    return frame.group(1).replace("\\", "/").rsplit("/", 1)[-1]


def _frame_text(frame: re.Match) -> str:
    path, line, function, code = frame.groups()
    return f"{path.rsplit('/', 1)[-1]}:{line} in {function} (`{code.strip()[:80]}`)"


def _library(path: str) -> bool:
    """A frame of an installed library (site-packages), not of the code under test."""
    return "site-packages" in path or "dist-packages" in path


def _wrapper(path: str) -> bool:
    """A frame that only re-raises (Keras's traceback_utils.error_handler, which filters the traceback)."""
    return path.replace("\\", "/").endswith("/utils/traceback_utils.py")


def _culprit(case: Case, inputs: Mapping[str, Any]) -> str:
    """The input the expected error is about, shown."""
    name = {
        "invalid_start_pos": "start_pos",
        "sequence_too_long": "start_pos",
        "invalid_index": "ids",
        "index_out_of_range": "ids",
    }.get(case.expected_error or "")
    if name is None or name not in inputs:
        return ""
    value = inputs[name]
    if not isinstance(value, np.ndarray):
        return f" on {name} = {value!r}"
    if value.size <= 16:
        return f" on {name} = {np.array2string(value, separator=', ', threshold=16)}"
    return f" on {name} of shape {list(value.shape)}"
