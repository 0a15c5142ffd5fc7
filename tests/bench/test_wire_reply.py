"""The transfer the bench charges a ``subprocess:`` implementation is measured on a reply the protocol allows:
the reply line it encodes and decodes is valid under spec/schemas/protocol-run-reply.schema.json."""

from __future__ import annotations

import json

import numpy as np

from embconf.bench.wire import reply_line
from embconf.protocol.messages import schema_problem


def test_the_reply_the_bench_encodes_is_valid_under_the_protocol_schema():
    reply = json.loads(reply_line(np.zeros((3, 4), dtype=np.float32)))
    assert schema_problem("run-reply", reply) is None
    assert list(reply) == ["seq", "outputs"]


def test_the_schema_refuses_a_reply_with_a_status():
    reply = {**json.loads(reply_line(np.zeros((1, 2), dtype=np.float32))), "status": "ok"}
    assert schema_problem("run-reply", reply) is not None
