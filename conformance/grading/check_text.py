"""What a student reads of an ``embconf.check`` result: a short text (printed), an HTML block (a notebook),
and what is not written yet. Every mistake is said once, in the verdict's fixing order, with one example;
``embconf run`` prints every failure in full."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from embconf.adapters.tinytorch import REQUIRES
from embconf.adapters.tinytorch_bags import REQUIRES as BAG_REQUIRES
from embconf.grading.feedback import declined_note, detail_lines, frame, is_unwritten, likely_mistakes, not_attempted
from embconf.grading.score import Score
from embconf.grading.template import render
from embconf.model.symptom import UNWRITTEN, SymptomKey

if TYPE_CHECKING:
    from embconf.grading.check import CheckResult

TEMPLATE = Path(__file__).with_name("check_template.html")
MAX_CHARS = 4000  # of the printed text
FAILURES = "the result's .failures() (a notebook's namespace or a notebook file has no embconf run command)"
SHOWN_MISTAKES, EXAMPLES, EXAMPLE_LINES, LINE_CHARS = 6, 2, 8, 200


def unwritten(record: Mapping[str, Any], unsaid: bool = False) -> list[str]:
    """'learned_positions_forward (no PositionalEncoding)', 'backward (embeddings.py line 100: raises
    NotImplementedError)': each function once, whichever operations reach it (``unsaid``: only those no verdict
    mistake names)."""
    said = {m["id"] for m in record.get("verdict", {}).get("mistakes") or () if _unwritten_mistake(m)}
    found: dict[str, str] = {}
    for case in record.get("cases", ()):
        operation = case["operation"]
        if not case.get("provided", True):
            found[operation] = f"no {' or '.join(REQUIRES.get(operation, (operation,)))}"
        elif is_unwritten(case) and not (unsaid and (case.get("cause") or {}).get("id") in said):
            file, line, function = frame(str(case.get("message", "")))
            where = f"{file} line {line}: " if file else ""
            found.setdefault(function or operation, f"{where}raises NotImplementedError")
    return [f"{name} ({why})" for name, why in found.items()]


def _unwritten_mistake(mistake: Mapping[str, Any]) -> bool:
    """Whether a verdict mistake is a function not written yet (said in the mistakes, with its hint)."""
    return SymptomKey.parse(str(mistake.get("mistake", ""))).family == UNWRITTEN


def unchecked(result: CheckResult) -> str:
    """'Not checked: EmbeddingBag (...)': what the submission provides that the rubric grades no case of (the bag
    layer under the default rubric), and how to check it; '' when the rubric grades all it provides."""
    if result.run is None:
        return ""
    graded = {case["operation"] for case in result.record.get("cases", ())}
    left = sorted(set(result.run.capabilities.operations) - graded)
    if not left:
        return ""
    names = ", ".join(dict.fromkeys(REQUIRES.get(operation, (operation,))[0] for operation in left))
    how = (
        f"{result.command} -k 'bag.*' runs its cases"
        if result.command and all(operation in BAG_REQUIRES for operation in left)
        else "embconf.check(..., rubric=FILE) with a rubric item that grades them checks them"
    )
    return f"Not checked: {names} ({', '.join(left)}): the rubric grades none of its cases; {how}."


def unattempted(score: Score) -> list[str]:
    """'mode max: not attempted (not in EmbeddingBag.MODES): 12 cases the rubric grades count as failed.': each
    feature a rubric item names that the submission leaves out, once."""
    found: dict[str, set[str]] = {}
    for item in score.items:
        for case in item.unattempted:
            found.setdefault(not_attempted(case["unclaimed"]), set()).add(case["id"])
    counted = {1: "1 case the rubric grades counts"}
    return [
        f"{said}: {counted.get(len(ids), f'{len(ids)} cases the rubric grades count')} as failed."
        for said, ids in found.items()
    ]


def headline(result: CheckResult) -> str:
    """The verdict's counts (its mistakes are listed below it), or the problem."""
    if result.problem:
        return result.problem
    summary = str(result.record["verdict"]["summary"])
    if result.record["verdict"].get("mistakes"):
        summary = summary.split("; ", 1)[0]
    return summary + declined_note(result.score)


