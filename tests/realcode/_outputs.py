"""Every place a verdict is printed, as typed claims the truth audit (``_truth.judge``) checks.

Besides the console (``_truth.printed``: each verdict entry and every diagnosis entry of every failing case), a run's
causes are printed by grading and by the matrix, each from the run record:

- the student's feedback (``feedback/NAME.md`` and its HTML page): under each item that lost points, each likely
  mistake (its title and hint) for the item's cases it explains, and "the same mistake as under ..." (the earlier
  title, now said of these cases too);
- Gradescope's ``results.json``: each test's output (the same lines per item) and the gradebook's top mistake;
- the class report (``report.html``): each mistake row's summary and hint, said of every student listed under it;
- ``embconf.check``: the printed text (the verdict's mistakes) and the notebook's HTML (the mistakes of its failures);
- the matrix (``embconf matrix``, a corpus module as a column): each deviation's summary and hint, of its cases.

A claim's ``cases`` are exactly the cases the printed sentence is said of; its ``text`` is what is printed (title
and hint). Each builder also checks that what it audits is printed (:func:`unprinted`), so the audit reads the
output, not a guess of it. Written for this corpus; the caller passes embconf's rendered outputs and records.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from _truth import HINT, Claim

from embconf.grading import check_text
from embconf.grading import markdown as md
from embconf.grading.check import CheckResult
from embconf.grading.check_text import SHOWN_MISTAKES
from embconf.grading.feedback import feedback, likely_mistakes
from embconf.grading.feedback_html import page
from embconf.grading.job import run_fields
from embconf.grading.outputs import gradebook, gradescope_results
from embconf.grading.report import class_mistakes
from embconf.grading.report import render as render_report
from embconf.grading.score import score
from embconf.matrix.html import render as matrix_html
from embconf.matrix.markdown import render as matrix_markdown
from embconf.matrix.model import build
from embconf.model.record import RunRecord


def _also(record: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """A verdict entry's id -> the ids merged into it (the typed identity the audit reads)."""
    return {m["id"]: tuple(m.get("also", ())) for m in record["verdict"].get("mistakes") or [] if m.get("id")}


def _said(title: str, hint: str) -> str:
    return f"{title}{HINT}{hint}" if hint else title


def item_claims(
    where: str, failed: Sequence[Mapping[str, Any]], record: Mapping[str, Any], first: int | None = None
) -> list[Claim]:
    """The likely mistakes printed for ``failed`` cases (an item's, or a notebook's failures; ``first``: how many
    are shown): one claim per cause, said of exactly the cases that cause explains among them."""
    also = _also(record)
    claims = []
    for mistake in likely_mistakes(failed)[:first]:
        if mistake.key not in also:  # not a cause (unwritten, declined, missing, unexplained): no claim to judge
            continue
        cases = tuple(c["id"] for c in failed if likely_mistakes([c])[0].key == mistake.key)
        claims.append(Claim(where, (mistake.key, *also[mistake.key]), _said(mistake.title, mistake.hint), cases))
    return claims


def feedback_claims(score: Any, record: Mapping[str, Any]) -> list[Claim]:
    """Each item's likely mistakes, in the feedback's order; a mistake an earlier item named is said again (its
    title, of this item's cases) by "the same mistake as under ..."."""
    losing = sorted((s for s in score.items if s.lost > 0), key=lambda s: (-s.lost, s.item.id))
    return [c for s in losing for c in item_claims(f"feedback {s.item.id}", s.failed, record)]


def report_claims(rows: Sequence[Mapping[str, Any]], records: Mapping[str, Mapping[str, Any]]) -> list[Claim]:
    """Each class-report mistake row, said of each student listed under it (that student's entry's cases)."""
    claims = []
    for row in rows:
        for student in row["students"]:
            record = records[student["name"]]
            entries = [m for m in record["verdict"].get("mistakes") or [] if m.get("id")]
            mine = [m for m in entries if _row_names(row, m)]
            for entry in mine:
                ids = (entry["id"], *entry.get("also", ()))
                claims.append(
                    Claim(f"report {student['name']}", ids, _said(row["summary"], row["hint"]), tuple(entry["cases"]))
                )
    return claims


