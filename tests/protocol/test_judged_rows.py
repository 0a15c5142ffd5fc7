"""Rows the runner judges (protocol minor 4): a peer is asked for, and sends, only the rows judged; rows nobody
asked for make a reply malformed; an older peer is never asked for rows; a failure is diagnosed on the whole output."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import outcomes, peer, report_cases, run_report


def run_impl(tmp_path: Path, impl: str, *args: str, select: list[str] | None = None, env: dict | None = None):
    """``embconf run -q`` on ``impl`` (``select`` only, if given): the process result and its JSON report."""
    result, report = run_report(tmp_path, impl, "-q", *args, select=select or (), env=env, timeout=120)
    assert report is not None, f"no report (exit {result.returncode}): {result.stderr[-2000:]}"
    return result, report


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
