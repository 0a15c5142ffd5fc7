"""Typed to the edges: a symptom's identity is a :class:`SymptomKey` (its family and parts) read back through its
fields, and ``--impl`` is an :class:`Impl` parsed once; no code reads either back by slicing its string (a prefix,
a ``split(":")``), so a new family or a target holding ``:`` cannot be misread; and no code builds a symptom key as
text (an f-string, a concatenation): each is made by ``SymptomKey.of``, whose rendering is the one there is."""

from __future__ import annotations

import ast

import pytest
from helpers import ROOT, STUDENTS

from embconf.model.impl import NO_IMPL, Impl
from embconf.model.symptom import FAMILIES, NO_GRADIENT, SEPARATOR, SymptomKey

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


KEYS = ("key", "prefix")  # names of a symptom key a part is added to (``f"{key}:more"``)


def _leads(node: ast.AST) -> bool:
    """A text that starts as a symptom key does: a family and the separator."""
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and any(node.value.startswith(family + SEPARATOR) for family in FAMILIES)
    )


def _a_key(node: ast.AST) -> bool:
    return _named(node).lower().endswith(KEYS)


def _separated(node: ast.AST) -> bool:
    """A part after the separator (``:more``), not prose after a colon (``: more``)."""
    text = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""
    return text.startswith(SEPARATOR) and not text.startswith(SEPARATOR + " ")


def _leftmost(node: ast.AST) -> ast.AST:
    while isinstance(node, ast.BinOp):
        node = node.left
    return node


def _builds_a_key(node: ast.AST) -> bool:
    """Whether ``node`` builds a symptom key as text: an f-string, ``+``, ``%``, ``.format`` or a join that starts
    with a family and the separator, or that adds a separated part to a key (``f"{key}:more"``, ``key + ":more"``)."""
    if isinstance(node, ast.JoinedStr) and node.values:
        first, second = node.values[0], node.values[1] if len(node.values) > 1 else None
        return _leads(first) or (
            isinstance(first, ast.FormattedValue)
            and first.conversion == -1  # a key said with !r is no key
            and _a_key(first.value)
            and second is not None
            and _separated(second)
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        return _leads(_leftmost(node)) or (
            isinstance(node.op, ast.Add) and _a_key(node.left) and _separated(node.right)
        )
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
        if node.func.attr == "format":
            return _leads(node.func.value)
        parts = node.args[0]
        return (
            node.func.attr == "join"
            and (_named(node.func.value) == "SEPARATOR" or getattr(node.func.value, "value", None) == SEPARATOR)
            and isinstance(parts, (ast.List, ast.Tuple))
            and bool(parts.elts)
            and isinstance(parts.elts[0], ast.Constant)
            and parts.elts[0].value in FAMILIES
        )
    return False


def built_keys(source: str) -> list[int]:
    """The lines of ``source`` that build a symptom key as text."""
    return sorted({node.lineno for node in ast.walk(ast.parse(source)) if _builds_a_key(node)})


def test_no_code_builds_a_symptom_key_as_text():
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in (ROOT / "conformance").rglob("*.py")
        if path.name != "symptom.py"  # the one rendering (SymptomKey.__str__)
        for line in built_keys(path.read_text(encoding="utf-8"))
    ]
    assert found == []


@pytest.mark.parametrize(
    "line",
    [
        'key = f"rope:frequencies:{op}"',
        'symptom(f"dtype:{op}:{got}->{want}", text)',
        'alternatives = {f"token_scale:{n}": title for n in names}',
        'symptom(f"{key}:every_band", text)',
        'symptom(f"{prefix}:{n}", text)',
        'key = "sinusoid:" + ";".join(words)',
        'key = "zero_rows:" + op + ":" + name',
        'key = prefix + ":2"',
        'key = "accepts:%s:%s" % (op, kind)',
        'key = "shape:{}".format(op)',
        'key = ":".join(["none", op, name])',
        'key = SEPARATOR.join(("factor", op, name))',
    ],
)
def test_the_check_finds_a_key_built_as_text(line):
    assert built_keys(f"def detect(op, kind, got, want, n, names, words, name, key, prefix, text):\n    {line}\n") == [
        2
    ]


@pytest.mark.parametrize(
    "line",
    [
        "key = SymptomKey.of(ROPE, 'frequencies', op)",
        "key = SymptomKey.of(FACTOR, *prefix.parts, n)",
        'impl = f"tinytorch:{path}"',
        'said = f"{shown}: {text}"',
        'said = ": ".join(words)',
    ],
)
def test_the_check_lets_a_typed_key_and_other_text_be(line):
    assert built_keys(f"def detect(op, path, shown, text, words, prefix, n):\n    {line}\n") == []


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
    assert Impl.read(str(impl)) == impl and Impl.read("") == NO_IMPL and not NO_IMPL and str(NO_IMPL) == ""
