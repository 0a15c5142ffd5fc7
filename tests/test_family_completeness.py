"""Every operation family is complete, and this is the newcomer's checklist: for each area of the vocabulary
(``embconf.model.family``), each layer's table keyed by area has its entry, and every operation a reference
function, a tolerance rule, its input domains, a mutant, and a detector or an explicit "plain readings only"; every requirement of
the family a frozen golden. The failure lists what a family still lacks and where it goes (docs/maintainers.md,
"Adding an operation family"); removing any one piece of a family makes it fail (shown below)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pytest

from embconf.adapters.operation_sets import OPERATION_SETS
from embconf.corpus.conventions import COMPUTERS
from embconf.diagnosis.symptoms import DETECTORS
from embconf.model.convention import kind_of_area
from embconf.model.family import Family, families
from embconf.mutants import MODULES, catalogue
from embconf.reference.cases.catalogue import BUILDERS
from embconf.reference.cases.domains import DOMAINS
from embconf.reference.families import FUNCTIONS, TOLERANCES


@dataclass(frozen=True)
class Layers:
    """The tables a family needs an entry in, one per layer, as the suite holds them."""

    functions: dict[str, tuple[Any, ...]]
    tolerances: dict[str, dict[str, Any]]
    builders: dict[str, Any]
    mutant_modules: dict[str, tuple[Any, ...]]
    mutated: frozenset[str]  # the operations some catalogue mutant replaces
    detectors: dict[str, dict[str, tuple[Any, ...]]]
    operation_sets: dict[str, Any]
    computers: dict[str, Any]
    pinned: frozenset[str]  # the requirements some frozen golden case cites
    domains: dict[str, dict[str, tuple[Any, ...]]]  # each operation's input domains


def shipped(corpus) -> Layers:
    mutated = frozenset(op for mutant in catalogue() for op in mutant.overrides)
    pinned = frozenset(req for case in corpus.cases for req in case.requirements)
    return Layers(
        FUNCTIONS, TOLERANCES, BUILDERS, MODULES, mutated, DETECTORS, OPERATION_SETS, COMPUTERS, pinned, DOMAINS
    )


def missing_pieces(family: Family, layers: Layers) -> list[str]:
    """What ``family`` still lacks, one line a piece, saying where it goes."""
    area, lacks = family.area, []
    if area not in layers.builders:
        lacks.append(
            f"{area}: no case builder (reference/cases/catalogue.py BUILDERS, a module reference/cases/{area}.py)"
        )
    lacks += [
        f"{area}: {req} has no frozen golden case (a CaseSpec citing it in reference/cases/, then embconf regenerate)"
        for req in family.requirements
        if req not in layers.pinned
    ]
    if not family.operations:
        return lacks  # its cases run other families' operations: nothing per operation
    names = {fn.__name__ for fn in layers.functions.get(area, ())}
    for op in family.operations:
        if op not in names:
            lacks.append(f"{area}: {op} has no reference function (reference/families.py FUNCTIONS)")
        if op not in layers.tolerances.get(area, {}):
            lacks.append(f"{area}: {op} has no tolerance rule (reference/families.py TOLERANCES, spec section 8)")
        if op not in layers.mutated:
            lacks.append(f"{area}: {op} has no catalogue mutant (a Mutant registered in conformance/mutants/)")
        if op not in layers.domains.get(area, {}):
            lacks.append(f"{area}: {op} has no input domains (reference/cases/domains.py DOMAINS, spec's inputs)")
        if op not in layers.detectors.get(area, {}):
            lacks.append(
                f"{area}: {op} has no detector entry (conformance/diagnosis/symptoms DETECTORS: detectors, or "
                "PLAIN_READINGS_ONLY said on purpose)"
            )
    if area not in layers.mutant_modules:
        lacks.append(f"{area}: no mutant module (conformance/mutants/__init__.py MODULES)")
    if area not in layers.operation_sets:
        lacks.append(f"{area}: no adapters' operation set (conformance/adapters/operation_sets.py, None if none)")
    kind = kind_of_area(area)
    if kind is not None and any(c.computed for c in _examples(kind.name)) and area not in layers.computers:
        lacks.append(f"{area}: its conventions are computed but have no computer (conformance/corpus/conventions.py)")
    return lacks


def _examples(kind: str) -> list[Any]:
    """Members of a kind of convention, to ask whether any is computed."""
    from embconf.model.bag_conventions import BagConvention
    from embconf.model.quantize_conventions import QuantizeConvention
    from embconf.model.rope_conventions import RopeConvention
    from embconf.model.sinusoid import SinusoidProfile

    unnamed = SinusoidProfile.from_json({"base": 100.0})
    known = {"rope": list(RopeConvention), "bag": list(BagConvention), "quantize": list(QuantizeConvention)}
    return {"sinusoid": [unnamed], **known}[kind]


def test_every_family_of_the_vocabulary_has_every_piece(corpus):
    layers = shipped(corpus)
    lacking = [line for family in families().values() for line in missing_pieces(family, layers)]
    assert lacking == [], "a family is incomplete:\n" + "\n".join(lacking)


def test_every_table_is_keyed_by_the_families_and_nothing_else():
    known = set(families())
    with_operations = {area for area, family in families().items() if family.operations}
    assert set(BUILDERS) == known
    for table in (FUNCTIONS, TOLERANCES, MODULES, DETECTORS, OPERATION_SETS, DOMAINS):
        assert set(table) == with_operations
    assert set(COMPUTERS) <= with_operations


@pytest.mark.parametrize(
    ("removed", "says"),
    [
        ("tolerance", "bags: sharded_table_bytes has no tolerance rule"),
        ("function", "rope: rope_apply has no reference function"),
        ("detector", "memory: table_bytes has no detector entry"),
        ("mutant", "token_lookup: embedding_backward_sparse has no catalogue mutant"),
        ("builder", "stateful: no case builder"),
        ("golden", "bags: EMB-BAG-V1 has no frozen golden case"),
        ("operation set", "bags: no adapters' operation set"),
        ("computer", "rope: its conventions are computed but have no computer"),
        ("domains", "bags: embedding_bag_forward has no input domains"),
    ],
)
def test_removing_one_piece_of_a_family_is_named(corpus, removed, says):
    layers = shipped(corpus)
    without = {
        "tolerance": lambda: replace(
            layers, tolerances={**TOLERANCES, "bags": _drop(TOLERANCES["bags"], "sharded_table_bytes")}
        ),
        "function": lambda: replace(layers, functions={**FUNCTIONS, "rope": FUNCTIONS["rope"][:-2]}),
        "detector": lambda: replace(
            layers, detectors={**DETECTORS, "memory": _drop(DETECTORS["memory"], "table_bytes")}
        ),
        "mutant": lambda: replace(layers, mutated=layers.mutated - {"embedding_backward_sparse"}),
        "builder": lambda: replace(layers, builders=_drop(BUILDERS, "stateful")),
        "golden": lambda: replace(layers, pinned=layers.pinned - {"EMB-BAG-V1"}),
        "operation set": lambda: replace(layers, operation_sets=_drop(OPERATION_SETS, "bags")),
        "computer": lambda: replace(layers, computers=_drop(COMPUTERS, "rope")),
        "domains": lambda: replace(
            layers, domains={**DOMAINS, "bags": _drop(DOMAINS["bags"], "embedding_bag_forward")}
        ),
    }[removed]()
    area = says.split(":")[0]
    lacking = missing_pieces(families()[area], without)
    assert any(line.startswith(says) for line in lacking), lacking


def test_a_new_family_is_told_everything_it_still_lacks(corpus):
    """ALiBi's slopes, declared as a family the vocabulary does not have yet: every piece is listed."""
    alibi = Family("alibi", "ALiBi slopes", "alibi.yaml", ("alibi_slopes",), ())
    lacking = missing_pieces(alibi, shipped(corpus))
    for piece in (
        "no case builder",
        "no reference function",
        "no tolerance rule",
        "no catalogue mutant",
        "no detector entry",
        "no mutant module",
        "no adapters' operation set",
        "no input domains",
    ):
        assert any(piece in line for line in lacking), piece


def _drop(table: dict[str, Any], key: str) -> dict[str, Any]:
    return {name: value for name, value in table.items() if name != key}
