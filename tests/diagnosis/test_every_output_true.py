"""Every place a verdict is printed says only what is true of the cases it says it of: the student's feedback
(Markdown and HTML), Gradescope's results.json, the gradebook, the class report, ``embconf.check``'s text and HTML
and a matrix column. tests/diagnosis/test_realcode.py audits each of them for every corpus module
(tests/realcode/_outputs.py); here the audit is shown able to fail for each output, a title is shown said of a
share of its cases with that share's own numbers, and the TinyTorch corpus is graded as a course grades it."""

from __future__ import annotations

import copy
import functools
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT, assert_exit, run_reported

from embconf.mutants import registry

CORPUS = ROOT / "tests" / "realcode"
sys.path.insert(0, str(CORPUS))
from _outputs import every_output, grading_claims, unprinted  # noqa: E402
from _truth import audit, judge, read_truth  # noqa: E402

IDENTITY = {key: m.mistake or key for key, m in registry().items()}
OUTPUTS = ("feedback", "gradescope", "gradebook", "report", "check text", "check html", "matrix")
WRONG = "checks id > vocab_size instead of id >= vocab_size"  # dlfs2_embedding has no range check at all


@functools.lru_cache(maxsize=2)
def _rubric(path: Path | None = None) -> Any:
    from embconf.corpus.fixtures import load_corpus
    from embconf.grading.rubric import load
    from embconf.model.vocabulary import FIXTURES_DIR

    return load(path, load_corpus(FIXTURES_DIR).cases)


def _injected(report: dict[str, Any]) -> dict[str, Any]:
    """The report with its first verdict entry's mistake said as WRONG, in the verdict and in every case."""
    wrong = copy.deepcopy(report)
    entry = next(m for m in wrong["verdict"]["mistakes"] if m.get("id"))
    entry.update(title=WRONG, summary=WRONG)
    key = entry["id"].removeprefix("symptom:")
    for case in wrong["cases"]:
        for cause in case.get("diagnosis") or []:
            if cause.get("mutant", cause.get("symptom")) == key:
                cause.update(description=WRONG, summary=WRONG, alternatives={})
    return wrong


def test_an_untrue_sentence_fails_the_audit_of_every_output(tmp_path: Path) -> None:
    """The same wrong sentence, printed by each output, is found in each (the audit can fail for every one)."""
    result, report = run_reported(tmp_path, f"functions:{CORPUS / 'dlfs2_embedding'}.py")
    assert_exit(result, 1)
    truth = read_truth(CORPUS / "dlfs2_embedding.py")
    claims, unaudited = every_output(report, _rubric(CORPUS / "_every_area_rubric.yaml"), "dlfs2")
    assert not unaudited and not [v for v in judge(claims, report, truth, IDENTITY) if v.problem]
    wrong = _injected(report)
    claims, unaudited = every_output(wrong, _rubric(CORPUS / "_every_area_rubric.yaml"), "dlfs2")
    assert not unaudited, unaudited  # the wrong sentence is printed where the audit reads it
    found = {v.claim.where for v in judge(claims, wrong, truth, IDENTITY) if v.problem}
    missed = [output for output in OUTPUTS if not any(where.startswith(output) for where in found)]
    assert not missed, f"the audit misses the wrong sentence in {missed}"
    assert any(v.problem for v in audit(wrong, truth, IDENTITY))  # and the console's


def _case(case_id: str, title: str) -> dict[str, Any]:
    cause = {"id": "symptom:token_scale:x", "title": title, "hint": "h"}
    return {"id": case_id, "outcome": "fail", "operation": "embedding_layer_forward", "cause": cause}


def test_a_mistake_is_said_of_an_items_cases_with_their_own_numbers() -> None:
    """Feedback groups an item's cases by cause and says what those cases measured (a range, or each reading with
    its count among them), never the title of all the run's cases nor the first case's numbers."""
    from embconf.grading.feedback import likely_mistakes

    (alike,) = likely_mistakes(
        [_case("a", "scaled by 2 instead of 2.82843"), _case("b", "scaled by 2 instead of 2.82843")]
    )
    assert alike.title == "scaled by 2 instead of 2.82843" and alike.count == 2
    (ranged,) = likely_mistakes([_case("a", "scaled by 2 instead of 2.8"), _case("b", "scaled by 3 instead of 4")])
    assert ranged.title == "scaled by 2, 3 instead of 2.8 to 4"
    (words,) = likely_mistakes([_case("a", "rows shifted"), _case("b", "rows clamped"), _case("c", "rows shifted")])
    assert words.title == "rows shifted (in 2 of 3 cases); rows clamped (in 1 of 3 cases)"


