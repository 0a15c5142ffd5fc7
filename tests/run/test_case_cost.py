"""What a run pays once rather than per case (the cost of a case is benchmarks/bench_startup.py's): the shipped
corpus's structure is not checked case by case again, and whether a case applies is worked out once per operation
and features however often a run asks."""

from __future__ import annotations

import shutil

from embconf.corpus import fixtures
from embconf.corpus.fixtures import load_corpus
from embconf.model.contract import Capabilities
from embconf.model.vocabulary import FIXTURES_DIR


def test_the_shipped_corpus_is_not_checked_case_by_case_again_and_any_other_file_is(monkeypatch, tmp_path):
    checked: list[str] = []
    original = fixtures._case_problem
    monkeypatch.setattr(fixtures, "_case_problem", lambda case: checked.append(case["id"]) or original(case))
    assert len(load_corpus().cases) > 500 and checked == []  # read from the JSON forms as shipped
    copy = tmp_path / "fixtures"
    shutil.copytree(FIXTURES_DIR, copy)
    with (copy / "memory.json").open("a", encoding="utf-8") as form:
        form.write("\n")  # no longer the shipped form: memory.yaml is read, and each of its cases checked
    cases = load_corpus(copy).cases
    assert checked and set(checked) == {case.id for case in cases if case.source == "memory.yaml"}


def test_whether_a_case_applies_is_worked_out_once_per_operation_and_features(monkeypatch):
    caps = Capabilities(frozenset({"embedding_forward"}), frozenset({"float64"}))
    asked: list[tuple] = []
    original = Capabilities._applies
    monkeypatch.setattr(Capabilities, "_applies", lambda self, *args: asked.append(args) or original(self, *args))
    for _ in range(3):
        assert caps.applies("embedding_forward", ["float64"]) is None
        assert "needs optional feature(s) float16" in caps.applies("embedding_forward", ("float16",))
        assert "does not provide embedding_backward" in caps.applies("embedding_backward", [])
    assert len(asked) == 3  # three questions, each answered once
    assert Capabilities(frozenset({"embedding_forward"})).applies("embedding_forward", ["float64"])  # its own answers
