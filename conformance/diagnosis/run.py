"""Diagnosing a run: every failure's causes (catalogue matches, then symptoms), ranked, and the verdict."""

from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Iterable, Optional

from embconf.corpus.fixtures import Case
from embconf.diagnosis.claims import disciplined
from embconf.diagnosis.compose import composes
from embconf.diagnosis.conditions import conditional_gradients, crash_conditions, off_by_one
from embconf.diagnosis.identity import merge_shown, one_identity_per_reading
from embconf.diagnosis.localise import said_by_mistakes
from embconf.diagnosis.localise_cases import located_cases
from embconf.diagnosis.one_departure import frequency_departure, unknown_pos_encoding
from embconf.diagnosis.replay import Replay, diagnose, fails_passed_case, mutant_reply, replay
from embconf.diagnosis.state import carried, dynamic_state, one_state, state_carried
from embconf.diagnosis.suggested import suggest_conventions
from embconf.diagnosis.symptoms import describe, history_symptom
from embconf.diagnosis.tinytorch_words import speak_tinytorch
from embconf.diagnosis.verdict import run_verdict
from embconf.judging.alone import NOT_MEASURED, Alone
from embconf.model.contract import Reply
from embconf.model.outcomes import DIAGNOSED, FAIL, PASS, CaseResult
from embconf.model.record import Cause, Diagnosis, RunRecord
from embconf.model.symptom import STALE_BUFFER

if TYPE_CHECKING:
    from embconf.mutants.base import Mutant

log = logging.getLogger("embconf.diagnosis")
BUDGET_S = 120.0  # a run's diagnosis stops after this long; later failures stay undiagnosed


def diagnose_run(
    record: RunRecord, cases: Iterable[Case], budget_s: float = BUDGET_S, alone: Alone = NOT_MEASURED
) -> Diagnosis:
    """The causes of every failing or erroring result of ``record``, ranked, and the run's verdict. ``record`` is
    read, never written: the causes are worked out on a copy of its results and returned, and the session writes
    them into the record. A case that passed when run again ``alone`` is state carried across calls (``state``):
    no evidence for or against any mistake."""
    run = replace(record, results=[replace(result, causes=list(result.causes)) for result in record.results])
    if not any(result.outcome in DIAGNOSED for result in run.results):
        return Diagnosis({}, run_verdict(run))
    decided = {result.id: result.call for result in run.results}  # a case of calls: judged on its deciding call
    by_id = {case.id: case.call_numbered(decided.get(case.id, 0)) for case in cases}
    deadline = time.monotonic() + budget_s
    found: dict[str, tuple[Replay, list[Cause]]] = {}
    earlier: list[tuple[Case, CaseResult]] = []
    for result in run.results:
        case = by_id.get(result.id)
        if case is None:
            continue
        if result.outcome in DIAGNOSED:
            if time.monotonic() >= deadline:
                log.warning("no diagnosis for %s: the diagnosis time budget (%.0f s) is spent", result.id, budget_s)
            else:
                measured = _measure(case, result, earlier)
                if measured is not None:
                    found[result.id] = measured
        if result.actual is not None:
            earlier.append((case, result))
    leftovers = {i: found.pop(i)[1] for i in carried(run, alone) if i in found}
    _rank(run, found, by_id)
    try:
        conditional_gradients(run, by_id)
        crash_conditions(run, by_id)
        off_by_one(run, by_id)
    except Exception as exc:  # as above: never into the run
        log.warning("no condition analysis: %s: %s", type(exc).__name__, exc)
    try:
        disciplined(run, by_id)
        said_by_mistakes(run)
    except Exception as exc:  # as above: never into the run
        log.warning("no claim discipline: %s: %s", type(exc).__name__, exc)
    try:
        state_carried(run, by_id, alone, leftovers)
        dynamic_state(run, by_id)
        one_state(run)
        suggest_conventions(run, by_id)
    except Exception as exc:  # as above: never into the run
        log.warning("no state analysis: %s: %s", type(exc).__name__, exc)
    try:
        located_cases(run, by_id)
        one_identity_per_reading(run)
        frequency_departure(run, by_id)
        unknown_pos_encoding(run, by_id)
    except Exception as exc:  # as above: never into the run
        log.warning("no case localisation: %s: %s", type(exc).__name__, exc)
    try:
        speak_tinytorch(run, by_id)
    except Exception as exc:  # as above: never into the run
        log.warning("no TinyTorch words: %s: %s", type(exc).__name__, exc)
    return Diagnosis({result.id: tuple(result.causes) for result in run.results if result.causes}, run_verdict(run))


