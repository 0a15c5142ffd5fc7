"""Fuzzed malformed input gives the documented error, never a crash: array encodings, fixture files and protocol
lines and replies, each reader raising only its own error type."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from helpers import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from embconf.corpus.fixtures import FixtureError, parse_fixture_file
from embconf.model.contract import Reply
from embconf.model.encoding import EncodingError, decode_array

# ----- fuzzing: malformed input gives the documented error, never a crash ------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
array_like = st.fixed_dictionaries(
    {
        "dtype": st.sampled_from(["float32", "float64", "int32", "int64", "float16", "bool"]) | json_values,
        "shape": st.lists(st.integers(-2, 5), max_size=4) | json_values,
    },
    optional={
        "data": st.lists(
            st.integers(-3, 3) | st.floats() | st.sampled_from(["nan", "inf", "-inf", "x"]) | json_values, max_size=40
        )
        | json_values,
        "base64": st.text(max_size=40) | st.sampled_from(["AAAAAA==", "AACAPw==", "!!"]) | json_values,
        "rows": st.lists(st.integers(-1, 4), max_size=4) | json_values,
    },
)
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(array_like)
def test_decode_array_raises_only_encoding_error(encoded):
    try:
        array = decode_array(encoded)
    except EncodingError:
        return
    assert isinstance(array, np.ndarray) and array.dtype.name == encoded["dtype"]
    assert math.prod(array.shape) == array.size


VALID_FIXTURE = (ROOT / "fixtures" / "token_lookup.yaml").read_bytes()[:4000]


def _mangled(data: bytes, cut: int, insert: bytes) -> bytes:
    cut %= len(data) + 1
    return data[:cut] + insert + data[cut + len(insert) :]


fixture_bytes = st.one_of(
    st.binary(max_size=300),
    st.builds(
        _mangled,
        st.just(VALID_FIXTURE),
        st.integers(0, len(VALID_FIXTURE)),
        st.sampled_from(
            [
                b"",
                b"\n",
                b": ",
                b"- ",
                b"[",
                b"{",
                b"!!python/object:os.system ",
                b"&a ",
                b"*a",
                b"\x00",
                b"\xff",
                b"    ",
                b"nan",
                b"- id: x\n",
                b'"',
                b"base64: ",
                b"shape: [-1]\n",
            ]
        )
        | st.binary(max_size=12),
    ),
)


@FUZZ
@given(fixture_bytes, st.booleans())
def test_the_fixture_loader_raises_only_fixture_error(raw, validate):
    try:
        cases = parse_fixture_file(Path("fuzz.yaml"), raw, validate=validate)
    except FixtureError:
        return
    if validate:  # what a validated file holds must decode (an unvalidated one is trusted by its hash)
        for case in cases:
            case.inputs()


subprocess_adapter = pytest.importorskip("embconf.protocol.adapter")
codec = pytest.importorskip("embconf.protocol.lines")


def _reply_reader():
    reader = subprocess_adapter.SubprocessAdapter.__new__(subprocess_adapter.SubprocessAdapter)
    reader.validate_protocol = False
    return reader


reply_messages = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"seq": st.sampled_from([1, 2, "1", None])},
        optional={
            "outputs": st.dictionaries(
                st.sampled_from(["output", "grad_weight", "x"]), array_like | json_values, max_size=2
            )
            | json_values,
            "error": st.fixed_dictionaries({"kind": st.sampled_from(["index_out_of_range", "nope"]) | json_values})
            | json_values,
            "skipped": st.fixed_dictionaries({"reason": json_values}) | json_values,
        },
    ),
)


@FUZZ
@given(st.binary(max_size=200) | reply_messages.map(lambda m: json.dumps(m).encode()))
def test_the_protocol_line_reader_raises_only_protocol_errors(line):
    try:
        codec.parse_line(line)
    except codec.ProtocolError:
        pass


@FUZZ
@given(reply_messages)
def test_the_protocol_reply_reader_raises_only_protocol_errors(message):
    try:
        reply = _reply_reader()._reply(message, "embedding_forward", 1)
    except codec.ProtocolError:
        return
    assert isinstance(reply, Reply)
