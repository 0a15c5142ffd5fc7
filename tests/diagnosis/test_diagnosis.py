"""The diagnosis on real code: mutants ranked first, symptoms on a held-out student corpus, the run's verdict
in every report, precision-aware replay, and a diagnosis that never breaks a run."""

from __future__ import annotations

import io
import json
import logging
import xml.etree.ElementTree as ET

import jsonschema
import numpy as np
import pytest
from helpers import (
    IMPLS,
    ROOT,
    STUDENTS,
    assert_exit,
    assert_outcome,
    first_cause,
    read_report,
    run_cli,
    run_diagnosed,
    run_named,
    run_pytest,
    run_report,
)

from embconf.corpus.fixtures import Case
from embconf.diagnosis.run import diagnose_run
from embconf.model.outcomes import FAIL, CaseResult
from embconf.mutants import catalogue
from embconf.mutants.adapter import ImplementationAdapter
from embconf.mutants.compose import Implementation
from embconf.mutation.measure import FIRST_RANK_TARGET, judge_student, rank_catalogue
from embconf.reports.console import Console

CLAMPING = f"functions:{IMPLS / 'clamping_lookup.py'}"


@pytest.fixture(scope="module")
def cases(corpus) -> list[Case]:
    return corpus.cases


# One test per mutant, so that xdist spreads the catalogue; the rope mutants, which cover only the rope
# operations, are ranked on the same cases by test_rope_mutants.test_every_rope_mutant_is_killed_and_ranked_first.
NOT_ROPE = [m.id for m in catalogue() if m.area != "rope" and not m.evades]  # evading by design: tests/explore


@pytest.mark.parametrize("mutant", NOT_ROPE)
def test_the_right_mutant_is_ranked_first(cases, mutant):
    (ranking,) = rank_catalogue(cases, [mutant])
    assert ranking.failing  # every mutant fails something (the kill rate is test_mutants')
    assert ranking.rate >= FIRST_RANK_TARGET, f"ranked first on {ranking.first} of {ranking.failing} failing cases"


def test_students_get_a_correct_description_and_never_a_wrong_cause(cases):
    """The corpus's mistakes are in no catalogue: only the symptoms can describe them."""
    judged = [judge_student(path, cases) for path in sorted(STUDENTS.glob("[a-z]*.py"))]
    assert len(judged) >= 10
    for s in judged:
        print(f"{'ok' if s.correct else 'MISS'} {s.path}: {s.verdict[:150]}")
    assert [s.path for s in judged if s.wrong_cause] == []
    assert sum(s.correct for s in judged) >= 8


