"""Declared rotary conventions (spec section 14, EMB-ROPE-V1..V3, since 2.0.0), as sinusoid profiles are declared:
a declared convention gets its computed cases and a claim that names it (exit 0), its canonical cases are not
applicable to it, and the same code that does not declare it fails them."""

from __future__ import annotations

import pytest
from helpers import run_cli

from embconf.adapters import ImplementationError, create_adapter
from embconf.corpus.conventions import computed_cases
from embconf.corpus.select import select
from embconf.model.contract import Capabilities
from embconf.model.convention import under_a_convention
from embconf.model.rope import rope_features
from embconf.model.rope_conventions import RopeConvention, rope_conventions

HEAD = """
import numpy as np
from embconf.model.rope import rope_features
from embconf.mutants.rope import Slip, rotate, tables
from embconf.reference import rope_backward as _back, rope_forward as _fwd, rope_tables as _tables

EMBCONF_FEATURES = [*rope_features(), "float16", "bfloat16", "float64"]
"""
NEGATIVE = """
def rope_forward(x, position_ids, rotary_dim, base, scaling, pairing):  # nanochat: y1*cos + y2*sin
    return _back(x, position_ids, rotary_dim, base, scaling, pairing, x)

def rope_backward(x, position_ids, rotary_dim, base, scaling, pairing, grad_output):
    _back(x, position_ids, rotary_dim, base, scaling, pairing, grad_output)  # the spec's checks of the call
    return _fwd(grad_output, position_ids, rotary_dim, base, scaling, pairing)
"""
CALLER = """
def _plain(scaling):
    return {**scaling, "attention_factor": 1.0} if scaling.get("rope_type") == "yarn" else scaling

def rope_tables(position_ids, rotary_dim, base, scaling, dtype):
    _tables(position_ids, rotary_dim, base, scaling, dtype)
    return _tables(position_ids, rotary_dim, base, _plain(scaling), dtype)

def rope_forward(x, position_ids, rotary_dim, base, scaling, pairing):
    _fwd(x, position_ids, rotary_dim, base, scaling, pairing)
    return _fwd(x, position_ids, rotary_dim, base, _plain(scaling), pairing)
"""
HALF_TABLES = """
def rope_forward(x, position_ids, rotary_dim, base, scaling, pairing):  # cos/sin cast to x's dtype (transformers)
    _fwd(x, position_ids, rotary_dim, base, scaling, pairing)
    name = np.dtype(x.dtype).name
    cos, sin = tables(Slip(table_precision=name), position_ids, rotary_dim, base, scaling, name)
    return rotate(x, cos, sin, rotary_dim, pairing)
"""
EXACT = "rope_forward, rope_backward = _fwd, _back\n"


def module(tmp_path, name: str, body: str, conventions: tuple[str, ...] = ()) -> str:
    path = tmp_path / f"{name}.py"
    declared = f"EMBCONF_ROPE_CONVENTIONS = {list(conventions)!r}\n" if conventions else ""
    path.write_text(HEAD + declared + body)
    return f"functions:{path}"


def claim_line(done) -> str:
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("convention", "body", "killed_by"),
    [("negative_sense", NEGATIVE, "rope.rotate_half_sign"), ("attention_by_caller", CALLER, "attention_factor")],
)
def test_a_declared_convention_conforms_and_is_named_and_undeclared_it_fails(tmp_path, convention, body, killed_by):
    declared = run_cli("run", "--impl", module(tmp_path, "declared", body, (convention,)), "-q", "--no-colour")
    assert declared.returncode == 0, declared.stdout[-2000:]
    described = RopeConvention(convention).describe()
    assert f"rope conventions: {described}; their canonical cases not provided" in claim_line(declared)
    undeclared = run_cli("run", "--impl", module(tmp_path, "undeclared", body), "-q", "--no-colour")
    assert undeclared.returncode == 1 and "does not conform" in claim_line(undeclared)
    assert killed_by in undeclared.stdout  # the diagnosis names the mistake the undeclared convention is


