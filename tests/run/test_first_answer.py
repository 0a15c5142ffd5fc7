"""An outcome comes from the implementation's first answer (spec/PROTOCOL.md section 3, "Rows the runner
judges"): a failure judged on pinned rows is asked for again whole for its diagnosis, and a second answer
that is not the same answer leaves the first standing, noted as nondeterministic; it never turns a fail
into a pass or a not_applicable (issue 34)."""

from __future__ import annotations

import pytest
from helpers import IMPLS, assert_exit, assert_only, outcomes, peer, report_cases, run_report

from embconf.corpus.fixtures import load_corpus

PINNED = ["sin.canonical.l512_d64", "sin.canonical.l2048_d32", "sin.canonical.l32768_d16"]


@pytest.mark.parametrize("mode", ["rows_wrong", "skip_second", "long_rows", "long_whole"])
def test_a_second_answer_over_the_protocol_never_replaces_the_first(tmp_path, mode):
    result, report = run_report(tmp_path, peer("second_answer", mode), "-q", select=PINNED)
    assert_exit(result, 1)
    assert set(outcomes(report).values()) == {"fail"}
    for case in report_cases(report).values():
        assert "between the answer judged and the whole output asked again" in case["message"], case["message"]
    first = report_cases(report)["sin.canonical.l512_d64"]["message"]
    if mode == "long_rows":  # the first answer's own mismatch: the shape it gave
        assert "has shape [519, 64], expected [512, 64]" in first
    else:  # the rows it sent first, not the whole table's shape
        assert "'table' differs at index" in first


def test_the_same_answer_again_whole_is_diagnosed_whole(tmp_path):
    """A deterministic wrong peer: the whole output replaces the rows (the same answer), and no note is added."""
    log = tmp_path / "log"
    result, report = run_report(tmp_path, peer("pinned_rows", str(log)), "-q", select=PINNED)
    assert_exit(result, 1)
    assert_only(report, "fail")
    assert not any("nondeterministic" in case["message"] for case in report["cases"])


def test_a_python_implementation_wrong_on_its_first_call_fails_every_case(tmp_path):
    """In a worker, pinned rows travel back as rows: the table right the second time must not pass the case."""
    result, report = run_report(tmp_path, f"functions:{IMPLS / 'wrong_first_table.py'}", "-q", select=["sin.*"])
    assert_exit(result, 1)
    judged = {id_: o for id_, o in outcomes(report).items() if o != "not_applicable"}
    assert judged and set(judged.values()) == {"fail"}, judged
    pinned = {case.id for case in load_corpus().cases if case.pinned_rows} & set(judged)
    noted = {c["id"] for c in report["cases"] if "whole output asked again" in c["message"]}
    assert pinned and noted == pinned


def test_in_process_the_first_call_is_judged_whole(tmp_path):
    """The same module in-process: no rows, no second call; every case fails on its first answer."""
    result, report = run_report(
        tmp_path, f"functions:{IMPLS / 'wrong_first_table.py'}", "-q", "--in-process", select=["sin.*"]
    )
    assert_exit(result, 1)
    judged = {id_: o for id_, o in outcomes(report).items() if o != "not_applicable"}
    assert judged and set(judged.values()) == {"fail"}
