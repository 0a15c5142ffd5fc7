"""Declared bag conventions (EMB-BAG-V1, V2, spec 2.1.0), as rotary conventions are declared: an unknown name is
refused, each adds its feature ``bag-<name>``, the canonical cases it changes are not applicable to the declarer
(and only those), its cases are judged instead, the claim names it; the same code undeclared fails the canonical
cases. Declared in a ``functions:`` module, in a start reply (protocol minor 6) and in a report."""

from __future__ import annotations

import pytest
from helpers import IMPLS, assert_one_line_error, outcomes, problems, run_cli, run_named

from embconf.corpus.fixtures import load_corpus
from embconf.model.bag import CANONICAL_MARKERS, NEGATIVE_IDS_REFUSED, NONPOSITIVE_WEIGHTS_KEPT, bag_features
from embconf.model.bag_conventions import BagConvention, bag_conventions
from embconf.model.contract import Capabilities
from embconf.model.outcomes import FAIL, NOT_APPLICABLE, PASS

SAFE = f"functions:{IMPLS / 'bag_float32_safe.py'}"
DROP, PRUNE = BagConvention.DROP_NEGATIVE_IDS, BagConvention.PRUNE_NONPOSITIVE_WEIGHTS


@pytest.fixture(scope="module")
def bags():
    return [case for case in load_corpus().cases if case.id.startswith("bag.")]


def _changed(case, convention: BagConvention) -> bool:
    return convention.canonical_marker in case.features


def test_names_are_refused_unless_known():
    assert bag_conventions(["drop_negative_ids"]) == frozenset({DROP}) and bag_conventions(None) == frozenset()
    for wrong in (["drop_everything"], "drop_negative_ids", 3):
        with pytest.raises(ValueError, match="bag convention"):
            bag_conventions(wrong)


def test_an_unknown_name_in_a_module_is_one_line_exit_2(tmp_path):
    module = tmp_path / "unknown_bag_convention.py"
    module.write_text(
        f"import sys\nsys.path.insert(0, {str(IMPLS)!r})\nfrom bag_float32 import *\n"
        "EMBCONF_BAG_CONVENTIONS = ['drop_everything']\n"
    )
    result = run_cli("run", "--impl", f"functions:{module}", "-k", "bag.forward.sum.basic", timeout=120)
    assert_one_line_error(result, "EMBCONF_BAG_CONVENTIONS", "drop_everything")


def test_each_convention_adds_its_feature_and_removes_its_canonical_marker():
    plain = Capabilities(frozenset({"embedding_bag_forward"}), frozenset(bag_features()))
    assert set(CANONICAL_MARKERS) <= plain.all_features and not {DROP.feature, PRUNE.feature} & plain.all_features
    declared = Capabilities(plain.operations, plain.features | {DROP.feature}, conventions=frozenset({DROP}))
    assert DROP.feature in declared.all_features and NEGATIVE_IDS_REFUSED not in declared.all_features
    assert NONPOSITIVE_WEIGHTS_KEPT in declared.all_features and PRUNE.feature not in declared.all_features
    reason = declared.applies("embedding_bag_forward", ["bag-mean", NEGATIVE_IDS_REFUSED])
    assert reason and "drop_negative_ids" not in reason and "ids < 0 dropped" in reason
    assert declared.applies("embedding_bag_forward", ["bag-mean"]) is None
    assert Capabilities.from_plain(declared.to_plain()).declared("bag") == frozenset({DROP})
    assert declared.to_json()["bag_conventions"] == ["drop_negative_ids"]


def test_a_declarer_skips_exactly_the_canonical_cases_it_changes_and_passes_its_own(bags):
    run = run_named(SAFE, bags)
    result = outcomes(run)
    assert problems(run.results) == []
    for case in bags:
        changed = _changed(case, DROP) or _changed(case, PRUNE)
        assert result[case.id] == (NOT_APPLICABLE if changed else PASS), case.id
    reasons = {r.id: r.message for r in run.results if r.outcome == NOT_APPLICABLE}
    assert "it declares the bag convention ids < 0 dropped" in reasons["bag.error.id_negative"]
    assert "positions of weight <= 0 dropped" in reasons["bag.forward.sum.weights_zero_negative"]


