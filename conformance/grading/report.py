"""The class report (``report.html``): the data of one self-contained page, rendered into
``report_template.html``. Charts are inline SVG whose geometry is computed here; no script, no network."""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any, Sequence
from urllib.parse import quote

from embconf.grading.rubric import Rubric
from embconf.grading.score import Score
from embconf.grading.template import render as render_template
from embconf.model.outcomes import PASS, XPASS
from embconf.model.version import __version__
from embconf.model.vocabulary import requirement_order, requirement_subjects

TEMPLATE = Path(__file__).with_name("report_template.html")
BINS = 10
CHART_W, CHART_H, BAR_GAP = 600, 200, 4
ROW_H, LABEL_W, RATE_W, LABEL_CHARS = 18, 330, 360, 46
SHOWN_STUDENTS = 200  # per mistake; the rest are counted


def render(scores: Sequence[Score], rubric: Rubric) -> str:
    return render_template(TEMPLATE.read_text(encoding="utf-8"), report_data(scores, rubric))


def report_data(scores: Sequence[Score], rubric: Rubric) -> dict[str, Any]:
    totals = [s.total for s in scores]
    graded = [s for s in scores if s.record["status"] == "graded"]
    rates = requirement_rates(graded)
    return {
        "title": rubric.title,
        "version": __version__,
        "count": len(scores),
        "graded": len(graded),
        "problems": len(scores) - len(graded),
        "max": f"{rubric.max_points:g}",
        "mean": f"{statistics.fmean(totals):.1f}" if totals else "-",
        "median": f"{statistics.median(totals):g}" if totals else "-",
        "histogram": histogram(totals, rubric.max_points),
        "chart_w": CHART_W,
        "chart_h": CHART_H + 40,
        "axis_y": CHART_H + 2,
        "rates": rates,
        "rates_h": ROW_H * len(rates) + 4,
        "rates_w": LABEL_W + RATE_W + 60,
        "mistakes": class_mistakes(graded),
        "students": [_student(s) for s in scores],
    }


def histogram(totals: Sequence[float], maximum: float) -> list[dict[str, Any]]:
    """BINS equal bins over [0, max] (the last one closed), and one bar of its own for the scores above max (extra
    credit) when there are any, with bar geometry."""
    above = sum(1 for total in totals if maximum and total > maximum)
    counts = [0] * BINS
    for total in totals:
        if not (maximum and total > maximum):
            counts[min(int(total / maximum * BINS), BINS - 1) if maximum else 0] += 1
    labels = [
        (
            f"{maximum * n / BINS:g}-{maximum * (n + 1) / BINS:g}" + ("" if n == BINS - 1 else " (excl.)"),
            f"{maximum * n / BINS:g}",
        )
        for n in range(BINS)
    ]
    if above:
        counts.append(above)
        labels.append((f"above {maximum:g} (extra credit)", f">{maximum:g}"))
    tallest = max(counts) or 1
    width = CHART_W / len(counts)
    bins = []
    for number, (count, (label, low)) in enumerate(zip(counts, labels)):
        height = round(CHART_H * count / tallest, 1)
        bins.append(
            {
                "count": count,
                "label": label,
                "low": low,
                "x": round(number * width + BAR_GAP / 2, 1),
                "w": round(width - BAR_GAP, 1),
                "h": height,
                "y": round(CHART_H - height, 1),
                "tx": round(number * width + width / 2, 1),
                "ty": round(CHART_H - height - 4, 1),
            }
        )
    return bins


def requirement_rates(graded: Sequence[Score]) -> list[dict[str, Any]]:
    """Per requirement (spec order): the share of graded submissions passing every counted case of it."""
    passed: dict[str, int] = defaultdict(int)
    seen: dict[str, int] = defaultdict(int)
    for result in graded:
        outcome: dict[str, bool] = {}
        for case in result.record["cases"]:
            if case["outcome"] == "not_applicable" and case.get("provided", True):
                continue
            for req in case["requirements"]:
                outcome[req] = outcome.get(req, True) and case["outcome"] in (PASS, XPASS)
        for req, ok in outcome.items():
            seen[req] += 1
            passed[req] += ok
    rows = []
    subjects = requirement_subjects()
    for number, req in enumerate(sorted(seen, key=requirement_order)):
        rate = passed[req] / seen[req]
        rows.append(
            {
                "requirement": req,
                "label": _label(req, subjects.get(req, "")),
                "passed": passed[req],
                "of": seen[req],
                "percent": f"{100 * rate:.0f}",
                "y": number * ROW_H + 2,
                "ty": number * ROW_H + 14,
                "bar_x": LABEL_W,
                "bar_w": round(RATE_W * rate, 1),
                "full_w": RATE_W,
                "tx": LABEL_W + RATE_W + 6,
                "low": "low" if rate < 0.5 else "",
            }
        )
    return rows


def _label(requirement: str, subject: str) -> str:
    """'determinism (SHOULD) · EMB-GEN-2': what the requirement asks, then its id, cut to fit the chart."""
    subject = subject.replace("`", "")
    room = LABEL_CHARS - len(requirement) - 3
    if len(subject) > room:
        subject = subject[: room - 1].rstrip() + "…"
    return f"{subject} · {requirement}" if subject else requirement


def class_mistakes(graded: Sequence[Score]) -> list[dict[str, Any]]:
    """Each mistake of the run-level verdicts, with the students who made it, most common first: one row per
    cause and title, so that a row's sentence is true of every student under it (a mistake measured with other
    numbers in another submission is its own row)."""
    students: dict[tuple[str, str], list[str]] = defaultdict(list)
    shown: dict[tuple[str, str], tuple[str, str]] = {}  # (cause id, title) -> (what is wrong, the hint)
    for result in graded:
        for mistake in result.record["verdict"].get("mistakes", []):
            key = (mistake["id"], mistake["title"])  # one mistake measured alike: another reading is its own row
            students[key].append(result.record["name"])
            shown[key] = (mistake["title"], mistake.get("hint", ""))
    total = len(graded) or 1
    ranked = sorted(students.items(), key=lambda kv: (-len(kv[1]), shown[kv[0]][0]))
    return [
        {
            "id": key[0],
            "summary": shown[key][0],
            "hint": shown[key][1],
            "count": len(names),
            "percent": f"{100 * len(names) / total:.0f}",
            "students": [{"name": n, "anchor": _anchor(n)} for n in names[:SHOWN_STUDENTS]],
            "more": max(len(names) - SHOWN_STUDENTS, 0),
        }
        for key, names in ranked
    ]


def _student(result: Score) -> dict[str, Any]:
    record = result.record
    mistakes = record.get("verdict", {}).get("mistakes") or []
    return {
        "name": record["name"],
        "anchor": _anchor(record["name"]),
        "score": f"{result.total:g}",
        "entry": record["entry"],
        "feedback": "feedback/" + quote(record["name"]) + ".html",
        "top": mistakes[0]["title"] if mistakes else "",
        "reason": record.get("reason", ""),
        "problem": "problem" if record["status"] != "graded" else "",
    }


def _anchor(name: str) -> str:
    return "s-" + quote(name, safe="")
