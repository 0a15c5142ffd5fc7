"""The rotary-position adapters of issue 22 (transformers' models, keras_hub's RotaryEmbedding, MLX's nn.RoPE) and of
issue 35 (torchtune, x-transformers, Megatron-Core, ggml in C, transformers' Phi-3 and Qwen2-VL).

Each adapter's own operations are measured by ``rope_probe.py`` in a fresh interpreter against a float64
formula written there (the rotation of pairs by ``p * base^(-2k/r)``): for the pairing it declares, and
never for the other one, so a declaration that is not what the framework does fails. What it declines and
which errors it maps are asserted too. Every test skips with the reason when its framework is absent.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import outcomes, run_reported
from test_frameworks import needs
from test_more_frameworks import measuring

from embconf.adapters.rope import PAIRINGS, contiguous_start, probe, tables_of

HF_MODELS = [
    "transformers:llama",
    "transformers:gpt_neox",
    "transformers:qwen2",
    "transformers:gemma",
    "transformers:phi",
    "transformers:phi3",
    "transformers:qwen2_vl",
]
KERAS = ["keras:tensorflow", "keras:jax", "keras:torch"]
ROTARY_TORCH = ["rotary_embedding_torch", "rotary_embedding_torch:freqs"]
LIBRARIES = ["torchtune", "x_transformers", "megatron", "ggml"]  # issue 35: PyTorch libraries and ggml (C)
ALL = [*HF_MODELS, *KERAS, "mlx", *ROTARY_TORCH, *LIBRARIES]
PARTIAL = ["transformers:gpt_neox", "transformers:phi", "transformers:phi3", "mlx", *ROTARY_TORCH]
PARTIAL += ["x_transformers", "megatron", "ggml"]
CONTIGUOUS = ["mlx", "rotary_embedding_torch", "megatron"]  # an offset: one contiguous run of positions
PROBE = Path(__file__).with_name("rope_probe.py")


@functools.lru_cache(maxsize=None)
def _measured(impl: str) -> dict:
    result = subprocess.run([sys.executable, str(PROBE), impl], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def measured(impl: str) -> dict:
    needs(impl)
    return _measured(impl)


@pytest.mark.parametrize("impl", ALL)
def test_each_rope_adapter_computes_what_it_declares_and_declines_the_rest(impl):
    """One fresh interpreter per implementation (its measurements are a few seconds of framework imports)."""
    found = measured(impl)
    assert found["forward"], f"{impl} declares no pairing"
    for pairing, (declared, other) in found["forward"].items():
        assert declared <= 1, f"{pairing}: {declared}x the allowed error"
        assert other > 100, f"{pairing} computes the other pairing too"  # the declaration is the framework's
    negative, positive = found["backward"]  # the rotation by the negative angle, not the forward one
    assert negative <= 1 and positive > 100
    tables = found["tables"]  # one column per frequency, float32, up to position 131071
    assert tables["shape"] == [4, 3] and tables["dtype"] == "float32" and tables["error"] <= 1
    if impl in PARTIAL:
        error, rest_copied = found["partial"]
        assert "rope-partial" in found["features"] and error <= 1 and rest_copied
    else:
        assert "rope-partial" not in found["features"] and "declined" in found["partial"]
    if impl in CONTIGUOUS:
        assert "rope-positions" not in found["features"] and "contiguous run" in found["scattered"]["declined"]
    else:
        assert "rope-positions" in found["features"] and found["scattered"] is True
    assert found["rank2"] == [5, 8]
    assert found["unknown_pairing"] == {"kind": "invalid_config", "decided_by": "glue"}
    if impl in HF_MODELS:  # its own KeyError for a rope_type ROPE_INIT_FUNCTIONS lacks
        assert found["unknown_rope_type"] == {"kind": "invalid_config", "decided_by": ""}
    for dtype in ("float16", "bfloat16"):
        if impl not in KERAS and dtype in found["features"]:  # keras claims no half dtype; ggml no bfloat16
            kept, error = found[dtype]
            assert kept == dtype
            # rotate_queries_or_keys makes the positions 4093..4097 in x's dtype (get_seq_pos): wrong angles
            assert error > 1 if impl == "rotary_embedding_torch" else error < 0.1, error
    if "rope-yarn" in found["features"]:
        assert found["yarn_tables"] <= 1  # transformers' YaRN, attention factor 0.1 ln(8) + 1 included
        if impl in KERAS:
            assert "attention_factor" in found["yarn_attention_factor"]["declined"]
        else:
            assert found["yarn_attention_factor"] is True


def test_mlx_maps_its_own_refusals():
    needs("mlx")
    from embconf.adapters.mlx_rope import rope_errors
    from embconf.reference.errors import EmbeddingError

    for message, kind in (
        ("[rope] dims must be even but got 5.", "invalid_config"),
        ("[rope] Input must have at least 3 dimensions", "shape_mismatch"),
    ):
        with pytest.raises(EmbeddingError) as raised, rope_errors():
            raise ValueError(message)
        assert raised.value.kind == kind


def test_probe_rotates_into_the_tables_of_either_pairing():
    angles = np.array([[1.0, 0.01]])  # base 100, r = 4, position 1: frequencies 1 and 1/100
    for pairing in ("half_split", "interleaved"):
        rows = probe(1, 4, pairing, "float64")
        half = 2
        first = np.arange(half) if pairing == "half_split" else 2 * np.arange(half)
        second = first + half if pairing == "half_split" else first + 1
        out = rows.copy()
        out[:, first] = rows[:, first] * np.cos(angles) - rows[:, second] * np.sin(angles)
        out[:, second] = rows[:, second] * np.cos(angles) + rows[:, first] * np.sin(angles)
        cos, sin = tables_of(out, pairing)
        assert np.array_equal(cos, np.cos(angles)) and np.array_equal(sin, np.sin(angles))
    assert contiguous_start(np.array([9, 10, 11])) == 9 and contiguous_start(np.array([9, 11])) is None


# ----- on the goldens: every value case passes except the framework's own measured bugs -------------------

# rotary-embedding-torch: `theta_rescale_factor ** (dim / (dim - 2))` divides by zero for rotary_dim 2 (no rescaling
# asked), and its main API makes the positions in x's dtype (get_seq_pos): float16/bfloat16 angles, wrong from 2048 on.
DIM_2 = {"rope.forward.interleaved.d2_p0", "rope.tables.d2_p0", "rope.forward.interleaved.partial_d6_r2"}
HALF_POSITIONS = {
    "rope.tables.bfloat16_d64_p131072",
    "rope.tables.float16_d128_p32768",
    "rope.forward.interleaved.float16_d64_p32768",
}
# x-transformers has the same `base_rescale_factor ** (dim / (dim - 2))`.
VALUE_DEVIATIONS = {
    "rotary_embedding_torch": DIM_2 | HALF_POSITIONS,
    "rotary_embedding_torch:freqs": DIM_2,
    "x_transformers": DIM_2,
    # Megatron-Core's llama3 takes the factor only: bands 2 and 8 get Llama 3.1's 1 and 4 (llama-models #241's class)
    "megatron": {
        "rope.tables.llama3_bands",
        *(f"rope.{op}.{pairing}.llama3_bands_d128" for op in ("forward", "backward") for pairing in PAIRINGS),
    },
}
# Llama3ScaledRoPE always scales: only the llama3 cases apply to it
FEWER_CASES = {"torchtune:llama3": 3}
ONNX_ROPE = ["onnxruntime_rope", "onnxruntime_rope:contrib"]


@pytest.mark.slow_tier
@pytest.mark.parametrize(
    "impl", [*HF_MODELS, "keras", "mlx", *ROTARY_TORCH, *LIBRARIES, "torchtune:llama3", *ONNX_ROPE]
)
def test_every_rope_value_case_passes_but_the_frameworks_own_bugs(tmp_path, impl):
    needs(impl)
    found = outcomes(run_reported(tmp_path, impl, *measuring(impl, "rope.*"), timeout=900)[1])
    # the hand-written value cases; the pairwise goldens' deviations (error boundaries among them) are each column's
    # matrix row, which test_frameworks.py::test_each_implementation_deviates_exactly_as_the_matrix_records holds
    values = {case: outcome for case, outcome in found.items() if not case.startswith(("rope.error.", "rope.pairs."))}
    passed = sum(outcome == "pass" for outcome in values.values())
    assert passed >= FEWER_CASES.get(impl, 10), values  # it runs, and passes, the bulk
    failing = {case for case, outcome in values.items() if outcome not in ("pass", "not_applicable")}
    assert failing == VALUE_DEVIATIONS.get(impl, set())
