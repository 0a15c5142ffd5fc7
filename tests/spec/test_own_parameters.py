"""The layer's own parameters (EMB-LAY-12): a freshly constructed layer's tables receive the gradients of its own
backward. A TinyTorch student who builds them without requires_grad=True passes every case that hands the layer
its tables, and fails exactly the cases of its own, with a verdict that says what was measured: its own backward
leaves the tables without a gradient, before any optimizer exists (an optimizer that sets requires_grad on what it is
given could still train them, so "never learns" is not said)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import EXAMPLE_STUDENT, IMPLS, ROOT, outcomes, run_report

from embconf.reference import OPERATIONS, embedding_layer_backward


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("own")
    return {
        name: run_report(tmp, f"tinytorch:{path.relative_to(ROOT)}", "-k", "layer.*", "-q", name=f"{name}.json")
        for name, path in (("untrained", IMPLS / "tinytorch_untrained_tables.py"), ("example", EXAMPLE_STUDENT))
    }


def test_a_student_whose_tables_do_not_require_grad_fails_only_its_own_layer_cases(reports):
    result, report = reports["untrained"]
    assert result.returncode == 1
    failed = {cid for cid, outcome in outcomes(report).items() if outcome not in ("pass", "not_applicable")}
    assert failed and all(cid.startswith("layer.own_backward.") for cid in failed), failed
    assert "layer.own_backward.learned.scaled" in failed
    assert "requires_grad=True" in result.stdout


def test_a_missing_own_gradient_is_said_as_measured_before_any_optimizer(reports):
    result, report = reports["untrained"]
    said = [d["summary"] for c in report["cases"] for d in c.get("diagnosis") or []] + [
        e["title"] for e in report["verdict"]["mistakes"]
    ]
    assert said and all("own backward" in text or "own forward and backward" in text for text in said), said
    assert all("before any optimizer exists" in text for text in said), said
    assert not any(word in result.stdout for word in ("never learn", "never change")), result.stdout[-2000:]


def test_the_example_student_passes_its_own_layer_cases(reports):
    result, report = reports["example"]
    assert result.returncode == 0, result.stdout[-2000:]
    seen = outcomes(report)
    assert seen["layer.own_backward.learned.scaled"] == seen["layer.own_backward.sinusoidal.scaled"] == "pass"


def test_the_golden_is_the_layer_backward_whatever_the_tables_hold():
    """The gradients of EMB-LAY-5/6 do not depend on the parameters' values, so one golden fits any init."""
    config = {"vocab_size": 7, "embed_dim": 4, "max_seq_len": 6, "pos_encoding": "learned", "scale_embeddings": True}
    tokens, grad = np.array([[1, 3, 1]]), np.random.default_rng(0).standard_normal((1, 3, 4)).astype(np.float32)
    own = OPERATIONS["embedding_layer_own_backward"](config, tokens, 2, grad)
    for seed in range(3):
        rng = np.random.default_rng(seed)
        tables = rng.standard_normal((7, 4)).astype(np.float32), rng.standard_normal((6, 4)).astype(np.float32)
        given = embedding_layer_backward(config, *tables, tokens, 2, grad)
        assert all(np.array_equal(a, b) for a, b in zip(own, given))
