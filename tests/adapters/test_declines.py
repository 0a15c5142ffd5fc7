"""Declines are visible (spec section 11): ``embconf.Decline`` declines a case from any Python implementation, a
``NotImplementedError`` raised inside a framework the module calls is an ``error``, not a decline, and declines
within the declared capabilities are counted on the summary line and in the JSON report and fail ``--strict``."""

from __future__ import annotations

import textwrap

from helpers import assert_exit, assert_outcome, run_report

from embconf.adapters import create_adapter
from embconf.judging.cases import run_case
from embconf.model.outcomes import ERROR, NOT_APPLICABLE, PASS

CASES = ["lookup.forward.ids_3d", "lookup.forward.module_example"]

DECLINES = """
import numpy as np
import embconf

def embedding_forward(weight, ids):
    if ids.ndim > 2:
        raise embconf.Decline("ids of rank 3 and above are not supported")
    return weight[ids]
"""

# a module whose framework raises NotImplementedError from its own code for a claimed case: a failure, not a choice
FRAMEWORK = """
def gather(weight, ids):
    if ids.ndim > 2:
        raise NotImplementedError("rank > 2 gather is not implemented in this kernel")
    return weight[ids]
"""
CALLS_FRAMEWORK = """
import fakeframework

def embedding_forward(weight, ids):
    return fakeframework.gather(weight, ids)
"""

# the compatibility rule: a NotImplementedError raised by the module's own code (a helper in its file) declines
OWN_HELPER = """
def _check(ids):
    if ids.ndim > 2:
        raise NotImplementedError("ids of rank 3 and above are not supported")

def embedding_forward(weight, ids):
    _check(ids)
    return weight[ids]
"""


def _module(tmp_path, name, source):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return str(path)


def _outcomes(tmp_path, corpus, name, source):
    adapter = create_adapter("functions:" + _module(tmp_path, name, source))
    try:
        by_id = {case.id: case for case in corpus.cases}
        return {case_id: run_case(adapter, by_id[case_id]) for case_id in CASES}
    finally:
        adapter.close()


def test_embconf_decline_declines_the_case_with_its_reason(tmp_path, corpus):
    results = _outcomes(tmp_path, corpus, "declines", DECLINES)
    declined = results["lookup.forward.ids_3d"]
    assert (declined.outcome, declined.declined) == (NOT_APPLICABLE, True)
    assert declined.message == "skipped by the implementation: declined: ids of rank 3 and above are not supported"
    assert_outcome(results["lookup.forward.module_example"], PASS)


def test_a_not_implemented_error_from_inside_a_framework_is_an_error(tmp_path, corpus):
    _module(tmp_path, "fakeframework", FRAMEWORK)
    results = _outcomes(tmp_path, corpus, "calls_framework", CALLS_FRAMEWORK)
    raised = results["lookup.forward.ids_3d"]
    assert (raised.outcome, raised.declined) == (ERROR, False)
    assert "raised NotImplementedError: rank > 2 gather is not implemented" in raised.message
    assert "to decline a case, raise embconf.Decline" in raised.message


def test_a_not_implemented_error_of_the_modules_own_code_still_declines(tmp_path, corpus):
    results = _outcomes(tmp_path, corpus, "own_helper", OWN_HELPER)
    assert_outcome(results["lookup.forward.ids_3d"], NOT_APPLICABLE)
    assert results["lookup.forward.ids_3d"].declined


def test_declines_are_counted_and_fail_under_strict(tmp_path):
    module = _module(tmp_path, "declines", DECLINES)
    done, report = run_report(tmp_path, f"functions:{module}", select=CASES)
    assert_exit(done, 0)
    summary, claim = done.stdout.rstrip().splitlines()[-2:]
    assert summary == "1 pass, 1 not_applicable, 1 declined within its declared capabilities"
    assert "does not conform to spec" in claim and "1 cases declined within its declared capabilities" in claim
    assert "Declined by the implementation (within its declared capabilities):" in done.stdout
    assert report["declined"] == 1
    assert [case["id"] for case in report["cases"] if case.get("declined")] == ["lookup.forward.ids_3d"]

    strict, _ = run_report(tmp_path, f"functions:{module}", "--strict", select=CASES)
    assert_exit(strict, 1)
    assert strict.stderr.strip() == (
        "embconf: --strict: 1 case(s) declined within the declared capabilities and not listed in --expectations; "
        "a conformance claim cannot rest on declined cases"
    )

    # a decline listed with its reason in an expectations file is acknowledged: --strict passes, still counted
    listed = tmp_path / "expectations.yaml"
    listed.write_text('expectations:\n  - case: "lookup.forward.ids_3d"\n    reason: "rank 3 ids are out of scope"\n')
    acknowledged, report = run_report(
        tmp_path, f"functions:{module}", "--strict", "--expectations", str(listed), select=CASES
    )
    assert_exit(acknowledged, 0)
    assert report["declined"] == 1


def test_a_case_outside_the_declared_capabilities_is_not_a_decline(tmp_path):
    module = _module(tmp_path, "forward_only", "def embedding_forward(weight, ids):\n    return weight[ids]\n")
    done, report = run_report(
        tmp_path, f"functions:{module}", "--strict", select=["lookup.backward.module_example_020", *CASES[1:]]
    )
    assert_exit(done, 0)
    assert report["declined"] == 0 and report["summary"]["not_applicable"] == 1
