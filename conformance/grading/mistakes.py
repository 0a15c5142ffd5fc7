"""The likely mistakes behind a run's failures, as grading records them: read from the run record's verdict
(never recomputed), so the gradebook, the feedback and ``embconf run`` name the same causes.

Failures no cause explains are grouped by why they were not explained (an unexpected exception, a crash, ...).
"""

from __future__ import annotations

from typing import Any, Optional

from embconf.diagnosis.verdict import case_title
from embconf.model.outcomes import FAIL, NOT_APPLICABLE, CaseResult
from embconf.model.record import RunRecord

NO_MATCH = "no known mistake matches"


def case_cause(run: RunRecord, result: CaseResult) -> Optional[dict[str, str]]:
    """The verdict's cause of one failing case (the first, in fixing order, that explains it), if any, with the
    title this case measured of it (an item's cases are told what they show, never another case's numbers)."""
    cause = run.verdict.cause_of(result.id)
    return {"id": cause.id, "title": case_title(result, cause), "hint": cause.hint} if cause is not None else None


def verdict(run: RunRecord) -> dict[str, Any]:
    """One summary line and the run's mistakes, in the order to fix them:
    ``{"summary": str, "mistakes": [{"id", "title", "hint", "cases": [ids]}]}``; unexplained groups have id ''."""
    problems = run.problems
    applicable = [r for r in run.results if r.outcome != NOT_APPLICABLE]
    mistakes = [cause.verdict_json() for cause in run.verdict.causes]
    explained = {case_id for cause in run.verdict.causes for case_id in cause.cases}
    unexplained: dict[str, dict[str, Any]] = {}
    for result in problems:
        if result.id not in explained:
            kind = result.outcome.value if result.outcome != FAIL else "unexplained"
            unexplained.setdefault(kind, {"id": "", "title": _undiagnosed(result), "hint": "", "cases": []})[
                "cases"
            ].append(result.id)
    mistakes += sorted(unexplained.values(), key=lambda m: -len(m["cases"]))
    summary = (
        f"all {len(applicable)} applicable cases pass"
        if not problems
        else f"{len(problems)} of {len(applicable)} applicable cases fail; {run.verdict.summary}"
    )
    return {"summary": summary, "mistakes": mistakes}


def _undiagnosed(result: CaseResult) -> str:
    if result.outcome == FAIL:
        return f"failures that {NO_MATCH}"
    return {
        "error": "the implementation raised an unexpected exception",
        "crash": "the implementation crashed its process",
        "timeout": "the implementation did not answer in time",
    }.get(result.outcome.value, result.outcome.value)
