"""What ``embconf grade`` writes in OUT_DIR: per submission ``records/NAME.json`` (the raw result,
reused by later runs and by --merge), ``feedback/NAME.md`` and ``results/NAME.json`` (Gradescope's
autograder results format); for the class ``gradebook.csv`` and ``report.html``."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any, Mapping, Sequence

from embconf.grading.feedback import feedback, record_output, result_output, top_mistake
from embconf.grading.files import write_json, write_text
from embconf.grading.rubric import Rubric
from embconf.grading.score import Score, score
from embconf.model.outcomes import OUTCOMES

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # a cell a spreadsheet would run as a formula


def write_submission(out: Path, record: Mapping[str, Any], rubric: Rubric) -> Score:
    """The record, feedback and Gradescope results of one submission, written as soon as it is graded."""
    result = score(record, rubric)
    write_json(out / "records" / f"{record['name']}.json", record)
    write_text(out / "feedback" / f"{record['name']}.md", feedback(result, rubric.title))
    write_json(out / "results" / f"{record['name']}.json", gradescope_results(result))
    return result


def gradescope_results(result: Score) -> dict[str, Any]:
    """Gradescope's results.json: total score, one test per rubric item."""
    record = result.record
    tests = [
        {
            "name": s.item.name,
            "number": str(n),
            "score": s.points,
            "max_score": s.item.points,
            "status": "passed" if s.lost <= 0 else "failed",
            "output": result_output(s),
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


def write_class(out: Path, records: Sequence[Mapping[str, Any]], rubric: Rubric) -> list[Score]:
    """gradebook.csv and report.html for every record (in name order)."""
    from embconf.grading.report import render

    scores = [score(record, rubric) for record in sorted(records, key=lambda r: r["name"])]
    write_text(out / "gradebook.csv", gradebook(scores, rubric))
    write_text(out / "report.html", render(scores, rubric))
    return scores


def gradebook(scores: Sequence[Score], rubric: Rubric) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    bench = sorted({name for result in scores for name in result.record.get("bench") or {}})  # ungraded (grade --bench)
    writer.writerow(
        [
            "name",
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
                _cell(record["name"]),
                _cell(record["entry"]),
                record["kind"],
                _cell(record.get("graded", "")),
                f"{result.total:g}",
                f"{result.max:g}",
                *(f"{s.points:g}" for s in result.items),
                *(counts.get(o, 0) for o in OUTCOMES),
                _cell(top_mistake(record)),
                _cell(record.get("reason", "")),
                _cell(record.get("note", "")),
                *(_cell(str(measured.get(name, ""))) for name in bench),
            ]
        )
    return buffer.getvalue()


def _cell(text: str) -> str:
    """Text a spreadsheet shows as text (a leading ' disarms a formula)."""
    return f"'{text}" if text.startswith(FORMULA_START) else text
