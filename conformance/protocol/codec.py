"""The protocol's values (spec/PROTOCOL.md): arrays base64-encoded, non-finite floats as the strings 'nan',
'inf', '-inf' (:func:`to_wire`, :func:`from_wire`), and the protocol's version. Lines (one JSON value each) are
:mod:`embconf.protocol.lines`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from embconf.model.encoding import (
    NON_FINITE,
    EncodingError,
    PinnedRows,
    decode_array,
    encode_array,
    holds_rows,
    non_finite_name,
    rows_problem,
)

PROTOCOL_VERSION = 1
PROTOCOL_MINOR = 7  # 1: spec 1.1's optional inputs, embedding_forward_max_norm, float16 and bfloat16;
# 2: the run reply "exception" (an untyped failure, the outcome error, the peer going on);
# 3: spec 1.3's rope operations and their mapping input "scaling";
# 4: a run request's "rows", and replies holding only those rows of an output (PROTOCOL.md);
# 5: a run request's "instance": calls on one instance of the implementation (spec 2.0, the feature stateful)
# 6: spec 2.1's bag operations, their features, the error kind invalid_offsets and the capability bag_conventions
# 7: spec 2.3's quantized operations, their features and the capability quantize_conventions (tables as int32 bytes)
ROWS_MINOR = 4  # a peer of this minor or later is asked for the rows the runner judges
INSTANCES_MINOR = 5  # a peer of this minor or later may declare the feature stateful and is told the instance


# ----- values


def to_wire(value: Any, rows: list[int] | None = None) -> Any:
    """A value as the protocol writes it: arrays base64-encoded (only ``rows`` of an array when given, as a
    reply may send the rows a request asked for), non-finite floats as strings."""
    if isinstance(value, np.ndarray):
        return encode_array(value, rows=rows if holds_rows(value, rows) else None, inline_limit=-1)
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return non_finite_name(value)
    if isinstance(value, Mapping):
        return {key: to_wire(item) for key, item in value.items()}
    return value


def from_wire(value: Any, rows: tuple[int, ...] | None = None) -> Any:
    """A value read from the wire: an array decoded, the non-finite strings read back; an array holding
    only some rows (``rows`` in its encoding) when exactly those were asked for (``rows``: protocol minor 4)
    is a :class:`~embconf.model.encoding.PinnedRows`.

    EncodingError for a malformed array, TypeError for a value that is no output.
    """
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return value
    if isinstance(value, str) and value in NON_FINITE:
        return NON_FINITE[value]
    if isinstance(value, dict):
        if "rows" not in value:
            return decode_array(value)
        problem = rows_problem(value["rows"], rows)  # in the words the worker's replies get
        if problem:
            raise EncodingError(problem)
        return PinnedRows(tuple(value["shape"]), tuple(value["rows"]), decode_array(value))
    raise TypeError(f"an output must be an array, a number or null, got {type(value).__name__} {value!r:.60}")
