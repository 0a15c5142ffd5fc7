"""The run record reads back (issue 33, item 2): every report the suite writes round-trips through
``RunRecord.from_json``; ``embconf report FILE`` renders a saved record as the run's console and JUnit did;
``embconf matrix --merge`` reads the same files; a run ended halfway leaves a report that says so."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest
from helpers import (
    HOSTILE,
    IMPLS,
    ROOT,
    STUDENTS,
    assert_exit,
    embconf_argv,
    peer,
    read_report,
    run_cli,
    selecting,
)
from mlx_family import MLX_COS_FIRST_FULL_TURNS, MLX_OPTIONS

from embconf.model.record import RunRecord

EXPECTATIONS = """expectations:
  - case: lookup.backward.module_example_020
    reason: known
  - case: lookup.forward.ids_2d
    reason: listed but passes
  - case: no.such.case
    reason: matches nothing
"""


def corpus_of_reports(tmp_path):
    """{name: (the run's command line, its console output, the report path, the JUnit path)} of runs that between
    them write every part of a report: passes, failures with a verdict, xfail/xpass and unmatched expectations,
    declined cases, crashes with stderr, a declared sinusoid point's computed cases, --repeat notes and a
    second answer that differed."""
    (tmp_path / "expected.yaml").write_text(EXPECTATIONS)
    (tmp_path / "family.py").write_text(MLX_COS_FIRST_FULL_TURNS.format(parameters=MLX_OPTIONS))
    runs = {
        "reference": ("reference", "lookup.*"),
        "mutant": ("mutant:bwd.overwrite", "lookup.*", "--expectations", str(tmp_path / "expected.yaml")),
        "crash": (f"functions:{HOSTILE / 'segfault.py'}", "lookup.forward.*"),
        "declines": (f"tinytorch:{IMPLS / 'tinytorch_older_api.py'}", "pos.*"),
        "family": (f"functions:{tmp_path / 'family.py'}", "sin.*"),
        "repeat": (f"functions:{HOSTILE / 'nondeterministic.py'}", "sin.canonical.l16*", "--repeat", "2"),
        "second": (peer("second_answer", "rows_wrong"), "sin.canonical.l512_d64"),
        "symptom": (f"tinytorch:{STUDENTS / 'base_1000.py'}", "sin.*"),
    }
    found = {}
    for name, (impl, glob, *more) in runs.items():
        report, junit = tmp_path / f"{name}.jsonl", tmp_path / f"{name}.xml"
        args = ["run", "--impl", impl, "-q", "--no-colour", *selecting([glob]), *more]
        done = run_cli(*args, "--report-json", str(report), "--junit", str(junit))
        assert report.exists(), (name, done.stderr[-2000:])
        found[name] = (args, done, report, junit)
    return found


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    return corpus_of_reports(tmp_path_factory.mktemp("reports"))


def test_every_report_round_trips_through_the_record(reports):
    from embconf.model.schemas import validator

    for name, (_, _, path, _) in reports.items():
        document = read_report(path)
        assert not list(validator("report").iter_errors(document)), name
        record = RunRecord.from_json(document)
        assert record.to_json() == document, name
        assert record.complete and len(record.results) == document["planned"], name
    shown = {name: read_report(path) for name, (_, _, path, _) in reports.items()}
    assert shown["mutant"]["summary"]["xfail"] == 1 and shown["mutant"]["summary"]["xpass"] == 1
    assert shown["mutant"]["unmatched_expectations"] and shown["mutant"]["verdict"]["mistakes"]
    assert shown["crash"]["summary"]["crash"] and shown["declines"]["declined"]
    assert shown["repeat"]["nondeterministic"] and shown["second"]["nondeterministic"]


def test_embconf_report_renders_the_console_and_junit_of_the_run(reports, tmp_path):
    for name, (_, done, path, junit) in reports.items():
        again = tmp_path / f"{name}.xml"
        shown = run_cli("report", str(path), "--no-colour", "--junit", str(again))
        assert shown.stdout == done.stdout, name
        assert shown.returncode == done.returncode, name
        assert again.read_text() == junit.read_text(), name


def test_embconf_report_writes_the_matrix_renderings(reports, tmp_path):
    _, _, path, _ = reports["mutant"]
    done = run_cli("report", str(path), "--markdown", str(tmp_path / "m.md"), "--html", str(tmp_path / "m.html"))
    assert_exit(done, 1)
    assert "does not conform" in (tmp_path / "m.md").read_text() and "<table" in (tmp_path / "m.html").read_text()


def test_matrix_merge_reads_run_reports_as_the_matrix_would_run_them(reports, tmp_path):
    """A run report merged is the column `embconf matrix --impl` gives for the same run, cell for cell."""
    args, _, path, _ = reports["symptom"]
    impl, glob = args[2], args[args.index("--select") + 1]
    ran = run_cli("matrix", "--impl", impl, "--select", glob, "--json", str(tmp_path / "ran.json"))
    merged = run_cli(
        "matrix", "--merge", str(path), "--merge", str(reports["family"][2]), "--json", str(tmp_path / "m.json")
    )
    assert ran.returncode == 0 and merged.returncode == 0, merged.stderr
    measured, read_back = (json.loads((tmp_path / name).read_text()) for name in ("ran.json", "m.json"))
    assert read_back["implementations"][0] == measured["implementations"][0]
    cells = {r["id"]: r["cells"][impl] for section in read_back["sections"] for r in section["requirements"]}
    assert cells == {r["id"]: r["cells"][impl] for section in measured["sections"] for r in section["requirements"]}


def test_a_run_ended_halfway_leaves_a_report_that_says_so(tmp_path):
    report = tmp_path / "r.jsonl"
    command = embconf_argv("run", "--impl", f"functions:{HOSTILE / 'slow.py'}", "-q")
    child = subprocess.Popen(
        [*command, "--select", "lookup.forward.*", "--report-json", str(report)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not report.exists() or report.read_text().count("\n") < 4):
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGTERM)
    assert child.wait(30) == 143
    document = read_report(report)
    assert document["complete"] is False and 3 <= len(document["cases"]) < document["planned"]
    assert document["verdict"]["summary"].startswith(f"incomplete: the run stopped after {len(document['cases'])} of")
    shown = run_cli("report", str(report), "--no-colour")
    assert shown.returncode == 1 and "INCOMPLETE: the run stopped after" in shown.stdout
    refused = run_cli("matrix", "--merge", str(report), "--json", str(tmp_path / "m.json"))
    assert refused.returncode == 2 and "a run that did not finish" in refused.stderr


def test_a_file_that_is_not_a_report_is_one_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"record": "case", "id": "x"}\n')
    done = run_cli("report", str(bad))
    assert (
        done.returncode == 2
        and len(done.stderr.strip().splitlines()) == 1
        and "not an embconf run report" in done.stderr
    )
    missing = run_cli("report", str(tmp_path / "none.jsonl"))
    assert missing.returncode == 2 and "no such file" in missing.stderr
