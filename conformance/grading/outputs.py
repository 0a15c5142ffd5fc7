"""What ``embconf grade`` writes in OUT_DIR: per submission ``records/NAME.json`` (the raw result,
reused by later runs and by --merge), ``feedback/NAME.md`` (and ``.html``) and ``results/NAME.json`` (Gradescope's
autograder results format); for the class ``gradebook.csv`` and ``report.html``."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional, Sequence

from embconf.grading.feedback import feedback, lines_hold, record_output, result_output, top_mistake
from embconf.grading.files import csv_cell, write_json, write_text
from embconf.grading.roster import Roster, grades_csv, students_of
from embconf.grading.rubric import Rubric
from embconf.grading.score import Score, score
from embconf.model.outcomes import OUTCOMES


def write_submission(out: Path, record: Mapping[str, Any], rubric: Rubric) -> Score:
    """The record, feedback and Gradescope results of one submission, written as soon as it is graded."""
    from embconf.grading.feedback_html import page

    result = score(record, rubric)
    text = feedback(result, rubric.title)
    write_json(out / "records" / f"{record['name']}.json", record)
    write_text(out / "feedback" / f"{record['name']}.md", text)
    write_text(out / "feedback" / f"{record['name']}.html", page(text))
    write_json(out / "results" / f"{record['name']}.json", gradescope_results(result))
    return result


def gradescope_results(result: Score) -> dict[str, Any]:
    """Gradescope's results.json: total score, one test per rubric item (an extra-credit item's test says so in its
    name, and has no status until attempted: the total may pass the assignment's points, as Gradescope allows)."""
    record = result.record
    named: dict[str, str] = {}  # each mistake explained once, in the first test that loses points to it
    tests = [
        {
            "name": s.item.label,
            "number": str(n),
            "score": s.points,
            "max_score": s.item.points,
            **({} if s.item.extra_credit and not s.counted else {"status": "passed" if s.lost <= 0 else "failed"}),
            "output": result_output(s, named, lines_hold(record)),
            "output_format": "md",
            "visibility": s.item.visibility,
        }
        for n, s in enumerate(result.items, 1)
    ]
    return {
        "score": result.total,
        "execution_time": round(float(record.get("duration_s", 0.0)), 3),
        "output": record_output(record, result),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def write_class(
    out: Path, records: Sequence[Mapping[str, Any]], rubric: Rubric, roster: Optional[Roster] = None
) -> list[Score]:
    """gradebook.csv and report.html for every record (in name order); with a roster also grades.csv."""
    from embconf.grading.report import render

    scores = [score(record, rubric) for record in sorted(records, key=lambda r: r["name"])]
    write_text(out / "gradebook.csv", gradebook(scores, rubric, roster))
    if roster is not None:
        write_text(out / "grades.csv", grades_csv(scores, roster))
    write_text(out / "report.html", render(scores, rubric))
    return scores


def gradebook(scores: Sequence[Score], rubric: Rubric, roster: Optional[Roster] = None) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    bench = sorted({name for result in scores for name in result.record.get("bench") or {}})  # ungraded (grade --bench)
    writer.writerow(
        [
            "name",
            *(WHO if roster is not None else ()),
            "entry",
            "kind",
            "graded",
            "score",
            "max",
            *(item.id for item in rubric.items),
            *OUTCOMES,
            "top_mistake",
            "reason",
            "note",
            *bench,
        ]
    )
    for result in scores:
        record = result.record
        counts = record.get("summary") or {}
        measured = record.get("bench") or {}
        writer.writerow(
            [
                csv_cell(record["name"]),
                *(_who(record, roster) if roster is not None else ()),
                csv_cell(record["entry"]),
                record["kind"],
                csv_cell(record.get("graded", "")),
                f"{result.total:g}",
                f"{result.max:g}",
                *(f"{s.points:g}" for s in result.items),
                *(counts.get(o, 0) for o in OUTCOMES),
                csv_cell(top_mistake(record)),
                csv_cell(record.get("reason", "")),
                csv_cell(record.get("note", "")),
                *(csv_cell(str(measured.get(name, ""))) for name in bench),
            ]
        )
    return buffer.getvalue()


WHO = ("student", "sid", "email")


def _who(record: Mapping[str, Any], roster: Roster) -> list[str]:
    """The roster's student, sid and email of a record (a group's joined by '; ')."""
    students = students_of(record, roster)
    return [csv_cell("; ".join(getattr(s, field) for s in students)) for field in WHO]
