"""Typed to the edges: a symptom's identity is a :class:`SymptomKey` (its family and parts) read back through its
fields, and ``--impl`` is an :class:`Impl` parsed once; no code reads either back by slicing its string (a prefix,
a ``split(":")``), so a new family or a target holding ``:`` cannot be misread."""

from __future__ import annotations

import ast

import pytest
from helpers import ROOT, STUDENTS

from embconf.model.impl import Impl
from embconf.model.symptom import NO_GRADIENT, SymptomKey

STRING_READS = {"startswith", "endswith", "split", "rsplit", "partition", "rpartition", "removeprefix"}
IDENTITIES = {"key", "mistake"}  # a cause's symptom key and its mistake's identity


def _string_reads(identity) -> list[str]:
    """Where a string method that reads a prefix or splits is called on something ``identity`` accepts."""
    found = []
    for folder in ("conformance", "reference"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in STRING_READS
                    and identity(path, node.func.value)
                ):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def _named(node: ast.AST) -> str:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def test_no_code_reads_a_symptom_identity_by_slicing_its_text():
    assert _string_reads(lambda path, value: _named(value) in IDENTITIES) == []


def test_no_code_but_impl_splits_an_impl_string():
    assert _string_reads(lambda path, value: "impl" in _named(value).lower() and path.name != "impl.py") == []


@pytest.mark.parametrize("text", ["no_gradient:embedding_backward:grad_weight", "no_gradient:token_table", "rope:x:"])
def test_a_key_has_one_rendering_and_one_reading(text):
    key = SymptomKey.parse(text)
    assert str(key) == text and SymptomKey.parse(str(key)) == key and SymptomKey.parse(key) is key


def test_a_missing_gradient_is_a_typed_key_with_its_operation_and_output(corpus):
    from embconf.adapters.tinytorch import TinyTorchAdapter
    from embconf.corpus.select import select
    from embconf.session import run

    cases = select(corpus.cases, ["pos.backward.*"])
    record = run(TinyTorchAdapter(str(STUDENTS / "detached_positions.py")), cases)
    keys = [c.symptom for r in record.results for c in r.causes if c.symptom is not None]
    assert keys and all(k == SymptomKey(NO_GRADIENT, ("learned_positions_backward", "grad_table")) for k in keys)
    assert {c.mistake for r in record.results for c in r.causes} == {str(SymptomKey.of(NO_GRADIENT, "position_table"))}


def test_an_impl_keeps_a_target_that_holds_a_colon():
    impl = Impl.parse("subprocess:python peer.py --url http://x:1")
    assert (impl.kind, impl.target) == ("subprocess", "python peer.py --url http://x:1")
    assert Impl.kind_of(str(impl)) == "subprocess" and Impl.kind_of("") == ""
