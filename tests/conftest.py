"""Fixtures shared by every test: the committed corpus, loaded once. The helper vocabulary is tests/helpers.py."""

from __future__ import annotations

import os

import pytest

ALL_TIERS = "--all-tiers"


@pytest.fixture(scope="session")
def corpus():
    from embconf.corpus.fixtures import load_corpus

    return load_corpus()


@pytest.fixture(scope="session")
def cases_by_id(corpus):
    return corpus.by_id()


def pytest_addoption(parser):
    parser.addoption(
        ALL_TIERS,
        action="store_true",
        help="run the slow tier too: every framework column of docs/matrix.json measured again (CI runs it)",
    )


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: builds a wheel and a fresh virtual environment (minutes; -m 'not slow' skips)"
    )
    config.addinivalue_line(
        "markers", f"slow_tier: re-measures a whole framework column (minutes in all); runs with {ALL_TIERS}"
    )


def pytest_collection_modifyitems(config, items):
    """The slow tier is skipped, with the reason, unless --all-tiers (or EMBCONF_ALL_TIERS=1) asks for it."""
    if config.getoption(ALL_TIERS) or os.environ.get("EMBCONF_ALL_TIERS") == "1":
        return
    skip = pytest.mark.skip(
        reason=f"slow tier: a framework's whole matrix column, measured again ({ALL_TIERS} runs it; CI does)"
    )
    for item in items:
        if "slow_tier" in item.keywords:
            item.add_marker(skip)
