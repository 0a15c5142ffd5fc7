"""Each operation's inputs declare their domains (reference/cases/domains.py): every input and option of every
operation (every key of the layer's config) has its boundaries; every golden case is classified at them, an error
case at a boundary naming its error; the builders put inputs at any boundary, as the reference answers them; the
spec's constraints leave out the pairs it does not allow together."""

from __future__ import annotations

import numpy as np
import pytest

from embconf.model.family import families
from embconf.model.schemas import schema
from embconf.model.vocabulary import error_kinds, operations
from embconf.reference.cases import all_cases
from embconf.reference.cases.domains import (
    DOMAINS,
    EXCLUDED,
    allowed_pairs,
    boundaries_of,
    calls_at,
    case_at,
    covered_pairs,
    domains_of,
    error_at,
    excluded,
    inputs_at,
)
from embconf.reference.families import OPERATIONS
from embconf.reference.generate import build_case

OPERATION_NAMES = [name for family in families().values() for name in family.operations]


@pytest.mark.parametrize("operation", OPERATION_NAMES)
def test_every_input_and_option_of_an_operation_has_a_domain(operation):
    entry = operations()[operation]
    inputs = set(entry["inputs"]) | set(entry.get("optional_inputs") or {})
    inputs -= {"config"}  # the config's keys are each a domain of their own (below)
    declared = {domain.input for domain in domains_of(operation)}
    assert inputs - declared == set()


@pytest.mark.parametrize("operation", [name for name, op in operations().items() if "config_keys" in op])
def test_every_key_of_the_layers_config_has_a_domain(operation):
    keys = set(schema("fixture")["$defs"]["config"]["properties"])
    declared = {domain.input for domain in domains_of(operation)}
    assert {f"config.{key}" for key in keys} - declared == set()


def test_every_golden_case_is_classified_at_declared_boundaries(corpus):
    for case in corpus.cases:
        for _, at in calls_at(case):
            assert any(boundary is not None for boundary in at.values()), case.id


def test_every_catalogue_case_is_classified_as_its_golden_is(cases_by_id):
    for _, specs in all_cases():
        for spec in specs:
            if not spec.calls:
                assert boundaries_of(spec) == boundaries_of(cases_by_id[spec.id]), spec.id


def test_every_golden_error_case_is_at_a_boundary_that_names_its_error(corpus):
    for case in corpus.cases:
        if case.expected_error and not case.is_sequence:
            at = boundaries_of(case)
            named = {d.boundary(at[d.name]).error for d in domains_of(case.operation) if at[d.name] is not None}
            found = error_at(case.operation, case.inputs(), frozenset(case.features))
            assert case.expected_error in named | {found}, case.id


@pytest.mark.parametrize(
    ("case_id", "domain", "boundary"),
    [
        ("bag.forward.sum.empty_bags", "offsets", "empty_bag"),
        ("bag.forward.sum.no_bags", "offsets", "no_bags"),
        ("bag.forward.sum.no_bags", "ids.count", "empty"),
        ("bag.forward.sum.two_d", "offsets", "absent"),
        ("bag.forward.max.padding_empty", "mode", "max"),
        ("bag.forward.max.padding_empty", "padding_idx", "positive"),
        ("bag.forward.sum.weights_zero_negative", "per_sample_weights", "nonpositive"),
        ("bag.error.offsets_past_end", "offsets", "past_end"),
        ("bag.convention.drop_negative_ids.forward_sum", "convention", "drop_negative_ids"),
        ("bag.convention.drop_negative_ids.forward_sum", "ids.range", "negative"),
        ("lookup.forward.empty_ids", "ids.count", "empty"),
        ("lookup.forward.ids_0d", "ids.rank", "0d"),
        ("lookup.forward.first_and_last_rows", "ids.range", "last_row"),
        ("lookup.forward.float_ids_integral", "ids.dtype", "float_ids"),
        ("rope.forward.half_split.float16_d128_p4096", "x.dtype", "float16"),
        ("rope.forward.half_split.mrope_d128", "scaling", "mrope"),
        ("rope.forward.half_split.yarn_p131072", "position_ids.span", "past_original"),
        ("mem.table_bytes.one_int8", "num_rows", "one"),
        ("mem.table_bytes.one_int8", "dtype", "int8"),
        ("sin.mlx.error_odd_d7", "convention", "mlx"),
    ],
)
def test_a_known_case_is_at_its_boundary(cases_by_id, case_id, domain, boundary):
    assert boundaries_of(cases_by_id[case_id])[domain] == boundary


@pytest.mark.parametrize("operation", OPERATION_NAMES)
def test_inputs_at_each_boundary_are_answered_by_the_reference_as_declared(operation):
    """At every single boundary the builder makes inputs the reference answers (or refuses with the declared
    error), and the case it makes is at that boundary."""
    for domain in domains_of(operation):
        for boundary in domain.boundaries:
            spec = case_at(operation, {domain.name: boundary.name}, f"domains.{domain.name}.{boundary.name}", "", ())
            assert boundaries_of(spec)[domain.name] == boundary.name, (domain.name, boundary.name)
            if boundary.error:
                assert spec.error == boundary.error, (domain.name, boundary.name)
            build_case(spec)  # AssertionError when the reference answers otherwise than the case declares