def test_the_canonical_cases_a_convention_changes_are_not_applicable_and_replaced(corpus):
    rope = [case for case in select(corpus.cases, ["rope.*"]) if not case.id.startswith("rope.convention.")]
    features = frozenset([*rope_features(), "float16", "bfloat16", "float64"])
    operations = frozenset({"rope_forward", "rope_backward", "rope_tables"})
    declared = Capabilities(operations, features, conventions=rope_conventions(["negative_sense"]))
    rotations = [c for c in rope if c.operation in ("rope_forward", "rope_backward")]
    own = [c for c in rotations if RopeConvention.NEGATIVE_SENSE.feature in c.features]  # pairwise goldens under it
    assert own and all(declared.applies(c.operation, c.features) is None for c in own)
    changed = [c for c in rotations if c not in own]
    assert changed and all("negative angle" in str(declared.applies(c.operation, c.features)) for c in changed)
    tables = [c for c in rope if c.operation == "rope_tables"]
    assert tables and all("negative" not in str(declared.applies(c.operation, c.features)) for c in tables)
    computed = computed_cases(declared.conventions, rope)
    assert [c.id.removeprefix("rope.convention.negative_sense.") for c in computed] == [
        c.id.removeprefix("rope.") for c in rotations if not under_a_convention(c.features)
    ]
    assert all(declared.applies(c.operation, c.features) is None for c in computed)


def test_float32_tables_are_held_to_the_float32_rotation_term(tmp_path):
    """EMB-ROPE-V3: tables cast to a half x's dtype conform canonically (EMB-ROPE-11) but not as declared strict;
    exact tables pass declared strict."""
    half = run_cli("run", "--impl", module(tmp_path, "half", HALF_TABLES), "-q", "--no-colour", "-k", "rope.forward.*")
    assert half.returncode == 0, half.stdout[-2000:]
    strict = module(tmp_path, "strict", HALF_TABLES, ("float32_tables",))
    done = run_cli("run", "--impl", strict, "-q", "--no-colour", "-k", "rope.forward.*")
    assert done.returncode == 1 and "FAIL rope.convention.float32_tables.forward." in done.stdout
    exact = run_cli("run", "--impl", module(tmp_path, "exact", EXACT, ("float32_tables",)), "-q", "-k", "rope.*")
    assert exact.returncode == 0 and "cos/sin in float32 whatever the dtype of x" in claim_line(exact)


def test_an_unknown_convention_is_refused_in_one_line(tmp_path):
    with pytest.raises(ImplementationError, match="unknown rope convention.*positive_sense"):
        create_adapter(module(tmp_path, "unknown", EXACT, ("positive_sense",)))
    with pytest.raises(ValueError, match="a list of names"):
        rope_conventions("negative_sense")
    report = Capabilities(frozenset({"rope_forward"}), conventions=rope_conventions(["negative_sense"]))
    assert Capabilities.from_plain(report.to_plain()).declared("rope") == report.declared("rope")


def test_conventions_compose_and_a_declaration_never_leaves_a_case_with_nothing_in_its_place(corpus):
    """Two declared conventions that change one case give one case under both (neither removes the other's), and
    a case of calls on one instance that a convention changes is computed whole, each call under it."""
    everything = frozenset([*rope_features(), "float16", "bfloat16", "float64", "stateful"])
    operations = frozenset({"rope_forward", "rope_backward", "rope_tables"})
    both = Capabilities(operations, everything, conventions=rope_conventions(["negative_sense", "float32_tables"]))
    computed = computed_cases(both.conventions, corpus.cases)
    assert computed and all(both.applies(c.operation, c.features) is None for c in computed)
    half = [c for c in computed if "float16" in c.features and c.operation == "rope_forward"]
    assert half and all(c.id.startswith("rope.convention.float32_tables+negative_sense.") for c in half)
    replaced = [c for c in corpus.cases if c.is_sequence and {"rope_forward", "rope_backward"} & set(c.operations)]
    assert replaced and all(both.applies(c.operation, c.features) for c in replaced)  # changed: not applicable
    sequences = {c.id for c in computed if c.is_sequence}
    assert sequences == {f"rope.convention.negative_sense.{c.id}" for c in replaced}


def test_a_wrong_implementation_that_declares_two_conventions_still_fails(tmp_path):
    """The negative sense with tables cast to a half x's dtype, declaring both conventions: the strict tolerance
    of float32 tables under the negative sense fails it; the same sense in float32 passes."""
    wrong = NEGATIVE + HALF_TABLES.replace("rotate(x, cos, sin", "rotate(x, cos, -sin")
    declared = module(tmp_path, "wrong", wrong, ("negative_sense", "float32_tables"))
    done = run_cli("run", "--impl", declared, "-q", "--no-colour", "-k", "rope.*")
    assert done.returncode == 1 and "FAIL rope.convention.float32_tables+negative_sense." in done.stdout
    right = run_cli(
        "run", "--impl", module(tmp_path, "right", NEGATIVE, ("negative_sense", "float32_tables")), "-q", "-k", "rope.*"
    )
    assert right.returncode == 0, right.stdout[-2000:]
