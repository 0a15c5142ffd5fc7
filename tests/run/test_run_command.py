"""The CLI as a user runs it: exit codes, reports, selection, expectations, list and show."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET

import pytest
from helpers import IMPLS, assert_clean_pass, assert_exit, cases_with, read_report, run_cli, undeclared_by_the_reference

from embconf.model.vocabulary import spec_version


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("reports")
    result = run_cli("run", "--impl", "reference", "--report-json", str(out / "r.json"), "--junit", str(out / "r.xml"))
    return result, read_report(out / "r.json"), ET.parse(out / "r.xml")


def test_reference_passes_every_case(reference_run, corpus):
    result, report, _ = reference_run
    assert_clean_pass(result, report)
    assert report["summary"]["pass"] + report["summary"]["not_applicable"] == len(corpus.cases)
    na = cases_with(report, "not_applicable")
    assert all(undeclared_by_the_reference(c) for c in na)
    assert "By requirement:" in result.stdout and "EMB-FWD-1" in result.stdout


def test_json_report_validates_against_its_schema(reference_run):
    from embconf.model.schemas import validator

    _, report, _ = reference_run
    errors = list(validator("report").iter_errors(report))
    assert errors == []
    assert report["fixtures"]["manifest_sha256"] and report["spec_version"] == spec_version()


def test_junit_parses_with_one_testcase_per_case(reference_run, corpus):
    _, _, tree = reference_run
    cases = tree.getroot().findall(".//testcase")
    assert len(cases) == len(corpus.cases)
    assert {c.get("name") for c in cases} == {case.id for case in corpus.cases}
    assert not tree.getroot().findall(".//failure")


def test_failing_implementation_exits_1_with_reproductions(tmp_path):
    result = run_cli(
        "run",
        "--impl",
        f"functions:{IMPLS / 'clamping_lookup.py'}",
        "--report-json",
        str(tmp_path / "r.json"),
        "--no-colour",
    )
    assert_exit(result, 1)
    assert "lookup.error.id_equals_vocab" in result.stdout
    assert "returned a result; expected error index_out_of_range" in result.stdout
    report = read_report(tmp_path / "r.json")
    outcomes = {c["id"]: c["outcome"] for c in report["cases"]}
    assert outcomes["lookup.forward.module_example"] == "pass"
    assert outcomes["lookup.error.negative_one"] == "fail"
    assert outcomes["sin.canonical.l16_d8"] == "not_applicable"


@pytest.mark.parametrize(
    "args, reason",
    [
        (["run", "--impl", ""], "expected KIND:TARGET"),
        (["run", "--impl", "nonsense:x"], "unknown implementation kind"),
        (["run", "--impl", "functions:"], "needs a target"),
        (["run", "--impl", "reference", "--select", "no.such.case"], "matches no case"),
        (["run", "--impl", "reference", "--expectations", "/nonexistent.yaml"], "does not exist"),
        (["show", "no.such.case"], "no case"),
        (["run", "--bogus-flag"], "unrecognized arguments"),
    ],
)
def test_bad_usage_exits_2_with_one_line(args, reason):
    result = run_cli(*args)
    assert_exit(result, 2)
    assert reason in result.stderr
    assert "Traceback" not in result.stderr


def test_default_impl_missing_says_how_to_name_one(tmp_path):
    result = run_cli("run", cwd=tmp_path, env={"PYTHONPATH": ""})
    assert_exit(result, 2)
    assert "--impl KIND:TARGET" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_expectations_xfail_xpass_and_stale_entries(tmp_path):
    expectations = tmp_path / "expect.yaml"
    expectations.write_text(
        "expectations:\n"
        "  - case: 'lookup.error.negative_*'\n    reason: clamps ids, tracked in #12\n"
        "  - case: lookup.forward.module_example\n    reason: believed broken\n"
        "  - case: no.such.case\n    reason: stale\n"
    )
    impl = f"functions:{IMPLS / 'clamping_lookup.py'}"
    result = run_cli(
        "run",
        "--impl",
        impl,
        "--select",
        "lookup.error.negative_*",
        "--select",
        "lookup.forward.module_example",
        "--expectations",
        str(expectations),
        "--report-json",
        str(tmp_path / "r.json"),
    )
    report = read_report(tmp_path / "r.json")
    outcomes = {c["id"]: c["outcome"] for c in report["cases"]}
    assert outcomes["lookup.error.negative_one"] == "xfail"
    assert outcomes["lookup.forward.module_example"] == "xpass"
    assert_exit(result, 0)
    assert "no.such.case" in result.stdout and report["unmatched_expectations"] == ["no.such.case (stale)"]
    strict = run_cli(
        "run",
        "--impl",
        impl,
        "--select",
        "lookup.forward.module_example",
        "--expectations",
        str(expectations),
        "--strict",
    )
    assert_exit(strict, 1)


def test_selection_by_requirement_and_feature(tmp_path):
    result = run_cli(
        "run",
        "--impl",
        "reference",
        "--requirement",
        "EMB-MEM-*",
        "--feature",
        "large_tables",
        "--report-json",
        str(tmp_path / "r.json"),
    )
    report = read_report(tmp_path / "r.json")
    assert result.returncode == 0 and report["cases"]
    assert all(
        "large_tables" in c["features"] and any(r.startswith("EMB-MEM-") for r in c["requirements"])
        for c in report["cases"]
    )


def test_list_and_show():
    listing = run_cli("list")
    assert listing.returncode == 0 and "lookup.forward.module_example" in listing.stdout
    assert run_cli("list", "requirements").stdout.count("EMB-") > 30
    assert "row_sparse_grad" in run_cli("list", "features").stdout
    show = run_cli("show", "lookup.backward.module_example_020")
    assert_exit(show, 0)
    assert "expected outputs:" in show.stdout and "grad_weight" in show.stdout and "[[2. 2.]" in show.stdout
    assert "expected error: index_out_of_range" in run_cli("show", "lookup.error.negative_one").stdout


def test_write_expectations_from_a_run_then_gate_on_them(tmp_path):
    impl = f"functions:{IMPLS / 'clamping_lookup.py'}"
    written = tmp_path / "expect.yaml"
    first = run_cli("run", "--impl", impl, "--select", "lookup.*", "--write-expectations", str(written))
    assert first.returncode == 1 and f"to {written}" in first.stdout
    import yaml

    entries = yaml.safe_load(written.read_text())["expectations"]
    assert {e["case"] for e in entries} >= {"lookup.error.negative_one", "lookup.error.id_equals_vocab"}
    reasons = {e["case"]: e["reason"] for e in entries}
    assert reasons["lookup.error.negative_one"].startswith("fail: returned a result; expected error index_out_of_range")
    assert "(likely fwd." in reasons["lookup.error.negative_one"]
    again = run_cli(
        "run",
        "--impl",
        impl,
        "--select",
        "lookup.*",
        "--expectations",
        str(written),
        "--strict",
        "--write-expectations",
        str(tmp_path / "again.yaml"),
    )
    assert_exit(again, 0)
    assert (tmp_path / "again.yaml").read_text().replace("again", "") == written.read_text().replace("again", "")
    stale = tmp_path / "stale.yaml"
    stale.write_text(written.read_text() + "- case: lookup.nothing.here\n  reason: fixed long ago\n")
    strict = run_cli("run", "--impl", impl, "--select", "lookup.*", "--expectations", str(stale), "--strict")
    assert strict.returncode == 1 and "match no case" in strict.stderr
    assert run_cli("run", "--impl", impl, "--select", "lookup.*", "--expectations", str(stale)).returncode == 0


def test_without_ml_dtypes_regenerate_is_one_line_and_validate_still_passes(monkeypatch, capsys):
    """A plain install has no ml_dtypes: regenerating cannot build bfloat16 goldens (exit 2, one line);
    validating the committed corpus reports no problem for the bfloat16 payloads it cannot decode."""
    from embconf import cli
    from embconf.model import dtypes

    monkeypatch.setitem(sys.modules, "ml_dtypes", None)  # as if not installed
    dtypes.have_bfloat16.cache_clear()
    monkeypatch.setattr(dtypes, "_bfloat16", lambda: (_ for _ in ()).throw(ImportError("no ml_dtypes")))
    try:
        assert not dtypes.have_bfloat16()
        _without_ml_dtypes(cli, capsys)
    finally:
        dtypes.have_bfloat16.cache_clear()


def _without_ml_dtypes(cli, capsys) -> None:
    assert cli.main(["regenerate", "--check"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "ml_dtypes" in err[0]
    assert cli.main(["validate"]) == 0
    out = capsys.readouterr().out
    assert "0 problems" in out and "bfloat16 values not decoded" in out
