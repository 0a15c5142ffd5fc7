"""The fast reader of the fixture writer's YAML subset (conformance/untrusted/emitted.py): the identical value for
every shipped fixture file, anything outside the subset left to the full safe reader, and the same value as the
safe loader for what the writer emits and for near misses in its forms."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import ROOT, identical
from hypothesis import given, settings
from hypothesis import strategies as st

from embconf.reference.emit import dump_yaml
from embconf.untrusted.emitted import read_emitted
from embconf.untrusted.read import MAX_DEPTH, InputError, load_yaml, read_yaml_events

SAFE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@pytest.mark.parametrize("path", sorted((ROOT / "fixtures").glob("*.yaml")), ids=lambda p: Path(p).name)
def test_every_shipped_fixture_file_takes_the_fast_path_and_reads_identically(path):
    raw = path.read_bytes()
    fast = read_emitted(raw.decode("utf-8"), MAX_DEPTH)
    assert fast is not None, f"{path.name} left the emitted subset: the fast path no longer applies"
    assert identical(fast, read_yaml_events(raw, path.name))
    assert identical(fast, yaml.load(raw, Loader=SAFE))


OUTSIDE = {
    "anchor and alias": "a: &x [1]\nb: *x\n",
    "tag": "a: !!str 1\n",
    "comment after the header": "a: 1\n# later\nb: 2\n",
    "trailing comment": "a: 1 # one\n",
    "exponent without a dot": "a: [1e+05, 2]\n",
    "exponent without a sign": "a: [1.0e5]\n",
    "octal": "a: [010]\n",
    "bool key": "yes: 1\n",
    "bool-like key": "On: 1\n",
    "numeric key": "1: a\n",
    "crlf": "a: 1\r\nb: 2\r\n",
    "tab": "a:\n\tb: 1\n",
    "no final newline": "a: 1",
    "surrogate escape": 'a: "\\ud83d\\ude00"\n',
    "slash escape": 'a: "\\/"\n',
    "escape in a list": 'a: ["\\n"]\n',
    "non-ASCII": 'a: "é"\n',
    "bare NaN": "a: [NaN]\n",
    "yaml infinity": "a: .inf\n",
    "nested list": "a: [[1]]\n",
    "flow mapping": "a: [{b: 1}]\n",
    "block scalar": "a: |\n  text\n",
    "plain string": "a: text\n",
    "duplicate key": "a: 1\na: 2\n",
    "odd indent": "a:\n   b: 1\n",
    "separator": "a: [1,2]\n",
    "empty value": "a:\n",
    "top-level list": "- a: 1\n",
    "document marker": "---\na: 1\n",
    "odd quotes": 'a: ["x]\nb: [y"]\n',
    "deep": "".join(f"{'  ' * i}k:\n" for i in range(MAX_DEPTH + 1)) + f"{'  ' * (MAX_DEPTH + 1)}k: 1\n",
}


@pytest.mark.parametrize("text", OUTSIDE.values(), ids=OUTSIDE.keys())
def test_anything_outside_the_subset_is_left_to_the_full_reader(text):
    assert read_emitted(text, MAX_DEPTH) is None
    try:
        expected: Any = read_yaml_events(text, "probe")
    except InputError as exc:
        expected = str(exc)
    try:
        got: Any = load_yaml(text, "probe")
    except InputError as exc:
        got = str(exc)
    assert identical(got, expected)


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(st.characters(max_codepoint=0xFFFF, exclude_categories=("Cs",)), max_size=8),  # the writer escapes
    # astral characters as surrogate pairs, which YAML does not read: the fixtures hold none
)
KEYS = st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True)
VALUES = st.recursive(
    st.one_of(SCALARS, st.lists(SCALARS, max_size=4)),
    lambda inner: st.one_of(
        st.dictionaries(KEYS, inner, min_size=1, max_size=3),
        st.lists(st.dictionaries(KEYS, inner, min_size=1, max_size=3), min_size=1, max_size=3),
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(KEYS, VALUES, min_size=1, max_size=4))
def test_what_the_writer_emits_reads_as_the_safe_loader_reads_it(document):
    text = dump_yaml(document, "a header")
    assert identical(load_yaml(text, "probe"), yaml.load(text, Loader=SAFE))


NEAR_MISSES = st.one_of(
    st.from_regex(r"[-+]?[0-9_]{0,4}\.?[0-9_]{0,4}([eE][-+]?[0-9]{1,3})?", fullmatch=True),
    st.sampled_from(["1e5", "1.", ".5", "010", "0x1F", "1_000", "+1.5", "-0", ".inf", ".nan", "NaN", "Infinity"]),
    st.sampled_from(['"a"', '"a, b"', '"[x]"', '"\\t"', "true", "True", "null", "~", "y", "no", "[]", "{}"]),
)


@given(NEAR_MISSES, NEAR_MISSES)
def test_near_misses_as_values_and_in_lists_read_as_the_safe_loader_reads_them(first, second):
    for text in (f"v: {first}\n", f"v: [{first}, {second}]\n", f"v:\n- w: {first}\n  x: [{second}]\n"):
        try:
            expected: Any = yaml.load(text, Loader=SAFE)
        except yaml.YAMLError:
            continue  # not YAML at all: the full reader's one-line error (tests/untrusted/test_read.py)
        if "<<" in text or not isinstance(expected, dict):
            continue
        try:
            got: Any = load_yaml(text, "probe")
        except InputError:
            continue  # refused by the suite's rules (a tag, an alias): never by the fast path, which reads or declines
        assert identical(got, expected), text


def test_every_form_the_writer_uses_takes_the_fast_path():
    document = {
        "format_version": 1,
        "name": "a, b: [c] # d",
        "cases": [
            {"id": "x", "empty": {}, "none": [], "flags": [True, False, None], "nested": {"deeper": {"n": -0.0}}},
            {"data": [1.5, -2.0e-30, 3.0e300, 0.0, -0.0, 7, -8, "nan", "-inf"], "shape": [2, 3]},
        ],
    }
    text = dump_yaml(document, "header\n\nlines")
    fast = read_emitted(text, MAX_DEPTH)
    assert fast is not None and identical(fast, yaml.load(text, Loader=SAFE)) and identical(fast, document)


def test_reading_the_shipped_fixtures_imports_no_yaml_library():
    """PyYAML is left unimported while the shipped fixtures load; a file outside the subset still reads, through it."""
    probe = (
        "import sys\n"
        "from embconf.corpus.fixtures import load_corpus\n"
        "from embconf.untrusted.read import load_yaml\n"
        "assert len(load_corpus().cases) > 300\n"
        "before = 'yaml' in sys.modules\n"
        "assert load_yaml('a: 1\\nb: yes\\n', 'probe') == {'a': 1, 'b': True}\n"
        "print(before, 'yaml' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["False", "True"], done.stdout + done.stderr
