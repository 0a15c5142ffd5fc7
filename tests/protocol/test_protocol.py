"""The wire protocol: the reference and the Node.js example over it, broken peers, and the adapter in-process.
The messages themselves are test_protocol_messages.py; rows, early start and reply limits have files of their own.

Every run goes through the CLI in a fresh process, as a user runs it, and its
JSON report must hold every selected case with an outcome.
"""

from __future__ import annotations

import shlex
import shutil

import pytest
from helpers import (
    PYTHON,
    ROOT,
    assert_clean_pass,
    assert_exit,
    assert_judged,
    assert_one_line_error,
    assert_only,
    assert_outcomes,
    cases_with,
    declined_for_a_later_addition,
    outcomes,
    peer,
    report_cases,
    run_cli,
    run_reported,
)

SERVE = f"{PYTHON} -m embconf.protocol.reference_peer"
NODE_EXAMPLE = f"node {shlex.quote(str(ROOT / 'examples' / 'javascript' / 'embconf_impl.js'))}"

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


APPLICABLE = ("pass", "not_applicable")  # what the cases a broken peer does not break get


# --- the reference and the Node.js example over the protocol


def test_reference_over_the_protocol_matches_in_process(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    in_process, expected = run_reported(tmp_path / "a", "reference")
    over_protocol, actual = run_reported(tmp_path / "b", f"subprocess:{SERVE}")
    assert_exit(in_process, 0)
    assert_exit(over_protocol, 0)
    assert outcomes(actual) == outcomes(expected)
    assert actual["implementation"]["name"] == "embconf reference" and actual["implementation"]["language"] == "python"
    assert actual["capabilities"] == expected["capabilities"]


def test_reference_messages_conform_to_the_schemas(tmp_path):
    result, report = run_reported(tmp_path, f"subprocess:{SERVE}", "--validate-protocol")
    assert_clean_pass(result, report)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_javascript_example_passes_every_applicable_case(tmp_path):
    result, report = run_reported(tmp_path, f"subprocess:{NODE_EXAMPLE}", "--validate-protocol")
    assert_exit(result, 0)
    assert_only(report, *APPLICABLE)
    assert all(declined_for_a_later_addition(c) for c in cases_with(report, "not_applicable"))
    assert report["implementation"]["language"] == "javascript"
    assert report["summary"]["pass"] >= 200


# --- broken peers: the affected case gets its outcome, the rest of the run goes on


def test_a_hang_times_out_and_the_rest_completes(tmp_path):
    result, report = run_reported(tmp_path, peer("hang"), "--timeout", "1", select=SELECTION)
    assert_judged(result, report, SELECTION, {BAD_CASE: ("timeout", "no reply within 1 s")}, rest=APPLICABLE)


def test_an_exit_mid_run_is_a_crash_with_its_stderr(tmp_path):
    result, report = run_reported(tmp_path, peer("exit_midrun"), select=SELECTION)
    assert_judged(result, report, SELECTION, {BAD_CASE: ("crash", "exited with code 3")}, rest=APPLICABLE)
    assert "exit_midrun: giving up on request" in report_cases(report)[BAD_CASE]["stderr"]


@pytest.mark.parametrize(
    "name, env, words",
    [
        ("garbage", None, ["protocol error", "not a JSON line", "this is not json"]),
        ("wrong_seq", None, ["protocol error", "seq"]),
        ("huge", {"EMBCONF_MAX_LINE": str(2**20)}, ["reply too large", "1048576 bytes"]),
    ],
)
def test_an_unusable_reply_is_an_error(tmp_path, name, env, words):
    result, report = run_reported(tmp_path, peer(name), select=SELECTION, env=env)
    assert_judged(result, report, SELECTION, {BAD_CASE: ("error", *words)}, rest=APPLICABLE)


def test_wrong_arrays_are_an_error_when_malformed_and_a_failure_when_misshapen(tmp_path):
    forward = "lookup.forward.module_example"
    result, report = run_reported(tmp_path, peer("wrong_shape"), select=SELECTION)
    expected = {forward: ("error", "malformed array in output 'output'"), BAD_CASE: ("fail", "shape")}
    assert_judged(result, report, SELECTION, expected, rest=APPLICABLE)


def test_a_chatty_stderr_never_blocks_and_its_tail_is_kept(tmp_path):
    result, report = run_reported(tmp_path, peer("chatty"), "--timeout", "20", select=SELECTION)
    assert_judged(result, report, SELECTION, {BAD_CASE: ("crash",)}, rest=APPLICABLE)
    bad = report_cases(report)[BAD_CASE]
    assert bad["stderr"].endswith("chatty: last words before the crash")
    assert len(bad["stderr"]) < 10_000  # a tail, not the megabytes


def test_restarts_are_bounded_and_the_report_is_complete(tmp_path):
    selection = SELECTION + ["lookup.backward.module_example_202"]
    result, report = run_reported(tmp_path, peer("crash_always"), select=selection)
    assert_exit(result, 1)
    assert_outcomes(report, dict.fromkeys(selection, "crash"))
    cases = report["cases"]
    assert [("exited with code 1" in c["message"]) for c in cases] == [True] * 4 + [False] * 3
    assert all("restarted too often; giving up" in c["message"] for c in cases[4:])


def test_schema_violations_are_reported_only_under_validate_protocol(tmp_path):
    (tmp_path / "plain").mkdir()
    (tmp_path / "strict").mkdir()
    plain, _ = run_reported(tmp_path / "plain", peer("sloppy"), select=SELECTION)
    assert_exit(plain, 0)
    strict, report = run_reported(tmp_path / "strict", peer("sloppy"), "--validate-protocol", select=SELECTION)
    assert_exit(strict, 1)
    assert_only(report, "error")
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
    assert_one_line_error(result, *words)


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
