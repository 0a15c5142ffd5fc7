"""The run's verdict: the few causes that explain its failures, in the order to fix them.

Chosen greedily from the causes of the failing results: the cause (a catalogue mutant, or a measured
symptom, under any of its readings) that explains the most failures not yet explained comes first; a
mutant wins a tie, because it carries the exact fix. A cause that is not complete (a dtype not cast back
when the values differ as well, a mistake that explains part of a case) is named but leaves its cases to be
explained by the next; a case two named causes are true of is explained.
"""

from __future__ import annotations

from dataclasses import replace

from embconf.model.record import Cause, RunRecord, Verdict

MAX_MISTAKES = 5


def run_verdict(run: RunRecord) -> Verdict:
    """The verdict of a diagnosed run (its results' ``causes`` filled)."""
    failing = run.problems
    candidates: dict[str, Cause] = {}
    explains: dict[str, list[str]] = {}
    wholly: dict[str, set[str]] = {}  # the cases a cause explains on its own (it is complete on them)
    for result in failing:
        for cause in result.causes:
            for reading in cause.readings():
                candidates.setdefault(reading.id, reading)
                cases = explains.setdefault(reading.id, [])
                if result.id not in cases:
                    cases.append(result.id)
                if reading.complete:
                    wholly.setdefault(reading.id, set()).add(result.id)
    chosen: list[Cause] = []
    left = {r.id for r in failing}
    named: dict[str, int] = {}
    while left and len(chosen) < MAX_MISTAKES:
        best = max(
            candidates, key=lambda key: (len(left & set(explains[key])), candidates[key].is_mutant), default=None
        )
        if best is None or not left & set(explains[best]):
            break
        cause = candidates.pop(best)
        chosen.append(replace(cause, cases=tuple(explains[best]), measured={}, alternatives={}))
        left -= wholly.get(best, set())
        for case_id in explains[best]:
            named[case_id] = named.get(case_id, 0) + 1
            if named[case_id] > 1:  # two mistakes named, each true of it: the case is explained
                left.discard(case_id)
    explained = len(failing) - len(left)
    return Verdict(_summary(chosen, explained, len(failing)), tuple(chosen), explained, len(failing))


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


def _summary(chosen: list[Cause], explained: int, failures: int) -> str:
    if not failures:
        return "no failures"
    if not chosen:
        return f"no likely mistake explains the {_plural(failures, 'failure')}"
    verb = "explains" if len(chosen) == 1 else "explain"
    parts = "; ".join(
        f"{c.title} ({c.id}, {_plural(len(c.cases), 'case')})"
        if c.is_mutant
        else f"{c.title} ({_plural(len(c.cases), 'case')})"
        for c in chosen
    )
    return f"{_plural(len(chosen), 'likely mistake')} {verb} {explained} of {_plural(failures, 'failure')}: {parts}"