def _row_names(row: Mapping[str, Any], entry: Mapping[str, Any]) -> bool:
    """Whether a student's verdict entry is the one a row lists them under (rows carry the entry's id)."""
    return row.get("id", "") == entry["id"]


def verdict_claims(where: str, record: Mapping[str, Any], first: int | None = None) -> list[Claim]:
    """The verdict's entries as printed by ``embconf.check``'s text and the gradebook (``first``: how many)."""
    entries = [m for m in record["verdict"].get("mistakes") or [] if m.get("id")]
    return [
        Claim(where, (m["id"], *m.get("also", ())), _said(m["title"], m.get("hint", "")), tuple(m["cases"]))
        for m in entries[:first]
    ]


def matrix_claims(column: Mapping[str, Any]) -> list[Claim]:
    """A matrix column's deviations: each summary (its Markdown and HTML print no hint) of the cases under it."""
    return [
        Claim(f"matrix {column['impl']}", (d["likely_cause"],), d["summary"], tuple(d["cases"]))
        for d in column["deviations"]
        if d["likely_cause"]
    ]


def unprinted(claims: Sequence[Claim], text: str, form: str) -> list[str]:
    """The claims whose title or hint does not appear in the output ``text`` (``form``: md, html, plain)."""
    missing = []
    for claim in claims:
        for part in claim.text.split(HINT):
            shown = {
                "md": (md.text(part), part.replace("|", "\\|")),
                "html": (html.escape(part, quote=False), html.escape(part)),
                "plain": (part.replace('"', '""'),),  # a CSV cell (the gradebook) doubles its quotes
            }.get(form, ())
            if not any(s in text for s in (part, *shown)):
                missing.append(f"{claim.where}: not printed as audited: {part[:120]}")
    return missing


def every_output(report: Mapping[str, Any], rubric: Any, name: str) -> tuple[list[Claim], list[str]]:
    """The claims every output prints about the run of ``report`` (a corpus module's JSON report, read), graded
    with ``rubric`` as submission ``name``, and the audited claims any output does not print (none, when the audit
    reads what is printed)."""
    run = RunRecord.from_json(report)
    record = {**GRADED, "name": name, "entry": f"{name}.py", **run_fields(run)}
    claims, missing = grading_claims(record, rubric)
    checked = CheckResult(run, record, score(record, rubric))
    shown = verdict_claims("check text", record, SHOWN_MISTAKES)
    printed_text = check_text.text(checked)
    claims += shown
    missing += unprinted(shown, printed_text, "plain") if "(cut;" not in printed_text else []
    notebook = item_claims("check html", checked.failures(), record, SHOWN_MISTAKES)
    claims += notebook
    missing += unprinted(notebook, check_text.html(checked), "html")
    document = build([run], dict(run.fixtures))  # what `embconf matrix --merge REPORT` lays out: one column
    deviations = matrix_claims(document["implementations"][0])
    claims += deviations
    missing += unprinted(deviations, matrix_markdown(document), "md")
    return claims, missing + unprinted(deviations, matrix_html(document), "html")


GRADED = {"kind": "module", "status": "graded", "reason": "", "note": "", "graded": "", "duration_s": 0.0}


def grading_claims(record: Mapping[str, Any], rubric: Any) -> tuple[list[Claim], list[str]]:
    """The claims of one graded record's feedback (Markdown and HTML), Gradescope results, gradebook row and class
    report, and the audited claims one of them does not print."""
    result = score(record, rubric)
    text = feedback(result, rubric.title)
    said = feedback_claims(result, record)
    missing = unprinted(said, text, "md") + unprinted(said, page(text), "html")
    results = gradescope_results(result)
    tests = [c for s in result.items if s.lost > 0 for c in item_claims(f"gradescope {s.item.id}", s.failed, record)]
    missing += unprinted(tests, "\n".join(t["output"] for t in results["tests"]), "md")
    top = [Claim("gradebook", c.ids, c.text.split(HINT)[0], c.cases) for c in verdict_claims("", record, 1)]
    missing += unprinted(top, gradebook([result], rubric), "plain")
    rows = report_claims(class_mistakes([result]), {record["name"]: record})
    missing += unprinted(rows, render_report([result], rubric), "html")
    return said + tests + top + rows, missing
