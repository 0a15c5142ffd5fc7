"""The likely mistakes behind a run's failures, as grading records them.

:func:`verdict` is the one place grading reads the diagnosis area's run-level
verdict (:func:`embconf.diagnosis.run_verdict`); failures no mistake explains are
grouped by why they were not explained (an unexpected exception, a crash, ...).
"""
from __future__ import annotations

from typing import Any, Iterable

from embconf.diagnosis import run_verdict
from embconf.corpus.fixtures import Case
from embconf.model.outcomes import FAIL, PROBLEMS, CaseResult
from embconf.run.cases import RunResult

NO_MATCH = "no known mistake matches"


def case_mistakes(result: CaseResult) -> list[dict[str, str]]:
    """The likely mistakes of one failing case, best first (mutant or symptom id, summary, hint)."""
    return [_mistake(d) for d in result.diagnosis[:3]]


def _mistake(diagnosis: dict[str, Any]) -> dict[str, Any]:
    found = {key: diagnosis.get(key, "") for key in ("mutant", "summary", "description", "hint")}
    if not found["mutant"] and diagnosis.get("symptom"):
        found["mutant"] = "symptom:" + diagnosis["symptom"]
    return found


def verdict(run: RunResult, cases: Iterable[Case]) -> dict[str, Any]:
    """One summary line and the run's mistakes, in the order to fix them:
    ``{"summary": str, "mistakes": [{"mutant", "summary", "description", "hint", "cases": [ids]}]}``."""
    problems = [r for r in run.results if r.outcome in PROBLEMS]
    applicable = [r for r in run.results if r.outcome != "not_applicable"]
    found = run_verdict(run, cases)
    mistakes = [{"mutant": m.id, "summary": m.title, "description": m.title, "hint": m.hint, "cases": list(m.cases)}
                for m in found.mistakes]
    explained = {case_id for m in found.mistakes for case_id in m.cases}
    unexplained: dict[str, dict[str, Any]] = {}
    for result in problems:
        if result.id not in explained:
            kind = result.outcome if result.outcome != FAIL else "unexplained"
            text = _undiagnosed(result)
            unexplained.setdefault(kind, {"mutant": "", "summary": text, "description": text, "hint": "", "cases": []})["cases"].append(result.id)
    mistakes += sorted(unexplained.values(), key=lambda m: -len(m["cases"]))
    summary = f"all {len(applicable)} applicable cases pass" if not problems else f"{len(problems)} of {len(applicable)} applicable cases fail; {found.summary}"
    return {"summary": summary, "mistakes": mistakes}


def _undiagnosed(result: CaseResult) -> str:
    if result.outcome == FAIL:
        return f"failures that {NO_MATCH}"
    return {"error": "the implementation raised an unexpected exception", "crash": "the implementation crashed its process",
            "timeout": "the implementation did not answer in time"}.get(result.outcome, result.outcome)