def text(result: CheckResult) -> str:
    record, score = result.record, result.score
    mistakes = record["verdict"].get("mistakes") or []
    lines = [f"embconf check {record['entry']}: {score.total:g} / {score.max:g}", headline(result)]
    if result.problem:
        return "\n".join(lines) + "\n"
    todo = unwritten(record, unsaid=True)  # a function a mistake below names is said there, with its hint
    if todo:
        lines.append(f"Not written yet: {', '.join(todo)}.")
    if unchecked(result):
        lines.append(unchecked(result))
    declined = result.declined()
    if declined:
        lines.append(
            f"Declined: {len(declined)} case{'s' if len(declined) != 1 else ''} the rubric requires, counted as "
            f"failed (e.g. {declined[0]}); handle these inputs instead of raising embconf.Decline."
        )
    lines += unattempted(score)
    lines.append("")
    width = max(len(s.item.label) for s in score.items)
    for item in score.items:
        lost = f"  (lost {item.lost:g})" if item.lost > 0 else ""
        lines.append(f"  {item.item.label:<{width}}  {item.points:>5g} / {item.item.points:g}{lost}")
    if mistakes:
        lines += ["", "Mistakes, in the order to fix them:"]
    by_id = {case["id"]: case for case in record["cases"]}
    for number, mistake in enumerate(mistakes[:SHOWN_MISTAKES], 1):
        count = len(mistake["cases"])
        lines.append(f"{number}. {mistake['title']} ({count} case{'s' if count != 1 else ''})")
        if mistake.get("hint"):
            lines.append(f"   hint: {mistake['hint']}")
        example = by_id.get(mistake["cases"][0]) if mistake["cases"] else None
        if example is not None and number <= EXAMPLES and example.get("message"):
            shown = example["message"].splitlines()[:1] + detail_lines(example["message"], EXAMPLE_LINES - 1)
            lines += [f"   | {line[:LINE_CHARS]}" for line in shown]
    if len(mistakes) > SHOWN_MISTAKES:
        lines.append(f"... and {len(mistakes) - SHOWN_MISTAKES} more mistakes")
    if mistakes:
        lines += ["", f"Every failure in full: {result.command or FAILURES}"]
    out = "\n".join(lines)
    return (
        out if len(out) <= MAX_CHARS else out[: MAX_CHARS - 40].rstrip() + "\n... (cut; embconf run says it all)"
    ) + "\n"


def html(result: CheckResult) -> str:
    """The notebook's view: the score, what is not written yet, and each mistake once with its hint and one
    example (grouped as the printed form and the feedback group them)."""
    mistakes = [
        {
            "title": mistake.title,
            "count": mistake.count,
            "cases": "case" if mistake.count == 1 else "cases",
            "hint": mistake.hint,
            "example": "\n".join(_example(result, mistake.key)),
        }
        for mistake in likely_mistakes(result.failures())
    ]
    items = [
        {
            "name": s.item.label,
            "points": f"{s.points:g}",
            "max": f"{s.item.points:g}",
            "ok": "ok" if s.lost <= 0 else "lost",
        }
        for s in result.score.items
    ]
    counts = result.run.summary() if result.run is not None else {}
    return render(
        TEMPLATE.read_text(encoding="utf-8"),
        {
            "score": f"{result.score.total:g}",
            "max": f"{result.score.max:g}",
            "verdict": headline(result),
            "todo": ", ".join(unwritten(result.record, unsaid=True)),
            "unchecked": unchecked(result),
            "colour": "#1e7d3a" if result.passed else "#b3261e",
            "counts": ", ".join(f"{n} {o}" for o, n in counts.items() if n),
            "items": items,
            "mistakes": mistakes[:SHOWN_MISTAKES],
            "more": max(len(mistakes) - SHOWN_MISTAKES, 0),
            "command": result.command or FAILURES,
            "failing": bool(mistakes),
        },
    )


def _example(result: CheckResult, key: str) -> list[str]:
    """The first failing case of the mistake ``key``: its message's first line and details."""
    for case in result.failures():
        if likely_mistakes([case])[0].key == key and case.get("message"):
            message = case["message"]
            return message.splitlines()[:1] + detail_lines(message, EXAMPLE_LINES - 1)
    return []
