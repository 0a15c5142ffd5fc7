"""Rows the runner judges (protocol minor 4): a peer is asked for, and sends, only the rows judged; rows nobody
asked for make a reply malformed; an older peer is never asked for rows; a failure is diagnosed on the whole output."""

from __future__ import annotations

import json

from helpers import assert_exit, assert_outcome, assert_outcomes, outcomes, peer, report_cases, run_reported

SINUSOIDS = ["sin.canonical.l32768_d64", "sin.canonical.l1000_d512", "sin.canonical.l512_d64", "sin.canonical.l1_d4"]


PINNED = 3  # the first three are judged on some rows; the last, of one row, whole


def test_a_peer_sends_only_the_rows_judged_and_a_failure_is_diagnosed_on_the_whole_output(tmp_path):
    """A minor-4 peer answers each sinusoid request with the rows its golden pins; a case that fails is asked
    for again in whole, so its outcome and diagnosis are those of the same mistake run in-process (the
    float16 computation is named from a fit of the whole table)."""
    log = tmp_path / "requests.jsonl"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _, in_process = run_reported(tmp_path / "a", "mutant:sin.float16", "--in-process", select=SINUSOIDS)
    result, over_wire = run_reported(tmp_path / "b", peer("pinned_rows", str(log)), select=SINUSOIDS)
    assert_exit(result, 1)
    assert outcomes(over_wire) == outcomes(in_process)
    assert_outcomes(in_process, dict(zip(SINUSOIDS, ["fail", "fail", "fail", "pass"])))
    for case in SINUSOIDS[:PINNED]:
        diagnosis = report_cases(over_wire)[case]["diagnosis"]
        assert diagnosis == report_cases(in_process)[case]["diagnosis"] and diagnosis[0]["mutant"] == "sin.float16"
    requests = [json.loads(line) for line in log.read_text().splitlines()]
    assert sum(isinstance(rows, list) for rows in requests) == PINNED  # first for the rows judged
    assert requests.count("whole") == PINNED + 1  # the failing ones again, in whole, and the one-row table


def test_rows_no_request_asked_for_make_the_reply_malformed(tmp_path):
    result, report = run_reported(
        tmp_path, peer("pinned_rows", str(tmp_path / "log"), "unasked"), select=["pos.forward.batch1"]
    )
    assert_exit(result, 1)
    words = ("malformed array in output 'output'", "it holds only some rows, but the whole output was asked for")
    assert_outcome(report_cases(report)["pos.forward.batch1"], "error", *words)  # as from the worker


def test_an_older_peer_is_never_asked_for_rows(tmp_path):
    """Only a peer that declares minor 4 gets 'rows': a minor-3 peer is asked for whole outputs, as before."""
    log = tmp_path / "requests.jsonl"
    result, report = run_reported(tmp_path, peer("pinned_rows", str(log), "minor3"), select=SINUSOIDS)
    assert_exit(result, 1)
    assert set(outcomes(report)) == set(SINUSOIDS)
    assert log.read_text().splitlines() == ['"whole"'] * len(SINUSOIDS)
