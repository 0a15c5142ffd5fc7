"""Untrusted code and input, round three (issue 21): behaviours a trusted tool gets right that the runner
once did not. Each test reproduces one original misbehaviour through the command line, as a user meets it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from helpers import HOSTILE, ROOT, peer, read_report, report_cases, run_report

FORWARD = "lookup.forward.module_example"


def run_closed(tmp_path: Path, closed: str, *args: str) -> tuple[subprocess.CompletedProcess, Path]:
    """``embconf run ARGS --report-json FILE`` with the standard streams in ``closed`` (e.g. ``>&-``) closed
    by the shell before the runner starts; stderr is captured unless it is closed too."""
    report = tmp_path / "closed.json"
    command = [sys.executable, "-m", "embconf", "run", "--no-colour", "--report-json", str(report), *args]
    script = f'exec "$@" {closed}'
    result = subprocess.run(["sh", "-c", script, "sh", *command], cwd=ROOT, capture_output=True, text=True, timeout=120)
    return result, report


def test_a_closed_stdout_loses_no_report_and_prints_no_traceback(tmp_path):
    result, report = run_closed(tmp_path, ">&-", "--impl", "reference", "--select", FORWARD)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert [case["outcome"] for case in read_report(report)["cases"]] == ["pass"]


def test_closed_stdout_and_stderr_still_judge_in_a_worker(tmp_path):
    """The worker, forked from a runner with no stdout, still captures what the implementation prints."""
    impl = f"functions:{HOSTILE / 'segfault.py'}"
    result, report = run_closed(tmp_path, ">&- 2>&-", "--impl", impl, "--select", FORWARD)
    assert result.returncode == 1
    case = read_report(report)["cases"][0]
    assert case["outcome"] == "crash" and "killed by SIGSEGV" in case["message"]
    assert "embedding_forward" in case["stderr"]


def hostile(tmp_path: Path, module: str, *args: str, select: tuple[str, ...] = (FORWARD,)):
    """``embconf run -q`` on tests/hostile/MODULE.py: (process result, report cases by id)."""
    result, report = run_report(
        tmp_path, f"functions:{HOSTILE / module}.py", "-q", *args, select=select, timeout=120, name=f"{module}.json"
    )
    return result, report_cases(report)


def one_line_exit_2(result: subprocess.CompletedProcess, *words: str) -> None:
    """Exit 2, one line on stderr naming ``words``, no traceback."""
    assert result.returncode == 2, result.stdout[-2000:] + result.stderr[-2000:]
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr[-2000:]
    for word in words:
        assert word in result.stderr, result.stderr


def test_a_load_failure_is_the_same_one_line_in_process_and_in_a_worker(tmp_path):
    worker, _ = hostile(tmp_path, "base_exception_at_import")
    in_process, _ = hostile(tmp_path, "base_exception_at_import", "--in-process")
    one_line_exit_2(worker, "cannot load", "Refusal: this module will not load")
    one_line_exit_2(in_process)
    assert in_process.stderr == worker.stderr


def test_contradictory_features_are_refused_in_one_line(tmp_path):
    words = ("sinusoid_stored and sinusoid_computed", "exclude each other")
    for args in ((), ("--in-process",)):
        result, cases = hostile(tmp_path, "contradictory_features", *args)
        one_line_exit_2(result, *words)
        assert cases == {}
    result, _ = run_report(tmp_path, peer("contradictory_features"), "-q", select=(FORWARD,))
    one_line_exit_2(result, *words)


def test_a_recursion_limit_exhausted_at_import_is_refused_in_one_line(tmp_path):
    for args in ((), ("--in-process",)):
        result, cases = hostile(tmp_path, "recursion_limit", *args)
        one_line_exit_2(result, "cannot load", "lowered Python's recursion limit from", "to 40 while loading")


def test_a_recursion_limit_lowered_by_a_call_is_that_case_s_error_and_the_rest_pass(tmp_path):
    select = (FORWARD, "lookup.backward.module_example_020", "sin.canonical.l16_d8")
    result, cases = hostile(tmp_path, "recursion_limit_in_call", select=select)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert {case_id: case["outcome"] for case_id, case in cases.items()} == {
        FORWARD: "error",
        "lookup.backward.module_example_020": "pass",
        "sin.canonical.l16_d8": "pass",
    }
    assert "changed Python's recursion limit (sys.setrecursionlimit) from" in cases[FORWARD]["message"]


def test_correct_values_in_big_endian_byte_order_pass(tmp_path):
    select = (FORWARD, "lookup.backward.module_example_020", "sin.canonical.l16_d8", "lookup.forward.special_values")
    result, cases = hostile(tmp_path, "big_endian", select=select)
    assert result.returncode == 0, result.stdout[-3000:]
    assert {case["outcome"] for case in cases.values()} == {"pass"}


def test_a_wrong_dtype_in_another_byte_order_is_named_exactly():
    from embconf.judging.compare import compare_value

    want = np.zeros((2, 3), np.float32)
    mismatch = compare_value("output", want, np.zeros((2, 3), ">f8"), {"kind": "exact"})
    assert mismatch is not None and mismatch.kind == "dtype"
    assert mismatch.summary == "'output' has dtype float64, big-endian, expected float32"
    assert compare_value("output", want, want.astype(">f4"), {"kind": "exact"}) is None
    assert compare_value("output", want, np.ones((2, 3), ">f4"), {"kind": "exact"}).kind == "value"


def test_a_tinytorch_module_that_zeroes_the_token_tensor_it_was_given_fails(tmp_path):
    select = (FORWARD, "lookup.forward.ids_0d", "lookup.backward.module_example_020", "pos.forward.batch1")
    result, report = run_report(
        tmp_path, f"tinytorch:{HOSTILE / 'tinytorch_zeroes_ids.py'}", "-q", select=select, timeout=120
    )
    cases = report_cases(report)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert {case_id: case["outcome"] for case_id, case in cases.items()} == {
        FORWARD: "fail",
        "lookup.forward.ids_0d": "fail",
        "lookup.backward.module_example_020": "fail",
        "pos.forward.batch1": "pass",
    }
    assert "modified its input 'ids' (the Tensor it was given: 2 of 3 elements changed)" in cases[FORWARD]["message"]


def test_a_peer_that_dies_while_its_child_holds_its_stdout_is_a_crash_not_a_timeout(tmp_path):
    select = (FORWARD, "lookup.backward.module_example_020", "sin.canonical.l16_d8")
    result, report = run_report(tmp_path, peer("fork_holds_stdout"), "-q", "--timeout", "30", select=select)
    cases = report_cases(report)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    bad = cases.pop("lookup.backward.module_example_020")
    assert bad["outcome"] == "crash", bad["message"]
    assert "exited with code 3; a process it started still held its stdout open" in bad["message"]
    assert "fork_holds_stdout: dying on request" in bad["stderr"]
    assert {case["outcome"] for case in cases.values()} == {"pass"}


def test_checks_switched_off_inside_the_worker_still_judge_from_the_runner(tmp_path):
    """The implementation patches the input guard and the global-state check in its worker; the runner
    compares the shared input memory itself and reads the worker's working directory from the kernel."""
    select = (FORWARD, "lookup.forward.ids_0d", "lookup.backward.module_example_020", "sin.canonical.l16_d8")
    result, cases = hostile(tmp_path, "patch_guard", select=select)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert cases[FORWARD]["outcome"] == "fail"
    assert "modified its input 'ids' (2 of 3 elements changed)" in cases[FORWARD]["message"]
    assert cases["lookup.forward.ids_0d"]["outcome"] == "pass"  # 0-D ids are not sorted
    if Path("/proc/self/cwd").exists():
        moved = [case for case in cases.values() if "working directory changed from" in case["message"]]
        assert [case["outcome"] for case in moved] == ["error"] and "seen by the runner" in moved[0]["message"]