def diagnose_case(case: Case, result: CaseResult) -> list[Cause]:
    """One result's causes on its own (no run context): catalogue matches, then symptoms."""
    measured = _measure(case.call_numbered(result.call), result, [])
    if measured is None:
        return []
    matches, symptoms = measured
    return matches.causes() + symptoms


def _measure(
    case: Case, result: CaseResult, earlier: list[tuple[Case, CaseResult]]
) -> Optional[tuple[Replay, list[Cause]]]:
    """(catalogue replay, symptoms) of one result; None when diagnosing it failed (logged)."""
    try:
        inputs = case.inputs()
        matches = replay(case, result, inputs)
        symptoms = describe(case, inputs, result)
        if result.outcome == FAIL and not any(_family(s) == STALE_BUFFER for s in symptoms):
            symptoms = history_symptom(case, result, [*_earlier_calls(case), *reversed(earlier)]) + symptoms
        return matches, symptoms
    except Exception as exc:  # untrusted outputs must never break the run
        log.warning("no diagnosis for %s: %s: %s", result.id, type(exc).__name__, exc)
        return None


def _family(cause: Cause) -> str:
    key = cause.symptom
    return key.family if key is not None else ""


def _earlier_calls(case: Case) -> list[tuple[Case, CaseResult]]:
    """The calls made before ``case`` on its instance (a call of a case of calls), latest first, each with its
    golden as its answer: what a correct implementation returned to them."""
    return [
        (
            call,
            CaseResult(call.id, call.requirements, call.features, call.operation, PASS, actual=call.expected_outputs),
        )
        for call in reversed(case.before)
    ]


PASSED_CHECKS = 64  # passed cases a candidate mutant is replayed on, at most


def _rank(run: RunRecord, found: dict[str, tuple[Replay, list[Cause]]], by_id: dict[str, Case]) -> None:
    """Drop contradicted mutants (they fail a failing case differently, or fail a case the implementation
    passed), order the rest by the run's support, symptoms after them."""
    try:
        _pair_composed(found, by_id, run)
    except Exception as exc:  # untrusted outputs must never break the run
        log.warning("no pair analysis: %s: %s", type(exc).__name__, exc)
    contradicted = _contradicted(found.values())
    support = Counter(m.id for replayed, _ in found.values() for m in replayed.matches + replayed.partial)
    candidates = {
        m.id: m
        for replayed, _ in found.values()
        for m in replayed.matches + replayed.partial
        if m.id not in contradicted
    }
    contradicted |= _contradicted_by_passes(run, by_id, list(candidates.values()))
    for result in run.results:
        if result.id not in found:
            continue
        replayed, symptoms = found[result.id]
        ruled_out = contradicted | _narrower_than_measured(replayed, contradicted)
        result.causes = _identified(
            by_id[result.id], result, replayed.causes(ruled_out, _ranking(support, replayed)) + symptoms
        )


def _narrower_than_measured(replayed: Replay, ruled_out: set[str]) -> set[str]:
    """The mutants evading by design that match a case a broader mistake the run leaves standing explains too. An
    evading mutant's sentence narrows its mistake to a combination of boundaries (bag.max_empty_unpadded's 'unless
    padding_idx is given'): the run has measured that narrowing only when a case it passed rules out each broader
    mistake (bag.empty_max_minus_inf, by a padded empty bag that passed); until then the broader one is said."""
    matched = replayed.matches + replayed.partial
    if not any(m.evades for m in matched) or all(m.evades or m.id in ruled_out for m in replayed.matches):
        return set()
    return {m.id for m in matched if m.evades}


def _identified(case: Case, result: CaseResult, causes: list[Cause]) -> list[Cause]:
    """The causes, each symptom that a mutant among them shows given the mutant's identity (never raising)."""
    try:
        return merge_shown(case, case.inputs(), result, causes)
    except Exception as exc:  # untrusted context: never into the run
        log.warning("no identity for %s: %s: %s", result.id, type(exc).__name__, exc)
        return causes


