"""The run's verdict: the few causes that explain its failures, in the order to fix them.

Chosen greedily from the causes of the failing results: the cause (a catalogue mutant, or a measured
symptom, under any of its readings) that explains the most failures not yet explained comes first; a
mutant wins a tie, because it carries the exact fix. A cause that is not complete (a dtype not cast back
when the values differ as well, a mistake that explains part of a case) is named but leaves its cases to be
explained by the next; a case two named causes are true of is explained (a case that measured
several mistakes at once, each a part of it, once all its parts are named).

One mistake is one entry: causes that share an identity (``Cause.identity``: the mutants of one mistake in
several operations, a symptom that the named mutant itself shows on its case) are grouped before choosing, and
the entry lists the ids merged into it (``also``). An entry's title is true of every case it cites: when its cases
measured different things (other numbers, other words), the title says each with how many cases show it
(``titles.merged_title``), never the first case's alone. One thing is said in one wording: a symptom measured
beside the one catalogue mistake of its identity (a factor of D beside "scales the tokens by D") is said in that
mistake's words wherever it is measured, and a bag layer's copy of a lookup mistake in the lookup mistake's words
(``claims.SAID_AS``) when the run shows that mistake.
"""

from __future__ import annotations

from dataclasses import replace

from embconf.diagnosis.claims import SAID_AS
from embconf.diagnosis.localise import LOCATED
from embconf.diagnosis.titles import merged_hint, merged_title
from embconf.model.outcomes import CaseResult
from embconf.model.record import Cause, RunRecord, Verdict, is_symptom_id
from embconf.model.symptom import DTYPE, PLAIN, SHAPE, SymptomKey

MAX_MISTAKES = 5


def run_verdict(run: RunRecord) -> Verdict:
    """The verdict of a diagnosed run (its results' ``causes`` filled), one entry per mistake: the causes that
    share an identity (a forward and a backward mutant of one mistake, a symptom the named mutant itself shows)
    are one entry, under the title of the one that explains most of its cases (a mutant first)."""
    failing = run.problems
    members: dict[str, dict[str, Cause]] = {}  # identity -> cause id -> the cause
    member_cases: dict[tuple[str, str], set[str]] = {}  # (identity, cause id) -> the cases it explains
    explains: dict[str, list[str]] = {}
    wholly: dict[str, set[str]] = {}  # the cases a mistake explains on its own (it is complete on them)
    said: dict[str, dict[str, str]] = {}  # identity -> case -> what the case measured (the title of its reading)
    words = _wordings(failing)
    for result in failing:
        for cause in result.causes:
            for reading in cause.readings():
                key = reading.identity
                said.setdefault(key, {}).setdefault(result.id, words.get(reading.id, reading.title))
                members.setdefault(key, {}).setdefault(reading.id, reading)
                member_cases.setdefault((key, reading.id), set()).add(result.id)
                cases = explains.setdefault(key, [])
                if result.id not in cases:
                    cases.append(result.id)
                if reading.complete:
                    wholly.setdefault(key, set()).add(result.id)
    needed = {r.id: max([2] + [int(c.measured.get("parts", 2)) for c in r.causes if not c.complete]) for r in failing}
    candidates = {key: _representative(key, found, member_cases) for key, found in members.items()}
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
        also = tuple(i for i in members[best] if i != cause.id)
        if not cause.is_mutant and _plain(cause):  # what was measured, said of the cases no mistake explains
            explains[best] = [case_id for case_id in explains[best] if case_id in left]
        title = merged_title([said[best][case_id] for case_id in explains[best]])
        hint = merged_hint([cause.hint] + [members[best][i].hint for i in also])  # each error kind the fix raises
        chosen.append(
            replace(cause, title=title, hint=hint, cases=tuple(explains[best]), measured={}, alternatives={}, also=also)
        )
        left -= wholly.get(best, set())
        for case_id in explains[best]:
            named[case_id] = named.get(case_id, 0) + 1
            if named[case_id] >= needed[case_id]:  # two mistakes named (or all the parts it measured): explained
                left.discard(case_id)
    explained = len(failing) - len(left)
    return Verdict(_summary(chosen, explained, len(failing)), tuple(chosen), explained, len(failing))