def _float32_flipped_sign(max_len: int, embed_dim: int, dtype: str = "float32") -> np.ndarray:
    """The flipped exponent computed in float32, as a student computes it."""
    pos = np.arange(max_len, dtype=np.float32)[:, None]
    freq = np.exp(np.arange(0, embed_dim, 2, dtype=np.float32) * np.float32(np.log(10000.0) / embed_dim))
    table = np.zeros((max_len, embed_dim), dtype=np.float32)
    table[:, 0::2], table[:, 1::2] = np.sin(pos * freq), np.cos(pos * freq[: embed_dim // 2])
    return table.astype(dtype)


def test_a_catalogued_mistake_computed_in_float32_is_recognised(cases):
    chosen = [
        c
        for c in cases
        if c.operation == "sinusoidal_table" and c.id.startswith("sin.canonical.") and "float64" not in c.id
    ]
    run = run_diagnosed(
        ImplementationAdapter(Implementation({"sinusoidal_table": _float32_flipped_sign}), "float32 flipped sign"),
        chosen,
    )
    failing = [r for r in run.results if r.outcome == FAIL]
    named = [r for r in failing if first_cause(r) == "sin.exponent_sign"]
    assert len(failing) >= 10 and len(named) >= 0.9 * len(failing), [
        (r.id, first_cause(r)) for r in failing if r not in named
    ]


def test_the_verdict_names_the_mistake_behind_the_failures(cases):
    verdict = run_named(CLAMPING, [c for c in cases if c.id.startswith("lookup.")]).verdict
    assert verdict.causes[0].id == "fwd.clamped" and len(verdict.causes[0].cases) >= 5
    assert verdict.summary.startswith(
        f"1 likely mistake explains {verdict.explained} of {verdict.failures} failures: clamps out-of-range ids"
    )


def test_the_verdict_in_the_console_json_and_junit(tmp_path):
    report, junit = tmp_path / "report.json", tmp_path / "junit.xml"
    done = run_cli(
        "run", "--impl", CLAMPING, "--select", "lookup.*", "--report-json", str(report), "--junit", str(junit)
    )
    assert_exit(done, 1)
    console = done.stdout
    assert console.index("Verdict: 1 likely mistake explains") < console.index("Failures (")
    data = read_report(report)
    jsonschema.validate(data, json.loads((ROOT / "spec/schemas/report.schema.json").read_text()))
    assert data["verdict"]["mistakes"][0]["id"] == "fwd.clamped" and data["verdict"]["summary"] in console
    prop = ET.parse(junit).getroot().find("properties/property[@name='embconf.verdict']")
    assert prop is not None and prop.get("value") == data["verdict"]["summary"]


def test_the_verdict_in_the_pytest_summary_and_junitxml(tmp_path):
    junit = tmp_path / "junit.xml"
    done = run_pytest(
        tmp_path, f"--embconf-impl={CLAMPING}", "--embconf-select=lookup.error.*", f"--junitxml={junit}", timeout=300
    )
    assert_exit(done, 1)
    assert "embconf verdict" in done.stdout and "likely mistake" in done.stdout and "fwd.clamped" in done.stdout
    prop = ET.parse(junit).getroot().find(".//properties/property[@name='embconf.verdict']")
    assert prop is not None and "fwd.clamped" in prop.get("value")


def test_symptoms_are_measured_for_errors_missing_values_and_dtypes(cases):
    """An untyped exception, a missing gradient and a float64 result each get a measured description."""
    by_id = {c.id: c for c in cases}
    run = judge_student(STUDENTS / "start_pos_unchecked.py", cases)
    assert "TypeError" in run.verdict and "start_pos_unchecked.py:" in run.verdict  # the implementation's own frame
    assert "no gradient" in judge_student(STUDENTS / "detached_positions.py", cases).verdict
    assert "float64 where float32" in judge_student(STUDENTS / "sin_float64.py", cases).verdict
    assert by_id  # the corpus is loaded


def test_messages_say_what_differs_once(cases):
    from embconf.adapters.tinytorch import TinyTorchAdapter

    chosen = [c for c in cases if c.id == "pos.backward.batch3"]
    result = run_diagnosed(TinyTorchAdapter(str(STUDENTS / "detached_positions.py")), chosen).results[0]
    assert_outcome(result, FAIL)
    assert "wrong missing" not in result.message
    assert result.message.count("is None") == 1


def test_diagnosis_never_raises_and_is_bounded(cases, caplog):
    case = next(c for c in cases if c.id == "lookup.forward.module_example")
    odd = CaseResult(case.id, case.requirements, case.features, case.operation, FAIL, "x", actual={"output": object()})
    nan = CaseResult(
        case.id,
        case.requirements,
        case.features,
        case.operation,
        FAIL,
        "x",
        actual={"output": np.full((3, 3), np.nan, np.float32)},
    )
    from embconf.adapters.reference import ReferenceAdapter
    from embconf.model.record import RunRecord

    run = RunRecord([odd, nan], ReferenceAdapter().capabilities(), {"name": "odd"})
    diagnose_run(run, [case])  # must not raise
    with caplog.at_level(logging.WARNING, logger="embconf.diagnosis"):
        diagnose_run(run, [case], budget_s=0.0)
    assert "time budget" in caplog.text


def test_a_correct_run_has_an_empty_verdict(cases):
    from embconf.adapters.reference import ReferenceAdapter

    run = run_diagnosed(ReferenceAdapter(), cases[:20])
    stream = io.StringIO()
    Console(stream, colour=False, quiet=True).report(run)
    assert run.verdict.summary == "no failures" and "Verdict" not in stream.getvalue()


def test_a_gradient_that_depends_on_an_option_says_which(cases):
    from embconf.adapters.tinytorch import TinyTorchAdapter

    chosen = [c for c in cases if c.operation == "embedding_layer_backward"]
    run = run_diagnosed(TinyTorchAdapter(str(IMPLS / "scale_cuts_graph.py")), chosen)
    summary = run.verdict.causes[0].title
    assert "the token table received no gradient" in summary and "it gets one when scale_embeddings is False" in summary


WIDE_AND_WRONG = '''
import numpy as np


def sinusoidal_table(max_len, embed_dim, dtype="float32"):
    """Two mistakes at once: float64 never cast back, and the exponent's sign flipped."""
    pos = np.arange(max_len, dtype=np.float64)[:, None]
    angle = pos * np.power(10000.0, np.arange(0, embed_dim, 2) / embed_dim)
    out = np.zeros((max_len, embed_dim))
    out[:, 0::2], out[:, 1::2] = np.sin(angle), np.cos(angle[:, : embed_dim // 2])
    return out
'''


def test_a_dtype_slip_and_wrong_values_are_both_named(tmp_path):
    """The dtype is judged apart from the values: the values are compared once cast, so a wide table with
    wrong frequencies is told both, never 'cast to float32, the values are right'."""
    module = tmp_path / "wide_and_wrong.py"
    module.write_text(WIDE_AND_WRONG)
    _, report = run_report(tmp_path, f"functions:{module}", "-q", select=["sin.canonical.*"])
    mistakes = report["verdict"]["mistakes"]
    titles = " | ".join(m["title"] for m in mistakes)
    assert any("float64 where float32" in m["title"] for m in mistakes), titles
    assert any("sign" in m["title"] or "exponent" in m["title"] or "frequenc" in m["title"] for m in mistakes), titles
    assert "the values are right" not in titles
