"""The run's verdict: the few mistakes that explain its failures, in the order to fix them.

Chosen greedily from the diagnoses of the failing results: the mistake (a
catalogue mutant, or a measured symptom) that explains the most failures not yet
explained comes first; a mutant wins a tie, because it carries the exact fix.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from embconf.corpus.fixtures import Case
from embconf.model.outcomes import PROBLEMS
from embconf.run.cases import RunResult

MAX_MISTAKES = 5


@dataclass
class Mistake:
    id: str  # a mutant id, or "symptom:<key>"
    title: str
    hint: str
    cases: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "hint": self.hint, "cases": list(self.cases)}


@dataclass
class Verdict:
    summary: str
    mistakes: list[Mistake]
    explained: int
    failures: int

    def to_json(self) -> dict[str, Any]:
        return {"summary": self.summary, "explained": self.explained, "failures": self.failures,
                "mistakes": [m.to_json() for m in self.mistakes]}


def run_verdict(run: RunResult, cases: Optional[Iterable[Case]] = None) -> Verdict:
    """The verdict of a diagnosed run (``diagnose_run`` first); ``cases`` is accepted for symmetry and unused."""
    failing = [r for r in run.results if r.outcome in PROBLEMS]
    candidates: dict[str, Mistake] = {}
    for result in failing:
        for entry in result.diagnosis:
            for key, title in _readings(entry):
                mistake = candidates.setdefault(key, Mistake(key, title, entry.get("hint", "")))
                if result.id not in mistake.cases:
                    mistake.cases.append(result.id)
    chosen: list[Mistake] = []
    left = {r.id for r in failing}
    while left and len(chosen) < MAX_MISTAKES:
        best = max(candidates.values(), key=lambda m: (len(left & set(m.cases)), not m.id.startswith("symptom:")), default=None)
        if best is None or not left & set(best.cases):
            break
        chosen.append(best)
        left -= set(best.cases)
        del candidates[best.id]
    explained = len(failing) - len(left)
    return Verdict(_summary(chosen, explained, len(failing)), chosen, explained, len(failing))


def _readings(entry: dict[str, Any]) -> list[tuple[str, str]]:
    """(mistake id, title) of each reading of one diagnosis entry."""
    if "mutant" in entry:
        return [(entry["mutant"], entry.get("description") or entry["summary"])]
    alternatives = entry.get("alternatives", {})
    readings = [("symptom:" + entry["symptom"], alternatives.get(entry["symptom"], entry["summary"]))]
    return readings + [("symptom:" + key, title) for key, title in alternatives.items() if key != entry["symptom"]]


def _summary(chosen: list[Mistake], explained: int, failures: int) -> str:
    if not failures:
        return "no failures"
    if not chosen:
        return f"no likely mistake explains the {failures} failure{'s' if failures != 1 else ''}"
    count = f"{len(chosen)} likely mistake{'s' if len(chosen) != 1 else ''}"
    verb = "explains" if len(chosen) == 1 else "explain"
    parts = "; ".join(f"{m.title} ({m.id}, {len(m.cases)} case{'s' if len(m.cases) != 1 else ''})" if not m.id.startswith("symptom:")
                      else f"{m.title} ({len(m.cases)} case{'s' if len(m.cases) != 1 else ''})" for m in chosen)
    return f"{count} {verb} {explained} of {failures} failure{'s' if failures != 1 else ''}: {parts}"
