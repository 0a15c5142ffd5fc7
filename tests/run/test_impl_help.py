"""The ``--impl`` help of every command that names an implementation lists every kind the adapter registry
knows (it is derived from the registry: a kind added there is listed), each that needs a target as KIND:TARGET."""

from __future__ import annotations

import argparse
import re

import pytest

from embconf.adapters import BUILTIN
from embconf.cli import build_parser


@pytest.mark.parametrize("command", ["run", "matrix", "bench"])
def test_the_impl_help_names_every_kind_of_the_registry(command):
    parser = build_parser([command])
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    help_text = " ".join(next(a.help for a in sub._actions if "--impl" in a.option_strings).split())
    named = set(re.findall(r"\b(\w+)(?::TARGET)?(?=[,;])", help_text))
    assert set(BUILTIN) <= named, sorted(set(BUILTIN) - named)
    for kind, (_, _, needs_target) in BUILTIN.items():
        assert (f"{kind}:TARGET" in help_text) == needs_target, kind
