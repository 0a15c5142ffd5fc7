"""Conventions suggested when they explain the failures: an undeclared convention whose computed expectations are
the outputs on every failing case it changes is said, with the declaration as the implementation writes it; one
that answers only some of them says which, and offers no declaration."""

from __future__ import annotations

import pytest
from helpers import IMPLS

from embconf.corpus.conventions import COMPUTERS
from embconf.corpus.select import select
from embconf.judging.kept import compare_kept
from embconf.model.rope_conventions import RopeConvention
from embconf.session import RunOptions, Session

EVERY = "on every failing case it changes"
MODULE_DECLARATION = 'EMBCONF_ROPE_CONVENTIONS = ["negative_sense"] in the module'


def _run(corpus, impl: str, pattern: str = "rope.forward.*"):
    return Session.open(impl, select(corpus.cases, [pattern]), RunOptions()).run()


def _answered_under_negative_sense(corpus, result) -> bool:
    """The predicate, checked again here: the case computed under the convention expects what was returned."""
    case = corpus.by_id()[result.id]
    computed = COMPUTERS["rope"](frozenset({RopeConvention.NEGATIVE_SENSE}), [case])[0]
    return not compare_kept(computed.expected_outputs, result.actual, computed.tolerance)


@pytest.mark.parametrize(
    ("impl", "declaration"),
    [
        (f"functions:{IMPLS / 'rope_negative_sense.py'}", MODULE_DECLARATION),
        ("mutant:rope.rotate_half_sign", '"rope_conventions": ["negative_sense"] in the capabilities'),
    ],
)
def test_a_convention_that_answers_every_failure_is_said_with_its_declaration(corpus, impl, declaration):
    record = _run(corpus, impl)
    failing = [r for r in record.results if r.outcome.value in ("fail", "error")]
    entry = next(c for c in record.verdict.causes if EVERY in c.title)
    assert declaration in entry.title and f"({len(failing)})" in entry.title
    assert set(entry.cases) == {r.id for r in failing} and len(record.verdict.causes) == 1
    assert all(_answered_under_negative_sense(corpus, r) for r in failing)


def test_a_sinusoid_profile_that_answers_every_failure_is_said_with_its_module_attribute(corpus):
    record = _run(corpus, f"functions:{IMPLS / 'sinusoid_concatenated_undeclared.py'}", "sin.*")
    failing = [r for r in record.results if r.outcome.value in ("fail", "error")]
    (entry,) = record.verdict.causes
    assert EVERY in entry.title and 'EMBCONF_SINUSOID_CONVENTION = "concatenated" in the module' in entry.title
    assert set(entry.cases) == {r.id for r in failing} and len(failing) > 3


def test_a_convention_that_answers_some_failures_says_which_and_offers_no_declaration(corpus):
    record = _run(corpus, f"functions:{IMPLS / 'rope_negative_sense_unscaled.py'}")
    failing = {r.id: r for r in record.results if r.outcome.value in ("fail", "error")}
    said = [c for r in failing.values() for c in r.causes]
    assert not any(EVERY in c.title or "rope_conventions" in c.hint for c in said)
    assert not any(EVERY in c.title for c in record.verdict.causes)
    notes = [c.hint for c in said if "failing cases it changes" in c.hint]
    assert notes and all("declaring it would leave those failing" in note for note in notes)
    answered = {i for i, r in failing.items() if _answered_under_negative_sense(corpus, r)}
    assert answered and answered != set(failing)
    note = notes[0]
    assert f"on {len(answered)} of the {len(failing)} failing cases" in note
    named, others = note.split(" failing cases it changes (")[1].split(": declaring")[0].split("), not on ")
    assert set(_ids(named)) <= answered and set(_ids(others)) <= set(failing) - answered
    assert any("llama3" in i for i in set(failing) - answered)


def _ids(listed: str) -> list[str]:
    return [i for i in listed.split(" and ")[0].split(", ") if i]
