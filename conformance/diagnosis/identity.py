"""One mistake, one identity: a measured symptom that a named catalogue mistake itself shows is that mistake.

A symptom describes what is wrong (a gradient 1/B times the expected); a mutant says why (the position gradient is
averaged over the batch). When the mutant that explains a case, replayed on the case's inputs, shows the very
symptom measured on the implementation (the same key, or one of its readings), the symptom is that mutant's effect:
it takes the mutant's identity (``Cause.mistake``), so the verdict, and every report derived from it, names the
mistake once. A symptom no named mutant shows keeps its own identity: it may be a second mistake.

One missing check is one mistake too (``one_missing_check``): an untyped exception raised from one line on inputs
the spec refuses with different error kinds (PyTorch's internal check for an id out of range, decreasing offsets
and a gradient of the wrong shape), and a forward and its backward that both return a result where the spec
raises one error kind.

One reading is one mistake (``one_identity_per_reading``): a plain reading located differently on different cases
(the rows of the ids that occur once on one, the row of id 0 on another) takes the identity it has where it is not
located, else the first location's: where its differences sit is what a case measured, not a second defect.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from embconf.corpus.fixtures import Case
from embconf.diagnosis.localise import LOCATED
from embconf.judging.compare import compare_outputs
from embconf.model.contract import Status
from embconf.model.outcomes import FAIL, CaseResult
from embconf.model.record import Cause, RunRecord
from embconf.model.symptom import ACCEPTS, PLAIN, UNTYPED, SymptomKey

MAX_MUTANTS = 3  # the best-ranked mutants of a case whose symptoms are compared


def merge_shown(case: Case, inputs: Mapping[str, Any], result: CaseResult, causes: list[Cause]) -> list[Cause]:
    """``causes`` with each symptom that a mutant among them shows on ``case`` given that mutant's identity."""
    mutants = [c for c in causes if c.is_mutant]
    symptoms = [c for c in causes if c.symptom is not None and not c.mistake and c.symptom.family not in PLAIN]
    if not mutants or not symptoms:
        return causes
    outputs = result.outcome == FAIL and result.error_kind is None and result.actual is not None  # not an exception
    shown: dict[str, str] = {}  # symptom key -> the identity of the first mutant (best first) that shows it
    for cause in mutants[:MAX_MUTANTS]:
        if cause.complete and outputs:  # its outputs are the implementation's: every symptom measured is its own
            keys = {key for s in symptoms for key in (s.key, *s.alternatives)}
        else:
            keys = _symptom_keys(cause.key, case, inputs)
        for key in keys:
            shown.setdefault(key, cause.identity)
    out = []
    for cause in causes:
        readings = [cause.key, *cause.alternatives] if not cause.is_mutant and not cause.mistake else []
        owner = next((shown[k] for k in readings if k in shown), None)
        out.append(replace(cause, mistake=owner) if owner else cause)
    return out


def _symptom_keys(mutant_id: str, case: Case, inputs: Mapping[str, Any]) -> set[str]:
    """The keys (and readings) of the symptoms the mutant's own reply shows on the case (none when it raises; a
    result where the spec raises is the acceptance symptom)."""
    from embconf.diagnosis.replay import mutant_reply
    from embconf.diagnosis.symptoms import describe
    from embconf.mutants import get

    if case.operation == "sinusoidal_table":  # a table's symptoms are a fit of its own (costly); its mutants name it
        return set()
    reply = mutant_reply(get(mutant_id), case, inputs)
    if reply.status != Status.OUTPUTS:
        return set()
    mismatches = (
        compare_outputs(case.expected_outputs, case.raw_expected["outputs"], reply.outputs, case.tolerance)
        if case.expected_error is None
        else []
    )
    if not mismatches and case.expected_error is None:
        return set()
    as_result = CaseResult(
        case.id, (), (), case.operation, FAIL, mismatches=list(mismatches), actual=dict(reply.outputs)
    )
    return {key for found in describe(case, inputs, as_result) for key in (found.key, *found.alternatives)}


def one_missing_check(run: RunRecord) -> None:
    """The symptoms of one missing check given one identity (those no mutant owns): the untyped exceptions raised
    on refused inputs that share a line or an (exception, error kind), and a forward's and its backward's accepted
    error kind (``embedding_bag`` for ``embedding_bag_forward`` and ``embedding_bag_backward``)."""
    parent: dict[str, str] = {}

    def root(node: str) -> str:
        while parent.setdefault(node, node) != node:
            node = parent[node]
        return node

    for result in run.results:
        for cause in result.causes:
            nodes = _check_nodes(cause)
            for node in nodes[1:]:
                parent[root(node)] = root(nodes[0])
    keys: dict[str, list[str]] = {}  # a group's root -> the keys of the run in it, first seen first
    for result in run.results:
        for cause in result.causes:
            nodes = _check_nodes(cause)
            if nodes and cause.key not in keys.setdefault(root(nodes[0]), []):
                keys[root(nodes[0])].append(cause.key)
    for result in run.results:
        result.causes = [
            replace(c, mistake=keys[root(nodes[0])][0])
            if (nodes := _check_nodes(c)) and len(keys[root(nodes[0])]) > 1
            else c
            for c in result.causes
        ]


def _check_nodes(cause: Cause) -> list[str]:
    """What ties a symptom to a check: its key, the line that raised, the operation pair and error kind."""
    key = cause.symptom
    if key is None or cause.mistake or len(key.parts) < 2:
        return []
    if key.family == UNTYPED and key.part(-1) != str(None):  # raised on an input the spec refuses
        line = cause.measured.get("line")
        return [cause.key] + ([f"line {key.part(0)} {line}"] if line else [])
    if key.family == ACCEPTS:  # (operation, error kind)
        stem, _, last = key.part(0).rpartition("_")
        pair = stem if last in ("forward", "backward") and stem else key.part(0)
        return [cause.key, f"pair {pair} {key.part(-1)}"]
    return []


def one_identity_per_reading(run: RunRecord) -> None:
    """Every located occurrence of a reading given one identity: the one the reading has on a case where it is
    not located (first seen), else its first location's."""
    settled: dict[str, str] = {}  # reading key -> its identity in the run
    for located in (False, True):
        for result in run.results:
            for cause in result.causes:
                if not cause.is_mutant and cause.symptom is not None and _located(cause) == located:
                    settled.setdefault(cause.key, cause.identity)
    for result in run.results:
        result.causes = [
            replace(c, mistake="" if settled[c.key] == c.id else settled[c.key])
            if not c.is_mutant and _located(c) and c.key in settled
            else c
            for c in result.causes
        ]


def _located(cause: Cause) -> bool:
    return SymptomKey.parse(cause.mistake).family == LOCATED
