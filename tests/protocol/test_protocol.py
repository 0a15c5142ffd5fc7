"""The wire protocol: the reference and the Node.js example over it, the schemas, and broken peers.

Every run goes through the CLI in a fresh process, as a user runs it, and its
JSON report must hold every selected case with an outcome.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import PYTHON, ROOT, declined_for_a_later_addition, outcomes, peer, report_cases, run_cli, run_report

SERVE = f"{PYTHON} -m embconf.protocol.reference_peer"
NODE_EXAMPLE = f"node {shlex.quote(str(ROOT / 'examples' / 'javascript' / 'embconf_impl.js'))}"
SCHEMAS = ROOT / "spec" / "schemas"

# A few fast cases; the peers misbehave on the one embedding_backward case among them.
SELECTION = [
    "pos.forward.batch1",
    "mem.adam.small_float16",
    "lookup.forward.module_example",
    "lookup.backward.module_example_020",
    "lookup.sparse.module_example",
    "lookup.error.id_equals_vocab",
]
BAD_CASE = "lookup.backward.module_example_020"


def run_impl(tmp_path: Path, impl: str, *args: str, select: list[str] | None = None, env: dict | None = None):
    """``embconf run -q`` on ``impl`` (``select`` only, if given): the process result and its JSON report."""
    result, report = run_report(tmp_path, impl, "-q", *args, select=select or (), env=env, timeout=120)
    assert report is not None, f"no report (exit {result.returncode}): {result.stderr[-2000:]}"
    return result, report


def assert_rest_pass(report: dict, selection: list[str], bad: set[str]) -> None:
    """The report is complete, and every case but the bad ones passed or was not applicable."""
    assert sorted(outcomes(report)) == sorted(selection)
    rest = {case: outcome for case, outcome in outcomes(report).items() if case not in bad}
    assert set(rest.values()) <= {"pass", "not_applicable"}, rest


# --- the reference and the Node.js example over the protocol


def test_reference_over_the_protocol_matches_in_process(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    in_process, expected = run_impl(tmp_path / "a", "reference")
    over_protocol, actual = run_impl(tmp_path / "b", f"subprocess:{SERVE}")
    assert in_process.returncode == over_protocol.returncode == 0, over_protocol.stderr
    assert outcomes(actual) == outcomes(expected)
    assert actual["implementation"]["name"] == "embconf reference" and actual["implementation"]["language"] == "python"
    assert actual["capabilities"] == expected["capabilities"]


def test_reference_messages_conform_to_the_schemas(tmp_path):
    result, report = run_impl(tmp_path, f"subprocess:{SERVE}", "--validate-protocol")
    assert result.returncode == 0, [c["message"] for c in report["cases"] if c["outcome"] != "pass"][:3]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_javascript_example_passes_every_applicable_case(tmp_path):
    result, report = run_impl(tmp_path, f"subprocess:{NODE_EXAMPLE}", "--validate-protocol")
    failures = {c["id"]: c["message"][:300] for c in report["cases"] if c["outcome"] not in ("pass", "not_applicable")}
    assert result.returncode == 0 and not failures, failures
    skipped = [c for c in report["cases"] if c["outcome"] == "not_applicable"]
    assert all(declined_for_a_later_addition(c) for c in skipped)
    assert report["implementation"]["language"] == "javascript"
    assert report["summary"]["pass"] >= 200


# --- broken peers: the affected case gets its outcome, the rest of the run goes on


def test_a_hang_times_out_and_the_rest_completes(tmp_path):
    result, report = run_impl(tmp_path, peer("hang"), "--timeout", "1", select=SELECTION)
    assert result.returncode == 1
    assert_rest_pass(report, SELECTION, {BAD_CASE})
    bad = report_cases(report)[BAD_CASE]
    assert bad["outcome"] == "timeout" and "no reply within 1 s" in bad["message"]


def test_an_exit_mid_run_is_a_crash_with_its_stderr(tmp_path):
    result, report = run_impl(tmp_path, peer("exit_midrun"), select=SELECTION)
    assert result.returncode == 1
    assert_rest_pass(report, SELECTION, {BAD_CASE})
    bad = report_cases(report)[BAD_CASE]
    assert bad["outcome"] == "crash" and "exited with code 3" in bad["message"]
    assert "exit_midrun: giving up on request" in bad["stderr"]


@pytest.mark.parametrize(
    "name, env, words",
    [
        ("garbage", None, ["protocol error", "not a JSON line", "this is not json"]),
        ("wrong_seq", None, ["protocol error", "seq"]),
        ("huge", {"EMBCONF_MAX_LINE": str(2**20)}, ["reply too large", "1048576 bytes"]),
    ],
)
def test_an_unusable_reply_is_an_error(tmp_path, name, env, words):
    result, report = run_impl(tmp_path, peer(name), select=SELECTION, env=env)
    assert result.returncode == 1
    assert_rest_pass(report, SELECTION, {BAD_CASE})
    bad = report_cases(report)[BAD_CASE]
    assert bad["outcome"] == "error"
    assert all(word in bad["message"] for word in words), bad["message"]


def test_wrong_arrays_are_an_error_when_malformed_and_a_failure_when_misshapen(tmp_path):
    forward = "lookup.forward.module_example"
    result, report = run_impl(tmp_path, peer("wrong_shape"), select=SELECTION)
    assert result.returncode == 1
    assert_rest_pass(report, SELECTION, {BAD_CASE, forward})
    malformed, misshapen = report_cases(report)[forward], report_cases(report)[BAD_CASE]
    assert malformed["outcome"] == "error" and "malformed array in output 'output'" in malformed["message"]
    assert misshapen["outcome"] == "fail" and "shape" in misshapen["message"]


def test_a_chatty_stderr_never_blocks_and_its_tail_is_kept(tmp_path):
    result, report = run_impl(tmp_path, peer("chatty"), "--timeout", "20", select=SELECTION)
    assert_rest_pass(report, SELECTION, {BAD_CASE})
    bad = report_cases(report)[BAD_CASE]
    assert bad["outcome"] == "crash" and bad["stderr"].endswith("chatty: last words before the crash")
    assert len(bad["stderr"]) < 10_000  # a tail, not the megabytes


def test_restarts_are_bounded_and_the_report_is_complete(tmp_path):
    selection = SELECTION + ["lookup.backward.module_example_202"]
    result, report = run_impl(tmp_path, peer("crash_always"), select=selection)
    assert result.returncode == 1
    cases = report["cases"]
    assert sorted(c["id"] for c in cases) == sorted(selection) and {c["outcome"] for c in cases} == {"crash"}
    assert [("exited with code 1" in c["message"]) for c in cases] == [True] * 4 + [False] * 3
    assert all("restarted too often; giving up" in c["message"] for c in cases[4:])


def test_schema_violations_are_reported_only_under_validate_protocol(tmp_path):
    (tmp_path / "plain").mkdir()
    (tmp_path / "strict").mkdir()
    plain, _ = run_impl(tmp_path / "plain", peer("sloppy"), select=SELECTION)
    assert plain.returncode == 0
    strict, report = run_impl(tmp_path / "strict", peer("sloppy"), "--validate-protocol", select=SELECTION)
    assert strict.returncode == 1
    assert {c["outcome"] for c in report["cases"]} == {"error"}
    assert all("protocol violation" in c["message"] and "elapsed_ms" in c["message"] for c in report["cases"])


@pytest.mark.parametrize(
    "impl, words",
    [
        (peer("bad_handshake"), ["handshake", "exited with code 2", "cannot load libembedding.so"]),
        (peer("old_protocol"), ["handshake", "protocol 99", "protocol 1"]),
        ("subprocess:/nonexistent/embconf-impl --serve", ["cannot start", "/nonexistent/embconf-impl"]),
    ],
)
def test_an_implementation_that_cannot_start_stops_the_run_with_one_line(impl, words):
    result = run_cli("run", "--impl", impl, "--select", SELECTION[0], timeout=60)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert all(word in result.stderr for word in words), result.stderr


# --- the adapter in-process


def test_the_adapter_describes_the_implementation_and_stops_it_cleanly():
    from embconf.adapters import create_adapter

    adapter = create_adapter(f"subprocess:{SERVE}", timeout=3.5, validate_protocol=True)
    process = adapter._process
    assert adapter.timeout == 3.5 and adapter.validate_protocol
    assert adapter.describe() == {
        "name": "embconf reference",
        "version": adapter.describe()["version"],
        "language": "python",
    }
    adapter.close()
    assert process.popen.returncode == 0


def test_options_reach_only_the_adapters_that_declare_them():
    from embconf.adapters import create_adapter

    create_adapter("reference", timeout=1.0, validate_protocol=True).close()  # ReferenceAdapter takes neither


def test_the_stderr_tail_is_bounded():
    from embconf.processes.output import OutputTail as _StderrTail

    tail = _StderrTail(keep=1000)
    tail.append(b"early\n")
    mark = tail.total
    for n in range(500):
        tail.append(f"line {n}\n".encode())
    text = tail.since(mark, limit=100)
    assert text.endswith("line 499") and len(text) < 110 and "early" not in text
    assert tail.since(tail.total) == ""


# --- the schemas and the document


def schema(name: str) -> dict:
    return json.loads((SCHEMAS / f"protocol-{name}.schema.json").read_text())


def validator(name: str):
    from embconf.model.schemas import validator as compiled

    return compiled(f"protocol-{name}")


def test_the_schemas_use_the_vocabulary():
    from embconf.model.rope_conventions import convention_features
    from embconf.model.vocabulary import error_kinds, features, operations

    # profiles and rope conventions are declared by name, never as features
    plain = sorted(f for f in features() if not f.startswith("sinusoid-") and f not in convention_features())
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


# --- the exception reply (protocol minor 2): an untyped failure is an error, and the peer goes on


@pytest.mark.parametrize("validate", [False, True])
def test_an_exception_reply_is_an_error_and_the_peer_keeps_running(tmp_path, validate):
    started = tmp_path / "started"
    selection = SELECTION + ["lookup.backward.module_example_202"]
    args = ["--validate-protocol"] if validate else []
    result, report = run_impl(tmp_path, peer("raises", str(started)), *args, select=selection)
    assert result.returncode == 1
    bad = {BAD_CASE, "lookup.backward.module_example_202"}
    assert_rest_pass(report, selection, bad)
    for case in bad:
        raised = report_cases(report)[case]
        assert raised["outcome"] == "error", raised
        assert "raised ZeroDivisionError: division by zero (expected a result)" in raised["message"]
        assert "at scatter_add (embeddings.rs:42)" in raised["message"]
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


# --- rows the runner judges (protocol minor 4)

SINUSOIDS = ["sin.canonical.l32768_d64", "sin.canonical.l1000_d512", "sin.canonical.l512_d64", "sin.canonical.l1_d4"]
PINNED = 3  # the first three are judged on some rows; the last, of one row, whole


def test_a_peer_sends_only_the_rows_judged_and_a_failure_is_diagnosed_on_the_whole_output(tmp_path):
    """A minor-4 peer answers each sinusoid request with the rows its golden pins; a case that fails is asked
    for again in whole, so its outcome and diagnosis are those of the same mistake run in-process (the
    float16 computation is named from a fit of the whole table)."""
    log = tmp_path / "requests.jsonl"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _, in_process = run_impl(tmp_path / "a", "mutant:sin.float16", "--in-process", select=SINUSOIDS)
    result, over_wire = run_impl(tmp_path / "b", peer("pinned_rows", str(log)), select=SINUSOIDS)
    assert result.returncode == 1, result.stderr
    assert outcomes(over_wire) == outcomes(in_process)
    assert [outcomes(in_process)[case] for case in SINUSOIDS] == ["fail", "fail", "fail", "pass"]
    for case in SINUSOIDS[:PINNED]:
        diagnosis = report_cases(over_wire)[case]["diagnosis"]
        assert diagnosis == report_cases(in_process)[case]["diagnosis"] and diagnosis[0]["mutant"] == "sin.float16"
    requests = [json.loads(line) for line in log.read_text().splitlines()]
    assert sum(isinstance(rows, list) for rows in requests) == PINNED  # first for the rows judged
    assert requests.count("whole") == PINNED + 1  # the failing ones again, in whole, and the one-row table


def test_rows_no_request_asked_for_make_the_reply_malformed(tmp_path):
    result, report = run_impl(
        tmp_path, peer("pinned_rows", str(tmp_path / "log"), "unasked"), select=["pos.forward.batch1"]
    )
    case = report_cases(report)["pos.forward.batch1"]
    assert result.returncode == 1
    assert case["outcome"] == "error" and "malformed array in output 'output'" in case["message"]
    assert "it holds only some rows, but the whole output was asked for" in case["message"]  # as from the worker


def test_an_older_peer_is_never_asked_for_rows(tmp_path):
    """Only a peer that declares minor 4 gets 'rows': a minor-3 peer is asked for whole outputs, as before."""
    log = tmp_path / "requests.jsonl"
    result, report = run_impl(tmp_path, peer("pinned_rows", str(log), "minor3"), select=SINUSOIDS)
    assert result.returncode == 1 and set(outcomes(report)) == set(SINUSOIDS)
    assert log.read_text().splitlines() == ['"whole"'] * len(SINUSOIDS)


# --- the peer starts first (start-up)


def test_the_command_line_reaches_the_early_start_without_numpy():
    """`embconf run` starts a protocol peer before it imports NumPy: the peer's own start-up then runs beside
    the runner's. Parsing the command line and starting the peer import no NumPy."""
    code = (
        "import sys\n"
        "from embconf.cli import build_parser\n"
        "build_parser(['run']).parse_args(['run', '--impl', 'subprocess:true'])\n"
        "import embconf.adapters, embconf.protocol.early\n"
        "assert 'numpy' not in sys.modules, sorted(m for m in sys.modules if m.startswith('embconf'))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_a_peer_started_early_is_taken_over_once_and_only_for_its_command_line():
    from embconf.protocol.early import adopt, start_early

    argv = [sys.executable, "-c", "import sys; sys.stdin.read()"]
    start_early("reference")  # not a protocol implementation: nothing starts
    start_early("subprocess:'unbalanced")  # cannot be split: left to the adapter, which reports it
    assert adopt(["'unbalanced"]) is None
    start_early("subprocess:" + shlex.join(argv))
    assert adopt(argv + ["--other"]) is None
    process = adopt(argv)
    try:
        assert process is not None and process.poll() is None
        assert adopt(argv) is None  # taken over once
    finally:
        process.kill()
        process.wait()


def test_a_peer_started_early_for_a_run_that_stops_before_it_ends_with_the_run(tmp_path):
    """A run that refuses its fixtures after starting the peer exits 2 in one line and leaves no process."""
    marker = tmp_path / "alive"
    script = tmp_path / "peer.py"
    script.write_text("import sys, time, pathlib\npathlib.Path(sys.argv[1]).write_text('started')\ntime.sleep(60)\n")
    impl = f"subprocess:{PYTHON} {shlex.quote(str(script))} {shlex.quote(str(marker))}"
    result = run_cli("run", "--impl", impl, "--fixtures", str(tmp_path / "no-such-corpus"), timeout=60)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert marker.exists()  # it was started before the fixtures were read
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert str(script) not in ps


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


# --- the fixture's base64 arrays travel as they are


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
