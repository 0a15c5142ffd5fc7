"""The likely mistakes behind a run's failures, from today's per-case diagnosis (``result.diagnosis``).

:func:`verdict` is the one place grading reads diagnoses: when the run-level verdict of the diagnosis
area (``run_verdict(run, cases)``) lands, it replaces this function's body.
"""
from __future__ import annotations

from typing import Any, Iterable

from ..fixtures import Case
from ..outcomes import FAIL, PROBLEMS, CaseResult
from ..runner import RunResult

NO_MATCH = "no known mistake matches"


def case_mistakes(result: CaseResult) -> list[dict[str, str]]:
    """The likely mistakes of one failing case, best first (mutant id, summary, hint)."""
    return [_mistake(d) for d in result.diagnosis[:3]]


def _mistake(diagnosis: dict[str, Any]) -> dict[str, Any]:
    return {key: diagnosis.get(key, "") for key in ("mutant", "summary", "description", "hint")}


def verdict(run: RunResult, cases: Iterable[Case]) -> dict[str, Any]:
    """One summary line and the run's mistakes, the one explaining most failing cases first:
    ``{"summary": str, "mistakes": [{"mutant", "summary", "description", "hint", "cases": [ids]}]}``."""
    del cases  # the run-level verdict will use them
    problems = [r for r in run.results if r.outcome in PROBLEMS]
    applicable = [r for r in run.results if r.outcome != "not_applicable"]
    grouped: dict[str, dict[str, Any]] = {}
    for result in problems:
        if result.outcome == FAIL and result.diagnosis:
            best = _mistake(result.diagnosis[0])
            entry = grouped.setdefault(best["mutant"], {**best, "cases": []})
        else:
            kind = result.outcome if result.outcome != FAIL else "unexplained"
            entry = grouped.setdefault(kind, {"mutant": "", "summary": _undiagnosed(result), "description": _undiagnosed(result), "hint": "", "cases": []})
        entry["cases"].append(result.id)
    mistakes = sorted(grouped.values(), key=lambda m: (-len(m["cases"]), m["mutant"] == ""))
    if not problems:
        summary = f"all {len(applicable)} applicable cases pass"
    else:
        summary = f"{len(problems)} of {len(applicable)} applicable cases fail; most likely: {mistakes[0]['summary']}"
    return {"summary": summary, "mistakes": mistakes}


def _undiagnosed(result: CaseResult) -> str:
    if result.outcome == FAIL:
        return f"failures that {NO_MATCH}"
    return {"error": "the implementation raised an unexpected exception", "crash": "the implementation crashed its process",
            "timeout": "the implementation did not answer in time"}.get(result.outcome, result.outcome)
