"""A start reply whose field holds the wrong type fails the handshake in one line (exit 2), never the runner: a
convention list holding a list or an object (unhashable), and the other fields of the reply, each from a real
peer process (tests/peers/start_reply.py), with and without --validate-protocol."""

from __future__ import annotations

import pytest
from helpers import assert_one_line_error, peer, run_cli

CAPABILITIES = "implementation.capabilities"
MALFORMED = [
    (f"{CAPABILITIES}.rope_conventions", '[["negative_sense"]]'),
    (f"{CAPABILITIES}.rope_conventions", "[{}]"),
    (f"{CAPABILITIES}.bag_conventions", "[{}]"),
    (f"{CAPABILITIES}.bag_conventions", '[["drop_negative_ids"]]'),
    (f"{CAPABILITIES}.operations", "[[]]"),
    (f"{CAPABILITIES}.features", "[{}]"),
    (f"{CAPABILITIES}.documented", '[{"link": "x", "sentence": "y", "cases": [[]]}]'),
    (f"{CAPABILITIES}.sinusoid_convention", "[[]]"),
    (f"{CAPABILITIES}.sinusoid_parameters", '{"layout": [[]]}'),
    (f"{CAPABILITIES}.sinusoid_parameters", '{"base": 1e999}'),
    ("implementation.name", "{}"),
    ("protocol", "[[]]"),
]


@pytest.mark.parametrize("validate", [False, True], ids=["read", "validated"])
@pytest.mark.parametrize("field, value", MALFORMED, ids=[f"{field}={value}" for field, value in MALFORMED])
def test_a_malformed_start_reply_field_fails_the_handshake_in_one_line(field, value, validate):
    options = ["--validate-protocol"] if validate else []
    done = run_cli("run", "--impl", peer("start_reply", field, value), "--select", "lookup.forward.ids_1d", *options)
    assert_one_line_error(done, "handshake")


def test_the_peer_that_replaces_a_field_answers_like_the_reference_otherwise():
    done = run_cli(
        "run", "--impl", peer("start_reply", "implementation.name", '"renamed"'), "--select", "lookup.forward.ids_1d"
    )
    assert done.returncode == 0 and "renamed" in done.stdout, done.stderr
