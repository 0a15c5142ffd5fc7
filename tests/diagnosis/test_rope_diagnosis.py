"""Diagnosis of rotary embeddings: each rope mistake is named by what its angles are (the catalogue aside), the
public precision bugs by the precision of their angles or tables, and a correct float32 implementation at
position 131072 gets no cause at all."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_exit, read_report, run_diagnosed
from rope_cases import LLAMA3, YARN, case, float32_operations, window

from embconf.diagnosis.rope_fit import NEGATED, SHIFTED, Kind, read, rotation
from embconf.diagnosis.run import diagnose_case
from embconf.diagnosis.symptoms import describe
from embconf.model.outcomes import FAIL, PROBLEMS, CaseResult
from embconf.mutants import catalogue, rope_families, rope_reports
from embconf.mutants.adapter import ImplementationAdapter, MutantAdapter
from embconf.mutants.compose import Implementation

OPS = ("rope_forward", "rope_backward", "rope_tables")


def _cases() -> list:
    built = []
    for op in OPS:
        for p0 in (0, 4096, 131072):
            for base in (10000.0, 500000.0):
                built.append(case(f"{op}.p{p0}.b{base:g}", op, positions=window(p0), d=64, base=base))
        built.append(case(f"{op}.partial", op, ("rope-partial",), d=64, rotary_dim=32))
        built.append(case(f"{op}.interleaved", op, d=64, pairing="interleaved"))
        built.append(
            case(f"{op}.llama3", op, ("rope-llama3",), positions=window(4096), d=64, base=500000.0, scaling=LLAMA3)
        )
        built.append(case(f"{op}.yarn", op, ("rope-yarn",), positions=window(4096), d=64, scaling=YARN))
        built.append(case(f"{op}.packed", op, ("rope-positions",), positions=[5, 6, 7, 0, 1, 2, 9, 3], d=64))
        built.append(case(f"{op}.odd_rotary_dim", op, d=8, rotary_dim=5))
        for half in ("bfloat16", "float16"):  # positions made in the activations' dtype show only there
            built.append(case(f"{op}.{half}.p32768", op, (half,), positions=window(32768), d=64, dtype=half))
    return built


CASES = _cases()

# what the symptoms (not the catalogue) say of each mistake: a key every symptom of its failing cases starts with,
# where the symptom can tell it (cases the mutant fails that no measurement reads are allowed, but never another key)
SAID = {
    "rope.pairing_swapped": "rope:pairing:",
    "rope.rotate_half_sign": "rope:negated:",
    "rope.backward_rotates_forward": "rope:negated:",
    "rope.positions_from_1": "rope:shifted:",
    "rope.position_ids_ignored": "rope:rows:",
    "rope.frequencies_over_d_minus_1": "rope:frequencies:",
    "rope.frequencies_step_1": "rope:frequencies:",
    "rope.base_ignored": "rope:frequencies:",
    "rope.cos_sin_swapped": "rope:swapped:",
    "rope.angles_bfloat16": "rope:angle_precision:",
    "rope.angles_float16": "rope:angle_precision:",
    "rope.inv_freq_bfloat16": "rope:angle_precision:",
    "rope.positions_in_activation_dtype": "rope:angle_precision:",
    "rope.cos_sin_bfloat16": "rope:table_precision:",
    "rope.scaling_every_band": "rope:frequencies:",
    "rope.yarn_attention_factor_missing": "rope:amplitude:",
    "rope.partial_rotates_all": "rope:passthrough:",
    "rope.rotary_dim_unchecked": "accepts:",
}
# spec 2.0.0's mistakes (per-batch and M-RoPE positions, longrope, the fused rotation) are named by the replay on
# the goldens (tests/mutants/test_rope_mutants.py); the symptoms measure the forms of 1.3.0 these cases build; the
# mistakes in state kept between calls are tests/run/test_calls_on_one_instance.py's; those found in public trackers
# are named and read on the goldens (tests/mutants/test_reported_mistakes.py); the evading ones tests/explore's
LATER = {*rope_families.REGISTERED, *rope_reports.REPORTED}
ROPE = [
    m for m in catalogue() if m.area == "rope" and (m.mistake or m.id) not in LATER and m.fresh is None and not m.evades
]


def _said(mutant_id: str) -> str:
    return SAID[mutant_id.replace("rope.tables.", "rope.")]


@pytest.mark.parametrize("mutant", ROPE, ids=[m.id for m in ROPE])
def test_every_rope_mistake_is_named_and_measured(mutant) -> None:
    run = run_diagnosed(MutantAdapter(mutant.id), [c for c in CASES if mutant.covers(c.operation)])
    failing = [r for r in run.results if r.outcome in PROBLEMS]
    assert failing, f"{mutant.id} survives every built case"
    assert all(r.causes and mutant.names(r.causes[0].key) for r in failing), [
        (r.id, [c.id for c in r.causes]) for r in failing
    ]
    symptoms = [s for r in failing for s in r.causes if not s.is_mutant]
    assert symptoms, f"no measurement reads {mutant.id}"
    assert all(s.key.startswith(_said(mutant.id)) for s in symptoms), sorted({s.key for s in symptoms})
    assert len({r.id for r in failing for s in r.causes if not s.is_mutant}) >= len(failing) / 2


def _forced_failure(c, actual: dict) -> CaseResult:
    return CaseResult(c.id, (), (), c.operation, FAIL, actual=actual)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("base", [10000.0, 500000.0])
@pytest.mark.parametrize("pairing", ["half_split", "interleaved"])
def test_a_correct_float32_implementation_at_position_131072_gets_no_cause(op: str, base: float, pairing: str) -> None:
    """It passes, and even when told it failed, no measurement and no catalogue mistake is said of it."""
    ops = float32_operations()
    chosen = [
        case(f"f32.{op}.{p0}", op, positions=window(p0, 16), d=128, base=base, pairing=pairing, lead=(2, 3))
        for p0 in (0, 4096, 32768, 131072 - 8, 131072)
    ]
    run = run_diagnosed(ImplementationAdapter(Implementation(ops), "float32"), chosen)
    assert [r.id for r in run.results if r.outcome in PROBLEMS] == []
    for c in chosen:
        inputs = c.inputs()
        names = [
            n
            for n in ("x", "position_ids", "rotary_dim", "base", "scaling", "pairing", "grad_output", "dtype")
            if n in inputs
        ]
        out = ops[op](**{n: inputs[n] for n in names})
        actual = (
            dict(zip(("cos", "sin"), out))
            if op == "rope_tables"
            else {("grad_x" if op == "rope_backward" else "output"): out}
        )
        result = _forced_failure(c, actual)
        assert describe(c, inputs, result) == []
        assert diagnose_case(c, result) == []


def test_the_precision_of_the_angles_is_read_at_every_window() -> None:
    """bfloat16 angles (transformers #25681, candle #3520): named at p0 = 0 already, and at 131072."""
    for p0 in (0, 4096, 131072):
        c = case(f"bf16.{p0}", "rope_forward", positions=window(p0), d=64)
        run = run_diagnosed(MutantAdapter("rope.angles_bfloat16"), [c])
        keys = [s.key for s in run.results[0].causes if not s.is_mutant]
        assert keys == ["rope:angle_precision:rope_forward:angles:bfloat16"], keys
        assert "bfloat16" in run.results[0].causes[1].summary


@pytest.mark.parametrize("p0", [0, 4096])
def test_a_second_mistake_besides_bfloat16_tables_is_still_read(p0: int) -> None:
    """modded-nanogpt's rotary (#39): cos/sin cached in bfloat16 and applied as x1*cos + x2*sin, x2*cos - x1*sin
    (the negative angle): both are said, the tables' precision first."""
    import ml_dtypes

    from embconf.reference.rope import inverse_frequencies, pair_columns

    c = case(f"nanogpt.{p0}", "rope_forward", positions=window(p0, 16), d=64)
    inputs = c.inputs()
    theta, _ = inverse_frequencies(64, 10000.0, None, p0 + 15)
    angles = inputs["position_ids"][:, None] * theta
    cos = np.cos(angles).astype(ml_dtypes.bfloat16).astype(np.float64)
    sin = np.sin(angles).astype(ml_dtypes.bfloat16).astype(np.float64)
    i, j = pair_columns(64, "half_split")
    x = inputs["x"].astype(np.float64)
    out = x.copy()
    out[..., i], out[..., j] = x[..., i] * cos + x[..., j] * sin, x[..., j] * cos - x[..., i] * sin
    found = describe(c, inputs, _forced_failure(c, {"output": out.astype(np.float32)}))
    assert [s.key for s in found] == ["rope:table_precision:rope_forward", "rope:negated:rope_forward"]
    assert "bfloat16" in found[0].summary and not found[0].complete


def test_read_names_only_what_explains_every_angle() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 8, 16))
    positions = np.arange(8)
    theta = 10000.0 ** (-2.0 * np.arange(8) / 16)
    angles = positions[:, None] * theta

    def rotated(by: np.ndarray) -> np.ndarray:
        out = x.copy()
        out[..., :8] = x[..., :8] * np.cos(by) - x[..., 8:] * np.sin(by)
        out[..., 8:] = x[..., 8:] * np.cos(by) + x[..., :8] * np.sin(by)
        return out

    want = rotation(x, rotated(angles), 16, "half_split")
    assert read(rotation(x, rotated(angles), 16, "half_split"), want, positions, 1e-9, theta) is None
    negated = read(rotation(x, rotated(-angles), 16, "half_split"), want, positions, 1e-9, theta)
    assert negated is not None and negated.params == {"departures": [NEGATED]}
    shifted = read(rotation(x, rotated(angles + theta), 16, "half_split"), want, positions, 1e-9, theta)
    assert shifted is not None and shifted.kind is Kind.MODEL and shifted.params == {"departures": [SHIFTED]}
    both = read(rotation(x, rotated(-(angles + theta)), 16, "half_split"), want, positions, 1e-9, theta)
    assert both is not None and both.params == {"departures": [SHIFTED, NEGATED]}
    noise = rotation(x, rotated(angles + rng.random(angles.shape)), 16, "half_split")
    assert noise.residual < 1e-9 and read(noise, want, positions, 1e-9, theta) is None


PRECISION_BUGS = {  # held-out reproductions of the public precision bugs -> the precision their verdict must name
    "hf_llama_cast_buffer": "bfloat16",  # transformers #25681 / #29285
    "gpt_neox_half_cache": "float16",  # gpt-neox #1003
    "candle_qwen2_rope_i": "bfloat16",  # candle #3520
    "modded_nanogpt_rotary": "bfloat16",  # modded-nanogpt #39
    "sglang_jax_inv_freq": "bfloat16",  # sglang-jax #1472, transformers #29496
}


@pytest.mark.parametrize("module, precision", sorted(PRECISION_BUGS.items()))
def test_the_public_precision_bugs_fail_with_a_cause_naming_the_precision(
    module: str, precision: str, tmp_path
) -> None:

    from helpers import ROOT, run_cli

    report = tmp_path / "report.json"
    path = ROOT / "tests" / "realcode" / f"{module}.py"
    done = run_cli("run", "--impl", f"functions:{path}", "-q", "--report-json", str(report))
    assert_exit(done, 1)
    verdict = read_report(report)["verdict"]
    assert any(precision in entry["title"] for entry in verdict["mistakes"]), verdict["summary"]
