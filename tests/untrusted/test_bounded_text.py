"""Texts an implementation sends are bounded and safe: a huge message is cut saying so, a lone surrogate
reaches every report safely, a large output is kept as a bounded sample that still diagnoses."""

from __future__ import annotations

from xml.etree import ElementTree as ET

import numpy as np
import pytest
from helpers import HOSTILE, assert_exit, assert_outcome, read_report, report_cases, run_selected, validated

ONE_CASE = "lookup.forward.module_example"


FORWARD_CASES = ("lookup.forward.module_example", "lookup.forward.ids_0d")


def test_a_5_mb_message_is_cut_saying_so_and_the_report_stays_small(tmp_path):
    report, junit = tmp_path / "r.json", tmp_path / "j.xml"
    result = run_selected(
        "--report-json",
        str(report),
        "--junit",
        str(junit),
        "-q",
        impl=f"functions:{HOSTILE / 'huge_message'}.py",
        select=FORWARD_CASES,
    )
    assert_exit(result, 1)
    cases = report_cases(validated(read_report(report)))
    for case_id in FORWARD_CASES:
        assert_outcome(cases[case_id], "error", "ValueError: \\udcff surrogate, then xxx", "... [5.0 MB cut]")
        assert len(cases[case_id]["message"]) < 30_000
    assert report.stat().st_size < 200_000 and junit.stat().st_size < 200_000
    assert len(result.stdout) < 100_000


@pytest.mark.parametrize(
    "env",
    [
        {"PYTHONIOENCODING": "ascii:strict"},
        {"LANG": "C", "LC_ALL": "C", "PYTHONIOENCODING": ""},
        {"PYTHONIOENCODING": "utf-8:strict"},
    ],
    ids=["ascii", "C", "utf8-strict"],
)
def test_a_lone_surrogate_reaches_console_json_and_junit_safely(tmp_path, env):
    report, junit = tmp_path / "r.json", tmp_path / "j.xml"
    result = run_selected(
        "--report-json",
        str(report),
        "--junit",
        str(junit),
        env=env,
        impl=f"functions:{HOSTILE / 'surrogate'}.py",
        select=FORWARD_CASES,
    )
    assert_exit(result, 1)
    assert "bad byte \\udcff in caf" in result.stdout and "2 error" in result.stdout
    cases = validated(read_report(report))["cases"]
    assert all("bad byte \\udcff in café" in c["message"] for c in cases)
    text = ET.parse(junit).getroot().find(".//error").text
    assert "bad byte \\udcff in café" in text


def test_bound_text_keeps_head_or_tail_and_says_what_was_cut():
    from embconf.untrusted.text import MAX_TEXT, bound_text

    text = "a" * MAX_TEXT + "b" * (3 << 20)
    assert bound_text(text) == "a" * MAX_TEXT + "... [3.0 MB cut]"
    assert bound_text(text, keep="tail") == "[3.0 MB cut] ..." + "b" * MAX_TEXT
    assert bound_text("short \udc80") == "short \\udc80"
    assert bound_text("x" * 2000, 1000).endswith("... [1000 bytes cut]")


def test_an_implementations_description_is_bounded():
    from embconf.untrusted.text import MAX_NAME, bounded_description

    described = bounded_description({"name": "n" * 10**6, "version": "\udcff1", "language": None})
    assert (
        len(described["name"]) < MAX_NAME + 30 and described["version"] == "\\udcff1" and described["language"] is None
    )


def test_a_large_output_is_kept_as_a_bounded_sample_with_its_mismatching_row():
    from embconf.judging.compare import compare_value
    from embconf.judging.kept import SAMPLE_BYTES, RowSample, compare_kept, kept_outputs

    want = np.arange(1 << 22, dtype=np.float32).reshape(1 << 16, 64)  # 16 MiB
    got = want.copy()
    got[40_000, 3] = -1.0
    mismatch = compare_value("table", want, got, {"kind": "exact"})
    kept = kept_outputs({"table": got, "small": np.ones(3), "n": 3}, [mismatch])
    sample = kept["table"]
    assert isinstance(sample, RowSample) and sample.values.nbytes <= SAMPLE_BYTES and 40_000 in sample.rows
    assert kept["n"] == 3 and isinstance(kept["small"], np.ndarray)
    assert mismatch.extra["actual_row"].base is None  # a copy: the 16 MiB output is not kept alive
    assert compare_kept({"table": got, "small": np.ones(3), "n": 3}, kept, {}) == []
    assert compare_kept({"table": want, "small": np.ones(3), "n": 3}, kept, {})[0].index == (40_000, 3)
    changed = got.copy()
    changed[1, 1] += 1  # not a sampled row, but --repeat still sees it: the sample carries the whole array's digest
    assert repr(kept_outputs({"table": changed})["table"]) != repr(sample)


def test_diagnosis_still_names_the_mistake_on_a_sampled_output(cases_by_id):
    """sin.canonical.l32768_d64 returns an 8 MiB table: one of the expected size is kept whole (a run keeps
    at most its goldens' sizes), so the swapped sin/cos is named; kept as a sample, it is still named."""
    from embconf.diagnosis.replay import diagnose
    from embconf.judging.cases import judge
    from embconf.judging.kept import RowSample, kept_outputs
    from embconf.model.contract import Capabilities, Reply, Status
    from embconf.reference import sinusoidal_table

    case = cases_by_id["sin.canonical.l32768_d64"]
    table = sinusoidal_table(**case.inputs())
    swapped = table.copy()
    swapped[:, 0::2], swapped[:, 1::2] = table[:, 1::2], table[:, 0::2]
    result = judge(case, Reply(Status.OUTPUTS, {"table": swapped}), Capabilities(frozenset({"sinusoidal_table"})))
    assert result.outcome == "fail" and isinstance(result.actual["table"], np.ndarray)
    assert "sin" in diagnose(case, result)[0].key
    result.actual = kept_outputs({"table": swapped}, result.mismatches)  # without the case's allowance: sampled
    assert isinstance(result.actual["table"], RowSample) and result.actual["table"].values.nbytes <= 1 << 20
    assert "sin" in diagnose(case, result)[0].key
