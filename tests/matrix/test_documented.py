"""Documented choices (issue 18 item 4): an adapter cites the framework's documentation for a deviation; the report
and the matrix show it apart from undocumented deviations, and the implementation still does not conform."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import assert_exit, assert_outcome, cases_with, read_report, run_cli

from embconf.adapters.common import InProcessAdapter
from embconf.matrix import build, html, markdown
from embconf.model.contract import Capabilities, DocumentedChoice
from embconf.model.schemas import validator
from embconf.session import RunOptions, run

WRAPS = DocumentedChoice(
    "https://example.invalid/docs/take#modes",
    "Out-of-range ids wrap around (mode='wrap'), as the framework documents.",
    requirements=("EMB-IDX-1",),
)
CASES = ["lookup.forward.module_example", "lookup.error.id_equals_vocab", "lookup.error.negative_one"]


class Wrapping(InProcessAdapter):
    """A lookup that wraps out-of-range and negative ids (np.take mode='wrap'), citing documentation for the first."""

    kind = "wrapping"

    def __init__(self) -> None:
        super().__init__("wrapping", Capabilities(frozenset({"embedding_forward"}), documented=(WRAPS,)))

    def embedding_forward(self, weight, ids):
        return np.take(weight, ids, axis=0, mode="wrap")


def _record(corpus):
    cases = [case for case in corpus.cases if case.id in CASES]
    return run(Wrapping(), cases, RunOptions(), impl="wrapping")


def test_a_failure_the_framework_documents_is_cited_and_still_fails(corpus):
    by_id = {r.id: r for r in _record(corpus).results}
    assert_outcome(by_id["lookup.error.id_equals_vocab"], "fail")
    assert by_id["lookup.error.id_equals_vocab"].documented == WRAPS
    assert_outcome(by_id["lookup.error.negative_one"], "fail")
    assert by_id["lookup.error.negative_one"].documented is None  # EMB-IDX-2 is not cited
    assert by_id["lookup.forward.module_example"].documented is None
    case = by_id["lookup.error.id_equals_vocab"].to_json()
    assert case["documented"] == {"link": WRAPS.link, "sentence": WRAPS.sentence}


def test_the_matrix_lists_documented_deviations_apart_and_claims_no_conformance(corpus):
    doc = build([_record(corpus)], {"manifest_sha256": "0" * 64, "modified": [], "cases": len(CASES)})
    validator("matrix").validate(doc)
    column = doc["implementations"][0]
    assert column["documented"] == 1 and not column["claim"]["conforms"]
    assert (
        "2 of 3 applicable cases do not pass (1 of them the framework's documented choices)"
        in (column["claim"]["statement"])
    )
    undocumented, documented = column["deviations"]
    assert undocumented["documented"] is None and undocumented["cases"] == ["lookup.error.negative_one"]
    assert documented["documented"] == {"link": WRAPS.link, "sentence": WRAPS.sentence}
    assert f"Documented choice of the framework: {WRAPS.sentence} ([documentation]({WRAPS.link}))" in (
        markdown.render(doc)
    )
    assert f'<a href="{WRAPS.link}">documentation</a>' in html.render(doc)


def test_capabilities_cross_the_worker_as_plain_values_and_junk_is_refused_in_one_line():
    caps = Capabilities(frozenset({"embedding_forward"}), frozenset({"float64"}), notes=("n",), documented=(WRAPS,))
    plain = caps.to_plain()
    assert json.loads(json.dumps(plain)) == plain  # plain values only
    assert Capabilities.from_plain(plain) == caps
    for junk in ("junk", {"operations": "embedding_forward"}, {**plain, "documented": [("a", "b", ("x",), "y")]}):
        with pytest.raises(ValueError) as refused:
            Capabilities.from_plain(junk)
        assert "\n" not in str(refused.value)


def test_flax_cites_jax_documented_indexing(tmp_path):
    pytest.importorskip("flax")
    out = tmp_path / "flax.json"
    done = run_cli("run", "--impl", "flax", "-q", "--select", "lookup.error.*", "--report-json", str(out))
    assert_exit(done, 1)
    failing = cases_with(read_report(out), "fail")
    assert failing and all("docs.jax.dev" in case["documented"]["link"] for case in failing)
    assert "documented choice: JAX never raises for an out-of-bounds index" in done.stdout