def test_the_claim_names_the_declared_conventions(tmp_path):
    result = run_cli("run", "--impl", SAFE, "-k", "bag.convention.*", "-q", timeout=120)
    assert result.returncode == 0, result.stdout[-2000:]
    assert "bag conventions: ids < 0 dropped, not refused" in result.stdout
    assert "positions of weight <= 0 dropped" in result.stdout and "their canonical cases not provided" in result.stdout


def test_the_same_code_undeclared_fails_the_canonical_cases_and_skips_the_conventions(tmp_path, bags):
    module = tmp_path / "safe_undeclared.py"
    source = (IMPLS / "bag_float32_safe.py").read_text().replace("EMBCONF_BAG_CONVENTIONS = ", "FOLLOWED = ")
    module.write_text(
        f"import sys\nsys.path.insert(0, {str(IMPLS)!r})\n" + source.replace("EMBCONF_BAG_CONVENTIONS)", "FOLLOWED)")
    )
    result = outcomes(run_named(f"functions:{module}", bags))
    for case in bags:
        if DROP.feature in case.features or PRUNE.feature in case.features:
            assert result[case.id] == NOT_APPLICABLE, case.id
    assert result["bag.error.id_negative"] == FAIL and result["bag.forward.sum.weights_zero_negative"] == FAIL
    assert result["bag.forward.sum.basic"] == PASS


def test_a_start_reply_declares_bag_conventions():
    from embconf.protocol.lines import ProtocolError
    from embconf.protocol.messages import parse_start_reply
    from embconf.protocol.reference_peer import hello

    message = hello()
    assert message["protocol_minor"] >= 6  # bags came with minor 6
    claimed = set(message["implementation"]["capabilities"]["features"])
    assert set(bag_features()) <= claimed and not {DROP.feature, PRUNE.feature} & claimed
    message["implementation"]["capabilities"]["bag_conventions"] = ["prune_nonpositive_weights"]
    for validate in (False, True):
        caps = parse_start_reply(message, validate).implementation.capabilities
        assert caps.declared("bag") == frozenset({PRUNE})
    message["implementation"]["capabilities"]["bag_conventions"] = ["prune_everything"]
    for validate in (False, True):
        with pytest.raises(ProtocolError):
            parse_start_reply(message, validate)


def test_the_reference_declares_every_bag_feature_and_no_convention():
    from embconf.adapters import create_adapter

    adapter = create_adapter("reference")
    try:
        caps = adapter.capabilities()
    finally:
        adapter.close()
    assert set(bag_features()) <= caps.features and caps.declared("bag") == frozenset()
    assert not {DROP.feature, PRUNE.feature} & caps.all_features


def test_a_declaration_replaces_every_case_it_makes_not_applicable(bags):
    """Each canonical case a declared convention changes gets a case computed under it (the non-positive weights
    of sqrtn too, which no frozen golden under the convention holds), and correct code passes them."""
    run = run_named(SAFE, bags)
    result = outcomes(run)
    changed = [case.id for case in bags if _changed(case, DROP) or _changed(case, PRUNE)]
    assert changed and problems(run.results) == []
    for case_id in changed:
        replacements = [
            i for i in result if i.startswith("bag.convention.") and i.endswith(case_id.removeprefix("bag."))
        ]
        assert replacements and all(result[i] == PASS for i in replacements), case_id
    assert any("sqrtn" in case_id and "weights" in case_id for case_id in changed)


def test_a_wrong_implementation_that_declares_a_convention_still_fails(tmp_path, bags):
    """Code that keeps non-positive weights but declares it prunes them fails the cases under the convention,
    those computed from the canonical cases it changed included."""
    module = tmp_path / "declares_but_keeps.py"
    module.write_text(
        f"import sys\nsys.path.insert(0, {str(IMPLS)!r})\nfrom bag_float32 import *\n"
        "EMBCONF_BAG_CONVENTIONS = ['prune_nonpositive_weights']\n"
    )
    result = outcomes(run_named(f"functions:{module}", bags))
    assert result["bag.forward.sum.weights_zero_negative"] == NOT_APPLICABLE
    assert result["bag.convention.prune_nonpositive_weights.forward.sum.weights_zero_negative"] == FAIL
