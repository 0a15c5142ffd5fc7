"""The protocol's messages: the schemas and the document's worked exchange agree with what the runner sends, the
exception reply is an error and the peer goes on, a start reply cites documented choices, the Node.js example
answers as the document says, and requests carry the fixture's base64 arrays as they are."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys

import pytest
from helpers import ROOT, assert_judged, peer, run_reported

NODE_EXAMPLE = f"node {shlex.quote(str(ROOT / 'examples' / 'javascript' / 'embconf_impl.js'))}"


SCHEMAS = ROOT / "spec" / "schemas"


# fast cases of four operations; the peer raises on the embedding_backward ones
RAISED = ["lookup.backward.module_example_020", "lookup.backward.module_example_202"]
SELECTION = ["pos.forward.batch1", "mem.adam.small_float16", "lookup.forward.module_example", RAISED[0]]
SELECTION += ["lookup.sparse.module_example", "lookup.error.id_equals_vocab", RAISED[1]]


def schema(name: str) -> dict:
    return json.loads((SCHEMAS / f"protocol-{name}.schema.json").read_text())


def validator(name: str):
    from embconf.model.schemas import validator as compiled

    return compiled(f"protocol-{name}")


def test_the_schemas_use_the_vocabulary():
    from embconf.model.convention import claimable_features
    from embconf.model.vocabulary import error_kinds, operations

    # profiles and rope and bag conventions are declared by name, never as features
    plain = sorted(claimable_features())
    assert schema("run")["$defs"]["operation"]["enum"] == list(operations())
    assert schema("start-reply")["$defs"]["operation"]["enum"] == list(operations())
    assert sorted(schema("start-reply")["$defs"]["feature"]["enum"]) == plain
    assert schema("run-reply")["$defs"]["error_kind"]["enum"] == error_kinds()
    assert schema("run")["$defs"]["array"] == schema("run-reply")["$defs"]["array"]  # one encoding, kept in step


def test_every_request_the_runner_sends_conforms(corpus):
    from embconf.protocol.messages import STOP_MESSAGE, run_message, start_message

    assert not list(validator("start").iter_errors(start_message()))
    assert not list(validator("stop").iter_errors(STOP_MESSAGE))
    run = validator("run")
    for seq, case in enumerate(corpus.cases, 1):
        message = json.loads(json.dumps(run_message(seq, case.operation, case.inputs())))
        assert not list(run.iter_errors(message)), case.id
        assert all(
            "base64" in value for value in message["inputs"].values() if isinstance(value, dict) and "dtype" in value
        )


def test_the_worked_exchange_in_the_document_conforms():
    text = (ROOT / "spec" / "PROTOCOL.md").read_text()
    lines = re.findall(r"^([→←]) (\{.*\})$", text, flags=re.MULTILINE)
    assert len(lines) >= 8
    replies = 0
    for arrow, raw in lines:
        message = json.loads(raw)
        name = message["cmd"] if arrow == "→" else ("start-reply" if replies == 0 else "run-reply")
        replies += arrow == "←"
        assert not list(validator(name).iter_errors(message)), raw


def test_stdout_is_split_into_lines_up_to_the_cap():
    from embconf.protocol.peer import Peer as _Process

    script = "import sys; sys.stdout.write('a\\nbb\\n' + 'c' * 50 + '\\nd\\n'); sys.stdout.flush()"
    process = _Process([sys.executable, "-c", script], max_line=20)
    events = [process.events.get(timeout=10) for _ in range(3)]
    process.kill()
    assert events[:2] == [("line", b"a"), ("line", b"bb")]
    assert events[2][0] == "oversized" and events[2][1].startswith(b"c")


@pytest.mark.parametrize("validate", [False, True])
def test_an_exception_reply_is_an_error_and_the_peer_keeps_running(tmp_path, validate):
    started = tmp_path / "started"
    args = ["--validate-protocol"] if validate else []
    result, report = run_reported(tmp_path, peer("raises", str(started)), *args, select=SELECTION)
    words = ("raised ZeroDivisionError: division by zero (expected a result)", "at scatter_add (embeddings.rs:42)")
    expected = dict.fromkeys(RAISED, ("error", *words))
    assert_judged(result, report, SELECTION, expected, rest=("pass", "not_applicable"))
    assert len(started.read_text().split()) == 1  # never restarted


def test_the_exception_reply_parses_and_older_forms_still_do():
    from embconf.protocol.messages import Error, Raised, Skipped, parse_run_reply

    body = {"type": "TypeError", "message": "bad operand", "traceback": "line 3"}
    assert parse_run_reply({"seq": 3, "exception": body}, 3, "table_bytes", validate=True) == Raised(
        3, "TypeError", "bad operand", "line 3"
    )
    assert parse_run_reply({"seq": 3, "exception": {"message": "m"}}, 3, "table_bytes").describe() == (
        "raised an exception: m"
    )
    typed = {"seq": 4, "error": {"kind": "invalid_index", "message": "m"}}
    assert parse_run_reply(typed, 4, "embedding_forward", validate=True) == Error(4, "invalid_index", "m")
    assert parse_run_reply({"seq": 5, "skipped": {"reason": "r"}}, 5, "table_bytes") == Skipped(5, "r")
    assert list(validator("run-reply").iter_errors({"seq": 3, "exception": {"type": "T"}}))  # message required


def exchange_with_node_example(requests: list[dict]) -> tuple[subprocess.CompletedProcess, list]:
    """The Node.js example given ``requests`` (one JSON line each) on its stdin: the process and its replies."""
    done = subprocess.run(
        shlex.split(NODE_EXAMPLE),
        input="".join(json.dumps(r) + "\n" for r in requests),
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done, [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_javascript_example_reports_an_untyped_failure_and_goes_on():
    requests = [
        {"cmd": "start", "protocol": 1, "protocol_minor": 2, "spec_version": "1.1.0"},
        {  # no ids: a TypeError inside the implementation, no error kind
            "cmd": "run",
            "seq": 1,
            "operation": "gradient_bytes",
            "inputs": {"vocab_size": 4, "embed_dim": 3, "dtype": "float32"},
        },
        {
            "cmd": "run",
            "seq": 2,
            "operation": "table_bytes",
            "inputs": {"num_rows": 4, "embed_dim": 3, "dtype": "float32"},
        },
        {"cmd": "stop"},
    ]
    done, replies = exchange_with_node_example(requests)
    assert done.returncode == 0 and len(replies) == 3, done.stderr
    assert replies[0]["protocol_minor"] == 4
    assert set(replies[1]) == {"seq", "exception"} and replies[1]["exception"]["type"] == "TypeError"
    assert not list(validator("run-reply").iter_errors(replies[1]))
    assert replies[2] == {"seq": 2, "outputs": {"bytes": 48, "megabytes": 4.8e-05, "mebibytes": 4.57763671875e-05}}


def test_a_peer_cites_documented_choices_in_its_start_reply():
    from embconf.protocol.lines import ProtocolError
    from embconf.protocol.messages import parse_start_reply
    from embconf.protocol.reference_peer import hello

    message = hello()
    cited = {"link": "https://example.invalid/gather", "sentence": "Negative ids count from the back."}
    message["implementation"]["capabilities"]["documented"] = [{**cited, "requirements": ["EMB-IDX-2"]}]
    for validate in (False, True):
        caps = parse_start_reply(message, validate).implementation.capabilities
        choice = caps.documented_choice("lookup.error.negative_one", ["EMB-IDX-2", "EMB-ERR-1"])
        assert choice is not None and choice.to_json() == cited
    message["implementation"]["capabilities"]["documented"] = [{"link": 3}]
    for validate in (False, True):
        with pytest.raises(ProtocolError, match="documented"):
            parse_start_reply(message, validate)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_javascript_example_sends_only_the_rows_asked_for():
    """The worked example speaks minor 4: asked for rows 3 and 0 of a table, it sends those, in that order."""
    from embconf.model.encoding import decode_array
    from embconf.reference import sinusoidal_table

    inputs = {"max_len": 8, "embed_dim": 4, "dtype": "float32"}
    requests = [
        {"cmd": "start", "protocol": 1, "protocol_minor": 4, "spec_version": "1.3.0"},
        {"cmd": "run", "seq": 1, "operation": "sinusoidal_table", "inputs": inputs, "rows": {"table": [3, 0]}},
        {"cmd": "stop"},
    ]
    done, replies = exchange_with_node_example(requests)
    assert done.returncode == 0 and replies[0]["protocol_minor"] == 4, done.stderr
    table = replies[1]["outputs"]["table"]
    assert table["shape"] == [8, 4] and table["rows"] == [3, 0]
    assert not list(validator("run-reply").iter_errors(replies[1]))
    assert (decode_array(table) == sinusoidal_table(8, 4)[[3, 0]]).all()


def test_a_request_forwards_the_fixture_s_base64_arrays_and_encodes_the_rest(corpus):
    """The runner always sends base64 (PROTOCOL.md section 2): an array the fixture holds base64-encoded is
    sent as the fixture holds it (not decoded to be encoded again), one it holds as a data list is encoded."""
    from embconf.model.contract import Planned
    from embconf.model.encoding import decode_array
    from embconf.protocol.adapter import _request_inputs
    from embconf.protocol.messages import RunRequest

    mixed = next(
        case
        for case in corpus.cases
        if {"base64" in v for v in case.raw_inputs.values() if isinstance(v, dict) and "dtype" in v} == {True, False}
    )
    planned = Planned(mixed.operation, mixed.inputs, encoded=mixed.raw_inputs)
    inputs = _request_inputs(planned)
    sent = RunRequest(1, mixed.operation, inputs).wire()["inputs"]
    assert set(sent) == set(mixed.raw_inputs)
    for name, raw in mixed.raw_inputs.items():
        if isinstance(raw, dict) and "base64" in raw:
            assert inputs[name] is raw and sent[name] == raw  # never decoded
        elif isinstance(raw, dict) and "dtype" in raw:
            assert "base64" in sent[name] and "data" not in sent[name]
            decoded, fresh = decode_array(sent[name]), mixed.inputs()[name]
            assert decoded.dtype == fresh.dtype and decoded.tobytes() == fresh.tobytes()
        else:
            assert sent[name] == raw
    unplanned = RunRequest(1, mixed.operation, _request_inputs(Planned(mixed.operation, mixed.inputs))).wire()
    assert all("base64" in v for v in unplanned["inputs"].values() if isinstance(v, dict) and "dtype" in v)