def test_the_matrix_and_the_class_report_say_each_group_what_it_measured(tmp_path: Path) -> None:
    """A matrix deviation's sentence is read from its own cases; a class-report row is one title, true of every
    student under it (the same mistake measured with other numbers is its own row)."""
    from embconf.grading.report import class_mistakes
    from embconf.grading.score import score
    from embconf.matrix.model import build
    from embconf.model.record import RunRecord

    result, report = run_reported(tmp_path, f"functions:{CORPUS / 'layer_scale_by_d'}.py")
    assert_exit(result, 1)
    run = RunRecord.from_json(report)
    (column,) = build([run], dict(run.fixtures))["implementations"]
    for deviation in column["deviations"]:
        said = [c for c in _claims_of(column) if c.cases == tuple(deviation["cases"])]
        assert said and not [
            v for v in judge(said, report, read_truth(CORPUS / "layer_scale_by_d.py"), IDENTITY) if v.problem
        ]
    students = []
    for name, title in (("ann", "scaled by 8 instead of 2.82843"), ("bob", "scaled by 16 instead of 4")):
        record = {
            "name": name,
            "status": "graded",
            "cases": [],
            "verdict": {"mistakes": [{"id": "symptom:token_scale:x", "title": title, "hint": "", "cases": ["c"]}]},
        }
        students.append(score(record, _rubric()))
    rows = class_mistakes(students)
    assert sorted((r["summary"], [s["name"] for s in r["students"]]) for r in rows) == [
        ("scaled by 16 instead of 4", ["bob"]),
        ("scaled by 8 instead of 2.82843", ["ann"]),
    ]


def _claims_of(column: dict[str, Any]) -> list:
    from _outputs import matrix_claims

    return matrix_claims(column)


TINYTORCH = sorted(p for p in CORPUS.glob("[a-z]*.py") if "from _tt import" in p.read_text(encoding="utf-8"))
BAGS_ITEM = """
  - id: bags
    name: "Optional extension: bags (EMB-BAG)"
    points: 10
    requirements: ["EMB-BAG-[0-9]*"]
    operations: [embedding_bag_forward, embedding_bag_backward]
    features: [bag-sum, bag-mean, bag-max, bag-weights, bag-padding, bag-last-offset, bag-2d]
    missing: exclude
    extra_credit: true
"""  # docs/course-staff.md's extra-credit item: a course grading the bag extension adds it to its rubric


@functools.lru_cache(maxsize=1)
def _course_rubric() -> Any:
    """The default rubric with the bag extension graded as extra credit, as docs/course-staff.md shows."""
    from embconf.grading.rubric import DEFAULT_RUBRIC

    folder = Path(tempfile.mkdtemp(prefix="embconf-rubric-"))
    (folder / "rubric.yaml").write_text(DEFAULT_RUBRIC.read_text(encoding="utf-8") + BAGS_ITEM, encoding="utf-8")
    return _rubric(folder / "rubric.yaml")


@pytest.mark.parametrize("path", TINYTORCH, ids=[p.stem for p in TINYTORCH])
def test_tinytorch_corpus_graded_by_the_default_rubric_is_told_only_true_sentences(path: Path) -> None:
    """The TinyTorch corpus run exactly as ``embconf grade`` runs a submission (the default rubric's cases with the
    bag extension as extra credit, the tinytorch adapter, an isolated worker, ``run_fields``): every feedback,
    Gradescope, gradebook and class-report sentence is true of it."""
    from embconf.grading.job import cases_of, run_fields, run_submission
    from embconf.isolation import IsolationOptions
    from embconf.model.vocabulary import FIXTURES_DIR

    rubric = _course_rubric()
    from embconf.corpus.fixtures import load_corpus

    ids = tuple(rubric.case_ids(load_corpus(FIXTURES_DIR).cases))
    run = run_submission(f"tinytorch:{path}", cases_of(FIXTURES_DIR, ids), IsolationOptions())
    record = {"kind": "module", "status": "graded", "reason": "", "note": "", "graded": "", "name": path.stem}
    record.update(entry=path.name, duration_s=0.0, **run_fields(run))
    claims, unaudited = grading_claims(record, rubric)
    assert claims and not unaudited, unaudited
    untrue = [
        f"{v.claim.where}: {v.problem}" for v in judge(claims, run.to_json(), read_truth(path), IDENTITY) if v.problem
    ]
    assert not untrue, untrue


def test_a_title_with_quotes_is_read_in_the_gradebooks_csv_cell() -> None:
    """The gradebook is CSV: a title quoting its source line (``f"{total}"``) is printed with its quotes doubled, and
    the audit reads it there; a title the gradebook does not hold is still missing."""
    import csv
    import io

    from _truth import Claim

    title = 'raised AssertionError at m.py:3 in f (`assert n % s == 0, f"{n} is not divisible"`)'
    buffer = io.StringIO()
    csv.writer(buffer).writerow(["student", title])
    claim = Claim("gradebook", ("symptom:untyped:AssertionError:*",), title, ("c",))
    assert unprinted([claim], buffer.getvalue(), "plain") == []
    assert unprinted([claim], buffer.getvalue().replace("divisible", "even"), "plain")
