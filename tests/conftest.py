"""Fixtures shared by every test: the committed corpus, loaded once. The helper vocabulary is tests/helpers.py."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def corpus():
    from embconf.corpus.fixtures import load_corpus

    return load_corpus()


@pytest.fixture(scope="session")
def cases_by_id(corpus):
    return corpus.by_id()


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: builds a wheel and a fresh virtual environment (minutes; -m 'not slow' skips)"
    )