def _wordings(failing: list[CaseResult]) -> dict[str, str]:
    """Reading id -> the words it is said in, when another cause says the same thing: a symptom's own reading
    measured beside exactly one complete catalogue mistake of its identity (on some case) in that mistake's words;
    a mutant ``claims.SAID_AS`` names in the words of the mistake it copies, when the run shows that one."""
    beside: dict[str, dict[str, str]] = {}  # symptom reading id -> mutant id -> the mutant's title
    titles: dict[str, str] = {}
    for result in failing:
        mutants = [c for c in result.causes if c.is_mutant and c.complete]
        for cause in result.causes:
            titles.setdefault(cause.id, cause.title)
            if cause.is_mutant:
                continue
            for mutant in mutants:  # a dtype or shape reading says what the mistake's words do not: kept
                for reading in cause.readings():
                    if reading.identity == mutant.identity and not _own_fact(reading):
                        beside.setdefault(reading.id, {})[mutant.id] = mutant.title
    words = {reading: next(iter(found.values())) for reading, found in beside.items() if len(found) == 1}
    words.update({copy: titles[original] for copy, original in SAID_AS.items() if original in titles})
    return words


def _plain(cause: Cause) -> bool:
    """A plain reading (what was measured, located or not): no mistake's words, so it cites only the cases the
    entries chosen before it leave unexplained (one defect, one entry)."""
    return (cause.symptom is not None and cause.symptom.family in PLAIN) or SymptomKey.parse(
        cause.mistake
    ).family == LOCATED


def _own_fact(reading: Cause) -> bool:
    """A dtype or shape reading: it says what a catalogue mistake's words do not, so it keeps its own."""
    return reading.symptom is not None and reading.symptom.family in (DTYPE, SHAPE)


def case_title(result: CaseResult, cause: Cause) -> str:
    """What ``result``'s case measured of the mistake ``cause`` is (its reading's title), else ``cause``'s title."""
    for own in result.causes:
        for reading in own.readings():
            if reading.identity == cause.identity:
                return reading.title
    return cause.title


def cases_title(run: RunRecord, cause: Cause, case_ids: list[str]) -> str:
    """The title of ``cause`` true of exactly ``case_ids`` (a feedback item's, a matrix deviation's share of an
    entry's cases): each case's own reading, merged as the verdict merges them (``titles.merged_title``)."""
    results = {r.id: r for r in run.results}
    return merged_title([case_title(results[i], cause) for i in case_ids if i in results]) or cause.title


def _representative(key: str, found: dict[str, Cause], member_cases: dict[tuple[str, str], set[str]]) -> Cause:
    """The cause whose title a mistake's entry shows: the mistake's primary form (the mutant its identity names,
    e.g. the forward of a forward-and-backward mistake) when present, else a mutant before a symptom, then the
    one explaining most cases."""
    if key in found:
        return found[key]
    order = list(found)
    return found[max(order, key=lambda i: (found[i].is_mutant, len(member_cases[key, i]), -order.index(i)))]


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


def _summary(chosen: list[Cause], explained: int, failures: int) -> str:
    if not failures:
        return "no failures"
    if not chosen:
        return f"no likely mistake explains the {_plural(failures, 'failure')}"
    verb = "explains" if len(chosen) == 1 else "explain"
    parts = "; ".join(
        f"{c.title} ({' + '.join((c.id, *(i for i in c.also if not is_symptom_id(i))))}, {_plural(len(c.cases), 'case')})"
        if c.is_mutant
        else f"{c.title} ({_plural(len(c.cases), 'case')})"
        for c in chosen
    )
    return f"{_plural(len(chosen), 'likely mistake')} {verb} {explained} of {_plural(failures, 'failure')}: {parts}"
