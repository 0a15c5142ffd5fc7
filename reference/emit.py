"""A small deterministic YAML writer for fixture files.

Keys keep their insertion order, floats are written as the shortest decimal
that round-trips in their array's dtype, and the output is plain YAML 1.1/1.2
that any YAML loader reads (PyYAML's C loader included).
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from embconf.model.dtypes import HALF_DTYPES, shortest_decimal
from embconf.model.encoding import is_array


def float_text(value: float, dtype: str = "float64") -> str:
    """Shortest round-trip decimal of ``value`` stored as ``dtype``, always with a '.' (YAML 1.1 needs it)."""
    if dtype in HALF_DTYPES:
        text = shortest_decimal(value, dtype)
    elif dtype == "float32":
        f32 = np.float32(value)
        text = (
            np.format_float_positional(f32, unique=True, trim="0")
            if f32 == 0 or 1e-4 <= abs(f32) < 1e16
            else np.format_float_scientific(f32, unique=True, trim="0", exp_digits=2)
        )
    else:
        text = repr(float(value))
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    if exponent:
        sign = "-" if exponent.startswith("-") else "+"
        return f"{mantissa}e{sign}{exponent.lstrip('+-').rjust(2, '0')}"
    return mantissa


def scalar_text(value: Any, dtype: str = "float64") -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value):
            raise ValueError("non-finite scalars are written as strings in arrays only")
        return float_text(float(value), dtype)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid YAML double-quoted scalar
    raise TypeError(f"cannot write {type(value).__name__} to a fixture")


def _flow_list(values: list[Any], dtype: str = "float64") -> str:
    return "[" + ", ".join(scalar_text(v, dtype) for v in values) + "]"


def _is_scalar_list(value: Any) -> bool:
    return isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value)


def _emit(value: Any, indent: int, out: list[str]) -> None:
    pad = " " * indent
    dtype = value.get("dtype", "float64") if is_array(value) else "float64"
    for key, item in value.items():
        if isinstance(item, dict) and item:
            out.append(f"{pad}{key}:")
            _emit(item, indent + 2, out)
        elif isinstance(item, dict):
            out.append(f"{pad}{key}: {{}}")
        elif _is_scalar_list(item):
            out.append(f"{pad}{key}: {_flow_list(item, dtype if key == 'data' else 'float64')}")
        elif isinstance(item, list):
            out.append(f"{pad}{key}:")
            for element in item:
                lines: list[str] = []
                _emit(element, indent + 2, lines)
                out.append(f"{pad}- {lines[0][indent + 2 :]}")
                out.extend(lines[1:])
        else:
            out.append(f"{pad}{key}: {scalar_text(item)}")


def dump_yaml(document: dict[str, Any], header: str = "") -> str:
    """The YAML text of ``document`` (mappings, lists, scalars), with ``header`` as leading comments."""
    out = [f"# {line}" if line else "#" for line in header.splitlines()]
    _emit(document, 0, out)
    return "\n".join(out) + "\n"


def dump_json(document: dict[str, Any]) -> str:
    """The JSON text of ``document`` (a fixture file's, as a YAML reader reads it: the same values, floats
    written as Python's shortest round-trip decimals), one case a line."""
    parts = []
    for key, value in document.items():
        if key == "cases":
            body = ",\n".join(json.dumps(case, allow_nan=False) for case in value)
            parts.append(f"{json.dumps(key)}: [\n{body}\n]")
        else:
            parts.append(f"{json.dumps(key)}: {json.dumps(value, allow_nan=False)}")
    return "{" + ", ".join(parts) + "}\n"