@pytest.mark.parametrize("operation", OPERATION_NAMES)
def test_every_allowed_pair_builds_a_case_at_both_boundaries_the_reference_answers(operation):
    """What pairwise coverage counts can be built: each allowed pair makes inputs at both boundaries, and the
    reference answers them as the case declares (a pair it cannot build is an EXCLUDED rule to write)."""
    for a, b in allowed_pairs(operation):
        spec = case_at(operation, dict((a, b)), f"domains.{a}.{b}", "", ())
        at = boundaries_of(spec)
        assert (at[a[0]], at[b[0]]) == (a[1], b[1]), (a, b)
        build_case(spec)


def test_inputs_at_are_the_same_for_one_case_id_and_differ_for_another():
    at = {"ids.count": "many", "mode": "max"}
    first, again = (inputs_at("embedding_bag_forward", at, "bag.domains.a") for _ in range(2))
    other = inputs_at("embedding_bag_forward", at, "bag.domains.b")
    assert all(np.array_equal(first[k], again[k]) for k in first)
    assert not np.array_equal(first["weight"], other["weight"])


def test_inputs_at_a_combination_of_boundaries_is_at_each():
    spec = case_at(
        "embedding_bag_backward", {"ids.count": "empty", "mode": "max", "offsets": "one_bag"}, "bag.domains.c", "", ()
    )
    at = boundaries_of(spec)
    assert (at["ids.count"], at["mode"], at["offsets"]) == ("empty", "max", "empty_bag") and spec.error is None
    build_case(spec)


def test_memory_counts_past_two_to_the_63_are_exact():
    inputs = inputs_at("table_bytes", {"num_rows": "past_2_63", "dtype": "float64"}, "mem.domains.wide")
    assert OPERATIONS["table_bytes"](**inputs)["bytes"] == (2**63 + 1) * inputs["embed_dim"] * 8


def test_weights_with_mode_max_are_not_an_allowed_pair():
    pairs = allowed_pairs("embedding_bag_forward")
    assert (("mode", "max"), ("per_sample_weights", "positive")) not in pairs
    assert (("mode", "mean"), ("per_sample_weights", "positive")) in pairs
    rule = excluded("embedding_bag_forward", ("per_sample_weights", "positive"), ("mode", "max"))
    assert rule is not None and rule.error == "invalid_config"


def test_no_allowed_pair_holds_an_error_or_two_boundaries_of_one_domain():
    for operation in OPERATION_NAMES:
        declared = {(d.name, b.name): b for d in domains_of(operation) for b in d.boundaries}
        for a, b in allowed_pairs(operation):
            assert a[0] != b[0]
            assert not declared[a].error_under(frozenset(declared[b].features))
            assert not declared[b].error_under(frozenset(declared[a].features))


def test_a_negative_id_is_an_allowed_pair_under_the_convention_that_drops_it(corpus):
    pair = (("convention", "drop_negative_ids"), ("ids.range", "negative"))
    assert pair in allowed_pairs("embedding_bag_forward")
    assert (("convention", "canonical"), ("ids.range", "negative")) not in allowed_pairs("embedding_bag_forward")
    assert pair in covered_pairs(corpus.cases)["embedding_bag_forward"]
    spec = case_at("embedding_bag_forward", dict(pair), "bag.domains.dropped", "", ())
    assert spec.error is None and spec.features == ("bag-drop_negative_ids",)
    build_case(spec)


def test_an_empty_array_is_at_no_boundary_of_its_range():
    assert excluded("embedding_forward", ("ids.count", "empty"), ("ids.range", "last_row")) is not None
    assert (("ids.count", "empty"), ("ids.range", "last_row")) not in allowed_pairs("embedding_forward")


def test_every_declared_error_and_constraint_names_what_the_spec_has():
    kinds = set(error_kinds())
    for area, table in DOMAINS.items():
        points = {(d.name, b.name) for domains in table.values() for d in domains for b in d.boundaries}
        assert {b.error for domains in table.values() for d in domains for b in d.boundaries} - {None} <= kinds
        for rule in EXCLUDED[area]:
            assert {rule.first, rule.second} <= points, rule
            assert rule.error is None or rule.error in kinds, rule


def test_a_case_under_a_declared_convention_covers_only_the_pairs_holding_its_boundary():
    at = {"x.dtype": "float16", "position_ids.span": "past_original", "scaling": "dynamic"}
    canonical = case_at("rope_forward", at, "rope.domains.canonical", "", ())
    declared = case_at("rope_forward", {**at, "convention": "float32_tables"}, "rope.domains.declared", "", ())
    pair = (("position_ids.span", "past_original"), ("scaling", "dynamic"))
    assert pair in covered_pairs([canonical])["rope_forward"]
    found = covered_pairs([declared])["rope_forward"]
    assert pair not in found
    assert (("convention", "float32_tables"), ("scaling", "dynamic")) in found
    assert all(("convention", "float32_tables") in p for p in found)


def test_every_requirement_a_boundary_names_is_defined_in_the_spec():
    from embconf.corpus.validate import defined_requirements

    named = {r for t in DOMAINS.values() for ds in t.values() for d in ds for b in d.boundaries for r in b.requirements}
    assert named and named <= set(defined_requirements())