def test_a_golden_edited_with_its_manifest_hash_is_flagged_but_still_runs(tmp_path):
    """A deliberate local corpus runs; that it is not the shipped one is a warning and a report flag."""
    import hashlib
    import shutil

    corpus = tmp_path / "fixtures"
    shutil.copytree(ROOT / "fixtures", corpus)
    golden = corpus / "token_lookup.yaml"
    text = golden.read_text()
    right = "0.36081997, 1.3503977, 1.0946784, -0.6954686]"  # the module example's last golden row
    golden.write_text(text.replace(right, "0.36081997, 1.3503977, 1.0946784, 0.5]", 1))
    assert golden.read_text() != text
    manifest = json.loads((corpus / "MANIFEST.json").read_text())
    manifest["files"]["token_lookup.yaml"]["sha256"] = hashlib.sha256(golden.read_bytes()).hexdigest()
    (corpus / "MANIFEST.json").write_text(json.dumps(manifest, indent=2))
    result, report = run_report(tmp_path, "reference", "--fixtures", str(corpus), select=(FORWARD,))
    assert result.returncode == 1  # the reference disagrees with the edited golden
    assert (
        "warning: the fixture files token_lookup.yaml differ from the ones this embconf shipped with" in result.stdout
    )
    assert report["fixtures"]["differs_from_shipped"] == ["token_lookup.yaml"] and report["fixtures"]["modified"] == []
    shipped, shipped_report = run_report(tmp_path, "reference", select=(FORWARD,))
    assert shipped.returncode == 0 and "shipped with" not in shipped.stdout
    assert shipped_report["fixtures"]["differs_from_shipped"] == []


def test_the_shipped_hashes_are_the_manifest_s():
    """After a deliberate `embconf regenerate`, run scripts/record_shipped_hashes.py."""
    from embconf.corpus.shipped import SHIPPED_SHA256

    files = json.loads((ROOT / "fixtures" / "MANIFEST.json").read_text())["files"]
    assert SHIPPED_SHA256 == {name: entry["sha256"] for name, entry in files.items()}


def test_a_long_line_of_json_numbers_is_refused_before_it_is_parsed(tmp_path):
    """Read as Python objects it would cost many times its size (benchmarks/bench_reply_memory.py measures it)."""
    select = (FORWARD, "lookup.backward.module_example_020")
    result, report = run_report(tmp_path, peer("huge_line", "numbers", "10"), "-q", select=select)
    cases = report_cases(report)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    bad = cases["lookup.backward.module_example_020"]
    assert bad["outcome"] == "error" and "\n" not in bad["message"].split("\ninputs:")[0]
    assert (
        "reply refused: a line of 10485799 bytes holding about 5242885 JSON values (at most 4194304" in bad["message"]
    )
    assert cases[FORWARD]["outcome"] == "pass"
