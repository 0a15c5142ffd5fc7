"""The portable array encoding of fixtures and of the wire protocol (spec/SPEC.md section 9).

An array is a mapping ``{dtype, shape, data}`` with ``data`` a flat, row-major
list (floats as shortest round-trip decimals of the stored value; non-finite
values as the strings "nan", "inf", "-inf"), or ``{dtype, shape, base64}`` with
the little-endian bytes. An expected array may pin only some rows of a larger
result: ``rows`` lists them and ``data``/``base64`` hold just those rows.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from embconf.model.dtypes import BFLOAT16_HINT, WIRE_LAYOUT, from_wire, have_bfloat16, round_once, to_wire

ARRAY_DTYPES: dict[str, str] = dict(WIRE_LAYOUT)  # spec 1.1 adds float16 and bfloat16 (raw bit patterns, EMB-HLF-2)
NON_FINITE: dict[str, float] = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
INLINE_LIMIT = 64  # arrays with more elements use base64: exact, and fast to load
MAX_NDIM = 32  # dimensions an encoded array may have (numpy 1.x allows 32, 2.x 64; the spec's arrays have at most 4)


class EncodingError(ValueError):
    """A malformed array mapping."""


@dataclass(frozen=True, eq=False)
class PinnedRows:
    """Some rows (axis 0) of an output, in the order listed: all that the worker or a protocol peer sends of an
    output when the runner asks only for the rows it judges (the rows the golden pins; protocol minor 4)."""

    shape: tuple[int, ...]  # the whole output's
    rows: tuple[int, ...]
    values: np.ndarray  # the rows

    @property
    def dtype(self) -> np.dtype:
        return self.values.dtype

    def __repr__(self) -> str:  # what --repeat compares (run.repeat.fingerprint): the rows, bit for bit
        import hashlib  # here: a protocol peer that imports this module has no use for OpenSSL (3 ms of its start)

        digest = hashlib.sha256(np.ascontiguousarray(self.values).tobytes()).hexdigest()
        return f"PinnedRows({self.dtype}, {list(self.shape)}, rows {list(self.rows)}, sha256={digest})"


def holds_rows(value: Any, rows: Sequence[int] | None) -> bool:
    """Whether ``rows`` were asked for and ``value`` is an array holding every one of them: only then is an
    output sent as those rows alone (by a protocol peer or the worker), else it is sent whole."""
    return (
        rows is not None
        and isinstance(value, np.ndarray)
        and value.ndim > 0
        and all(0 <= r < value.shape[0] for r in rows)
    )


def rows_only(value: Any, rows: Sequence[int] | None) -> Any:
    """The ``rows`` of ``value`` as :class:`PinnedRows` where it holds them all (:func:`holds_rows`), else ``value``."""
    if not holds_rows(value, rows):
        return value
    assert rows is not None
    return PinnedRows(tuple(value.shape), tuple(rows), value[np.asarray(rows, dtype=np.intp)])


_OTHER_ROWS = "it holds other rows than the ones asked for"


def rows_problem(rows: Any, asked: Sequence[int] | None) -> str:
    """Why an output sent as ``rows`` alone (a list on the wire) is not what was asked for (``asked``: the rows
    asked for, None for the whole output), in a few words; "" when it is."""
    if asked is None:
        return "it holds only some rows, but the whole output was asked for"
    if not isinstance(rows, (list, tuple)) or list(rows) != list(asked):
        return _OTHER_ROWS
    return ""


def pinned_rows_problem(value: PinnedRows, asked: Sequence[int] | None) -> str:
    """Why ``value`` (read from the worker, which the runner does not trust) is not the ``asked`` rows of an
    output, in a few words; "" when it is."""
    problem = rows_problem(value.rows, asked)
    if problem or asked is None or not isinstance(value.rows, tuple):  # the worker's rows are a tuple
        return problem or _OTHER_ROWS
    shape, values = value.shape, value.values
    if not (
        isinstance(shape, tuple)
        and len(shape) > 0
        and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape)
        and isinstance(values, np.ndarray)
        and values.shape == (len(asked), *shape[1:])
        and all(row < shape[0] for row in asked)
    ):
        return "its rows do not fit the shape it gives"
    return ""


def is_array(value: Any) -> bool:
    return isinstance(value, Mapping) and "dtype" in value and "shape" in value


def encode_array(array: np.ndarray, rows: list[int] | None = None, inline_limit: int = INLINE_LIMIT) -> dict[str, Any]:
    """The encoding of ``array`` (or of its ``rows`` only), inline when small."""
    array = np.asarray(array)
    dtype = array.dtype.name
    if dtype not in ARRAY_DTYPES:
        raise EncodingError(f"unsupported dtype {dtype}")
    encoded: dict[str, Any] = {"dtype": dtype, "shape": list(array.shape)}
    payload = array
    if rows is not None:
        encoded["rows"] = [int(r) for r in rows]
        payload = array[np.asarray(rows, dtype=np.int64)]
    if payload.size <= inline_limit:
        with np.errstate(invalid="ignore"):  # NaN payloads of a half dtype
            flat = (payload.astype(np.float64) if dtype in ("float16", "bfloat16") else payload).reshape(-1).tolist()
        encoded["data"] = (
            flat if array.dtype.kind in "iu" else [v if math.isfinite(v) else non_finite_name(v) for v in flat]
        )
    else:
        encoded["base64"] = base64.b64encode(to_wire(payload, dtype)).decode("ascii")
    return encoded


def non_finite_name(value: float) -> str:
    return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")


def payload_shape(encoded: Mapping[str, Any]) -> tuple[int, ...]:
    """Shape of the values actually stored: the full shape, or (len(rows),) + shape[1:]."""
    shape = tuple(encoded["shape"])
    return (len(encoded["rows"]),) + shape[1:] if "rows" in encoded else shape


def decode_array(encoded: Mapping[str, Any]) -> np.ndarray:
    """A writable numpy array from its encoding (only the pinned rows when ``rows`` is present)."""
    if not isinstance(encoded, Mapping):
        raise EncodingError(f"an array must be a mapping, got {type(encoded).__name__}")
    dtype = encoded.get("dtype")
    if not isinstance(dtype, str) or dtype not in ARRAY_DTYPES:
        raise EncodingError(f"unknown array dtype {dtype!r}; expected one of {sorted(ARRAY_DTYPES)}")
    if dtype == "bfloat16" and not have_bfloat16():
        raise EncodingError(BFLOAT16_HINT)
    shape = encoded.get("shape")
    if not isinstance(shape, list) or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape):
        raise EncodingError(f"array shape must be a list of non-negative integers, got {shape!r}"[:200])
    if len(shape) > MAX_NDIM:
        raise EncodingError(f"array shape has {len(shape)} dimensions; at most {MAX_NDIM} are allowed")
    rows = encoded.get("rows", [])
    if "rows" in encoded and (
        not isinstance(rows, list)
        or not shape
        or not all(isinstance(r, int) and not isinstance(r, bool) and 0 <= r < shape[0] for r in rows)
    ):
        raise EncodingError(f"'rows' must list row indices within the first dimension {shape[:1]}, got {rows!r}"[:200])
    if len(set(rows)) != len(rows):
        raise EncodingError("'rows' repeats a row")
    target = payload_shape(encoded)
    count = math.prod(target)
    if "base64" in encoded:
        try:
            raw = base64.b64decode(encoded["base64"], validate=True)
        except (ValueError, TypeError) as exc:
            raise EncodingError(f"invalid base64 payload: {exc}") from None
        itemsize = np.dtype(ARRAY_DTYPES[dtype]).itemsize
        if len(raw) != count * itemsize:
            raise EncodingError(
                f"base64 payload holds {len(raw)} bytes, shape {list(target)} of {dtype} needs {count * itemsize}"
            )
        return from_wire(raw, dtype).reshape(target)
    data = encoded.get("data")
    if not isinstance(data, list):
        raise EncodingError("array needs a 'data' list or a 'base64' string")
    if len(data) != count:
        raise EncodingError(f"array data has {len(data)} values, shape {list(target)} needs {count}")
    types = set(map(type, data))  # read as JSON and YAML read them: plain ints, floats and strings (checked at once)
    try:
        if dtype.startswith("int"):
            if not types <= {int} and not all(isinstance(v, int) and not isinstance(v, bool) for v in data):
                raise EncodingError(f"{dtype} data must be integers")
            return np.array(data, dtype=dtype).reshape(target)
        values = [NON_FINITE[v] if isinstance(v, str) else v for v in data] if str in types else data
        if not types <= {int, float} and not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in values
        ):
            raise EncodingError(f"{dtype} data must be numbers or 'nan'/'inf'/'-inf'")
        wide = np.array(values, dtype=np.float64).reshape(target)
        with np.errstate(over="ignore"):
            array = round_once(wide, dtype)  # one rounding (EMB-HLF-2)
        overflowed = np.isinf(array) & np.isfinite(wide)
        if overflowed.any():
            raise EncodingError(f"a finite value overflows {dtype} (write 'inf' if infinity is meant)")
        return array
    except KeyError as exc:
        raise EncodingError(f"unknown non-finite value {exc.args[0]!r}") from None
    except OverflowError as exc:
        raise EncodingError(f"value does not fit {dtype}: {exc}") from None


def decode_value(value: Any) -> Any:
    """An input or output as a fixture or the wire encodes it, decoded: an array (:func:`decode_array`), a
    mapping copied, anything else as it is."""
    if is_array(value):
        return decode_array(value)
    if isinstance(value, dict):
        return dict(value)
    return value
