"""The suite's own YAML reader (conformance/untrusted/read.py) reads every scalar as the safe loader does: its fast
path for plain numbers may not change a value or a type."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from helpers import ROOT
from hypothesis import given
from hypothesis import strategies as st

from embconf.untrusted.read import load_yaml

NUMBERS_AND_NEAR_MISSES = st.one_of(
    st.floats(allow_nan=False).map(repr),
    st.integers().map(str),
    st.from_regex(r"[-+]?[0-9_]{0,4}\.?[0-9_]{0,4}([eE][-+]?[0-9]{1,3})?", fullmatch=True),
    st.sampled_from(["1e5", "1.", ".5", "010", "0x1F", "0o7", "1_000", "+1.5", "-0", ".inf", "-.inf", ".nan", "1:30"]),
)


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and a != a:
        return b != b
    return type(a) is type(b) and a == b


@given(NUMBERS_AND_NEAR_MISSES)
def test_a_plain_scalar_reads_as_the_safe_loader_reads_it(text):
    assert _same(load_yaml(text, "probe"), yaml.safe_load(text))


@pytest.mark.parametrize("path", sorted((ROOT / "fixtures").glob("*.yaml")), ids=lambda p: Path(p).name)
def test_every_shipped_fixture_reads_as_the_safe_loader_reads_it(path):
    raw = path.read_bytes()
    assert load_yaml(raw, path.name) == yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