def _contradicted(found: Iterable[tuple[Replay, list[Cause]]]) -> set[str]:
    """The mutants the run rules out: contradicted on an operation they replace, or only through composed
    operations (a layer built on them) when they explain no case of their own operation: a layer case can fail
    through a second mistake in the layer itself."""
    replays = [replayed for replayed, _ in found]
    direct = set().union(*(r.contradicted for r in replays)) if replays else set()
    indirect = set().union(*(r.indirect_against for r in replays)) if replays else set()
    shown = set().union(*(r.direct for r in replays)) if replays else set()
    return direct | (indirect - shown)


def _pair_composed(found: dict[str, tuple[Replay, list[Cause]]], by_id: dict[str, Case], run: RunRecord) -> None:
    """A mistake seen in the run that a case contradicts is one of two on it when it and another mistake (seen in
    the run, or one this case contradicts as well), added or multiplied together, give the implementation's
    outputs (compose.composes): both are then partial there."""
    from embconf.mutants import get

    seen = {m.id: m for replayed, _ in found.values() for m in replayed.matches + replayed.partial}
    identities = {m.mistake or m.id for m in seen.values()}
    results = {r.id: r for r in run.results}
    for case_id, (replayed, _) in found.items():
        case = by_id.get(case_id)
        if case is None or replayed.matches:
            continue
        against = replayed.contradicted | replayed.indirect_against
        # a mistake this case contradicts, seen nowhere else, may be the other term: the form of a mistake the run
        # shows in another operation, or on a small case with several outputs (where two mistakes can show in
        # different outputs) any of a few
        unseen = [get(i) for i in sorted(replayed.contradicted - set(seen))]
        others = [m for m in unseen if m.mistake and m.mistake in identities]
        if _small(case) and len(case.expected_outputs) > 1:
            others += [m for m in unseen if m not in others][:MAX_OTHERS]
        suspects = [seen[i] for i in sorted(against & set(seen))] + others
        if not suspects:
            continue
        partners = [m for m in seen.values() if m.covers(case.operation)] + others
        replies = _Replies(case)
        for suspect in suspects:
            for partner in partners:  # every mistake that composes with it: a first one must not rule out a second
                if partner.id != suspect.id and composes(
                    case, replies.of(suspect), replies.of(partner), results[case_id]
                ):
                    replayed.contradicted -= {suspect.id, partner.id}
                    replayed.indirect_against -= {suspect.id, partner.id}
                    replayed.partial += [m for m in (suspect, partner) if m not in replayed.partial]


class _Replies:
    """The mutants' replies on one case, each computed once, when first asked for."""

    def __init__(self, case: Case) -> None:
        self.case, self.inputs = case, case.inputs()
        self.replies: dict[str, Reply] = {}

    def of(self, mutant: Mutant) -> Reply:
        if mutant.id not in self.replies:
            self.replies[mutant.id] = mutant_reply(mutant, self.case, self.inputs)
        return self.replies[mutant.id]


SMALL_OUTPUTS = 4096  # elements: cases whose outputs are this small are searched for any pair of mistakes
MAX_OTHERS = 12  # mistakes contradicted on a case tried as the other term of a pair, at most


def _small(case: Case) -> bool:
    return sum(int(getattr(v, "size", 1)) for v in case.expected_outputs.values()) <= SMALL_OUTPUTS


def _ranking(support: Counter, replayed: Replay) -> Callable[[Mutant], tuple[int, int]]:
    """Most support in the run first, then the order they matched this case in."""
    order = {m.id: i for i, m in enumerate(replayed.matches + replayed.partial)}
    return lambda m: (-support[m.id], order[m.id])


def _contradicted_by_passes(run: RunRecord, by_id: dict[str, Case], candidates: list) -> set[str]:
    """The candidate mutants that fail some case the implementation passed (bounded, never raising)."""
    passed = [by_id[r.id] for r in run.results if r.outcome == PASS and r.id in by_id]
    out: set[str] = set()
    for mutant in candidates:
        try:
            covered = [case for case in passed if mutant.covers(case.operation) and case.expected_error is None]
            # calls on one instance first: a mistake in state kept between calls shows only there (section 9.7)
            checked = sorted(covered, key=lambda case: not case.before)[:PASSED_CHECKS]
            if any(fails_passed_case(mutant, case) for case in checked):
                out.add(mutant.id)
        except Exception as exc:  # untrusted context: never into the run
            log.warning("no pass check for %s: %s: %s", mutant.id, type(exc).__name__, exc)
    return out


__all__ = ["diagnose", "diagnose_case", "diagnose_run", "run_verdict"]
