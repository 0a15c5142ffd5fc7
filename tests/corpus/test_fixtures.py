"""The corpus: frozen, byte-identical on regeneration, schema-valid, complete, and guarded against edits."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from helpers import assert_exit, run_cli
from hypothesis import given
from hypothesis import strategies as st

from embconf.corpus.fixtures import FixtureError, load_corpus
from embconf.corpus.validate import defined_requirements, validate_directory
from embconf.model.vocabulary import FIXTURES_DIR, SPEC_DIR
from embconf.reference import generate
from embconf.reference.emit import float_text

MIN_CASES = 150


def test_regenerating_is_byte_identical_to_the_committed_corpus():
    # in other processes and under every NumPy dispatch setting too: tests/corpus/test_exact_goldens.py
    for name, text in generate.render_all().items():
        assert (FIXTURES_DIR / name).read_text() == text, f"{name} differs from a fresh generation"


def test_regenerate_check_and_validate_pass_from_the_cli():
    check = run_cli("regenerate", "--check")
    assert_exit(check, 0)
    validate = run_cli("validate")
    assert_exit(validate, 0)
    assert " 0 problems" in validate.stdout


def test_regenerate_check_names_the_case_that_differs(tmp_path):
    copy = tmp_path / "fixtures"
    shutil.copytree(FIXTURES_DIR, copy)
    path = copy / "token_lookup.yaml"
    path.write_text(path.read_text().replace("data: [2, 0, 2]", "data: [2, 0, 1]", 1))
    result = run_cli("regenerate", "--check", "--fixtures", str(copy))
    assert_exit(result, 1)
    assert "token_lookup.yaml: case lookup.forward.module_example differs" in result.stderr


def test_corpus_size_and_count(corpus):
    assert len(corpus.cases) >= MIN_CASES
    size = sum(p.stat().st_size for p in FIXTURES_DIR.glob("*.yaml"))
    # 2.3.0's pairwise goldens add 6.0 MB, about 4.9 MB of it the fifteen forward cases at a table of 2^16 + 1 rows;
    # its quantized tables 0.4 MB
    assert size < 12 * 2**20, f"corpus is {size} bytes"
    forms = sum(p.stat().st_size for p in FIXTURES_DIR.glob("*.json") if p.name != "MANIFEST.json")
    assert forms <= size, "the JSON forms are larger than the files they hold"
    manifest = json.loads((FIXTURES_DIR / "MANIFEST.json").read_text())
    assert manifest["total_cases"] == len(corpus.cases)


def test_every_requirement_has_a_case_and_every_case_cites_defined_requirements(corpus):
    defined = defined_requirements()
    cited = {req for case in corpus.cases for req in case.requirements}
    assert defined, "spec/SPEC.md defines no requirement ids"
    assert sorted(defined - cited) == [], "requirements without a frozen golden case (a convention's included)"
    assert sorted(cited - defined) == [], "cases cite requirements the spec does not define"


def test_spec_versions_agree():
    from embconf.model.vocabulary import spec_version

    assert f"spec_version: {spec_version()}" in (SPEC_DIR / "SPEC.md").read_text()
    for path in FIXTURES_DIR.glob("*.yaml"):
        assert f'spec_version: "{spec_version()}"' in path.read_text()


def test_error_kinds_agree_with_the_reference():
    from embconf.model.vocabulary import error_kinds
    from embconf.reference.errors import ERROR_KINDS

    assert list(ERROR_KINDS) == error_kinds()


def test_coverage_of_the_edges(corpus):
    """The shapes and sizes issue 2 names each have a case."""
    inputs = {case.id: case.raw_inputs for case in corpus.cases}
    ranks = {len(v["ids"]["shape"]) for v in inputs.values() if "ids" in v and isinstance(v["ids"], dict)}
    assert {0, 1, 2, 3} <= ranks
    dims = {v["embed_dim"] for v in inputs.values() if "embed_dim" in v and "max_len" in v}
    assert {1, 2, 7} <= dims
    assert any(v.get("max_len") == 32768 for v in inputs.values())
    errors = {case.expected_error for case in corpus.cases if case.expected_error}
    from embconf.model.vocabulary import error_kinds

    assert errors == set(error_kinds())
    memory_rows = {v.get("num_rows") for v in inputs.values()}
    assert {30522, 50257, 32000, 128256, 256000} <= memory_rows


@given(st.floats(width=32, allow_nan=False, allow_infinity=False))
def test_inline_float32_text_round_trips_exactly(value):
    text = float_text(value, "float32")
    assert np.float32(float(text)).tobytes() == np.float32(value).tobytes()
    import yaml

    assert isinstance(yaml.safe_load(text), float)


def _copy(tmp_path: Path) -> Path:
    copy = tmp_path / "fixtures"
    shutil.copytree(FIXTURES_DIR, copy)
    return copy


def test_a_hand_edited_file_is_refused_unless_allowed(tmp_path):
    copy = _copy(tmp_path)
    path = copy / "memory.yaml"
    path.write_text(path.read_text().replace("BERT-base token table", "BERT token table", 1))
    with pytest.raises(FixtureError, match="modified since `embconf regenerate`"):
        load_corpus(copy)
    corpus = load_corpus(copy, allow_modified=True)
    assert corpus.modified_files == ["memory.yaml"]
    result = run_cli("run", "--impl", "reference", "-q", "--fixtures", str(copy))
    assert result.returncode == 2 and "modified" in result.stderr and "Traceback" not in result.stderr
    allowed = run_cli("run", "--impl", "reference", "-q", "--fixtures", str(copy), "--allow-modified-fixtures")
    assert allowed.returncode == 0 and "MODIFIED" in allowed.stdout


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            lambda t: t.replace("  features: []\n", '  features: []\n  flavour: "x"\n', 1),
            "Additional properties are not allowed",
        ),
        (lambda t: t.replace('- id: "lookup.forward.ids_0d"', '- id: "lookup.forward.module_example"', 1), "duplicate"),
        (lambda t: t.replace("shape: [4, 3]", "shape: [4, 4]", 1), "data has 12 values"),
    ],
)
def test_malformed_fixtures_are_refused_with_file_line_and_case(tmp_path, edit, message):
    copy = _copy(tmp_path)
    path = copy / "token_lookup.yaml"
    path.write_text(edit(path.read_text()))
    with pytest.raises(FixtureError) as info:
        load_corpus(copy, allow_modified=True)
    assert "token_lookup.yaml" in str(info.value) and message in str(info.value)
    problems, _ = validate_directory(copy)
    assert any(message in p and "line " in p for p in problems)


def test_losing_cases_fails_loudly(tmp_path):
    copy = _copy(tmp_path)
    path = copy / "sinusoidal.yaml"
    text = path.read_text()
    path.write_text(text[: text.index('- id: "sin.tensor2tensor.l16_d8"')])
    with pytest.raises(FixtureError, match="cases were lost"):
        load_corpus(copy, allow_modified=True)


def test_unsafe_yaml_is_never_executed(tmp_path):
    copy = _copy(tmp_path)
    path = copy / "memory.yaml"
    path.write_text(
        path.read_text().replace('area: "memory"', 'area: !!python/object/apply:os.system ["echo pwned"]', 1)
    )
    with pytest.raises(FixtureError, match="YAML tag .*python.* is not allowed"):
        load_corpus(copy, allow_modified=True)


def test_profile_cases_hold_their_profile_not_the_canonical_table(corpus):
    from embconf.reference.arithmetic import exact
    from embconf.reference.sinusoid import sinusoidal_table

    tables = [c for c in corpus.cases if c.operation == "sinusoidal_table" and c.expected_error is None]
    profiles = {f for c in tables for f in c.features if f.startswith("sinusoid-")}
    assert profiles == {
        f"sinusoid-{name}" for name in ("interleaved", "concatenated", "tensor2tensor", "guided-diffusion", "mlx")
    }
    for case in tables:
        (feature,) = [f for f in case.features if f.startswith("sinusoid-")]
        convention = feature.removeprefix("sinusoid-")
        inputs = case.inputs()
        rows = case.raw_expected["outputs"]["table"].get("rows")
        with exact():  # the goldens are exact (spec section 8.2)
            golden = sinusoidal_table(inputs["max_len"], inputs["embed_dim"], inputs["dtype"], convention, rows)
        assert np.array_equal(case.expected_outputs["table"], golden[rows] if rows else golden), case.id
        table = sinusoidal_table(inputs["max_len"], inputs["embed_dim"], inputs["dtype"], convention)
        canonical = sinusoidal_table(inputs["max_len"], inputs["embed_dim"], inputs["dtype"])
        if convention != "interleaved" and inputs["embed_dim"] >= 3:
            assert not np.array_equal(table, canonical), case.id


def test_pinned_rows_outside_the_array_are_refused_not_a_crash(tmp_path):
    copy = _copy(tmp_path)
    path = copy / "sinusoidal.yaml"
    path.write_text(path.read_text().replace("508, 509, 510, 511]", "508, 509, 510, 5110]", 1))
    with pytest.raises(
        FixtureError, match=r"line \d+, case sin\.canonical\.\w+: output 'table': 'rows' must list row indices within"
    ):
        load_corpus(copy, allow_modified=True)
