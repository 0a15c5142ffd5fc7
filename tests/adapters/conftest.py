"""Fixtures of the adapter tests: a test that loads its own modules (files in tmp_path, a student's package)
leaves sys.path and sys.modules as it found them."""

from __future__ import annotations

import sys

import pytest


@pytest.fixture
def isolated_imports(monkeypatch):
    """Undo what loading a test's own modules does to sys.path and sys.modules."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name.startswith(("embconf_target_", "embconf_shadow_pkg", "helper_for_plain")):
            del sys.modules[name]
