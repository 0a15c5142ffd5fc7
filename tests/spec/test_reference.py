"""The reference proved right by independent routes: naive loops, one-hot products, Python's math."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from embconf import reference as ref
from embconf.reference.errors import EmbeddingError
from embconf.reference.sinusoid import sinusoidal_table


def one_hot(ids: np.ndarray, vocab: int) -> np.ndarray:
    flat = ids.reshape(-1)
    return (flat[:, None] == np.arange(vocab)[None, :]).astype(np.float64)


def loop_lookup(weight: np.ndarray, ids: np.ndarray) -> np.ndarray:
    out = np.empty(ids.shape + weight.shape[1:], weight.dtype)
    for index in np.ndindex(*ids.shape):
        out[index] = [weight[int(ids[index]), d] for d in range(weight.shape[1])]
    return out


def math_sinusoid(max_len: int, dim: int, convention: str = "interleaved") -> list[list[float]]:
    """The formulas written out with Python's math module, element by element."""
    rows = []
    for pos in range(max_len):
        if convention == "tensor2tensor":
            half = dim // 2
            freqs = [10000.0 ** (-k / max(half - 1, 1)) for k in range(half)]
            row = [math.sin(pos * f) for f in freqs] + [math.cos(pos * f) for f in freqs] + [0.0] * (dim % 2)
        else:
            freqs = [10000.0 ** (-(2 * k) / dim) for k in range((dim + 1) // 2)]
            sines = [math.sin(pos * f) for f in freqs]
            cosines = [math.cos(pos * f) for f in freqs[: dim // 2]]
            if convention == "concatenated":
                row = sines + cosines
            else:
                row = [sines[c // 2] if c % 2 == 0 else cosines[c // 2] for c in range(dim)]
        rows.append(row)
    return rows


ids_and_tables = st.integers(1, 12).flatmap(
    lambda v: st.tuples(
        st.just(v),
        hnp.arrays(np.int64, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4), elements=st.integers(0, v - 1)),
        st.integers(1, 5),
    )
)


@settings(max_examples=60, deadline=None)
@given(ids_and_tables, st.integers(0, 2**32 - 1))
def test_lookup_matches_loops_and_backward_matches_one_hot(params, seed):
    vocab, ids, dim = params
    rng = np.random.default_rng(seed)
    weight = rng.standard_normal((vocab, dim)).astype(np.float32)
    grad = rng.standard_normal(ids.shape + (dim,)).astype(np.float32)
    out = ref.embedding_forward(weight, ids)
    assert out.dtype == np.float32 and out.shape == ids.shape + (dim,)
    assert np.array_equal(out, loop_lookup(weight, ids))
    grad_w = ref.embedding_backward(weight, ids, grad)
    exact = one_hot(ids, vocab).T @ grad.reshape(-1, dim).astype(np.float64)
    assert np.array_equal(grad_w, exact.astype(np.float32))
    untouched = np.setdiff1d(np.arange(vocab), ids.reshape(-1))
    assert not grad_w[untouched].any()
    assert math.isclose(
        float(grad_w.astype(np.float64).sum()), float(grad.astype(np.float64).sum()), rel_tol=1e-5, abs_tol=1e-4
    )


def test_module_example_gradient():
    weight = np.zeros((3, 2), np.float32)
    grad = ref.embedding_backward(weight, np.array([0, 2, 0]), np.ones((3, 2), np.float32))
    assert grad.tolist() == [[2.0, 2.0], [0.0, 0.0], [1.0, 1.0]]


def test_row_sparse_is_the_dense_gradient_restricted():
    weight = np.zeros((8, 2), np.float32)
    ids = np.array([5, 1, 5, 3, 1])
    grad = np.arange(10, dtype=np.float32).reshape(5, 2)
    indices, values = ref.embedding_backward_sparse(weight, ids, grad)
    assert indices.tolist() == [1, 3, 5] and indices.dtype == np.int64
    assert values.tolist() == [[2 + 8, 3 + 9], [6, 7], [0 + 4, 1 + 5]]


@pytest.mark.parametrize(
    "ids, kind",
    [
        (np.array([5]), "index_out_of_range"),
        (np.array([-1]), "index_out_of_range"),
        (np.array([2**40]), "index_out_of_range"),
        (np.array([0.5], np.float32), "invalid_index"),
        (np.array([np.nan], np.float32), "invalid_index"),
        (np.array([np.inf], np.float32), "invalid_index"),
        (np.array([-1.0], np.float32), "index_out_of_range"),
    ],
)
def test_id_validation(ids, kind):
    with pytest.raises(EmbeddingError) as info:
        ref.embedding_forward(np.zeros((5, 2), np.float32), ids)
    assert info.value.kind == kind


@pytest.mark.parametrize("max_len, dim", [(1, 1), (20, 1), (20, 2), (20, 3), (33, 7), (40, 8), (64, 16)])
@pytest.mark.parametrize("convention", ["interleaved", "concatenated", "tensor2tensor"])
def test_sinusoid_matches_math(max_len, dim, convention):
    table = sinusoidal_table(max_len, dim, "float64", convention)
    expected = np.array(math_sinusoid(max_len, dim, convention))
    assert table.shape == (max_len, dim)
    bound = 4 * np.spacing(np.maximum(np.arange(max_len), 1.0))[:, None]  # float64 ulps of the angle
    assert np.all(np.abs(table - expected) <= bound)
    rounded = sinusoidal_table(max_len, dim, "float32", convention)
    assert rounded.dtype == np.float32
    assert np.abs(rounded.astype(np.float64) - expected).max() <= np.spacing(np.float32(1.0))


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 300), st.integers(1, 40), st.integers(0, 300))
def test_sinusoid_bounds_and_prefix(max_len, dim, extra):
    short = sinusoidal_table(max_len, dim)
    long = sinusoidal_table(max_len + extra, dim)
    assert np.all(np.abs(short) <= 1.0)
    assert np.array_equal(long[:max_len], short)
    assert np.array_equal(short[0, 0::2], np.zeros((dim + 1) // 2, np.float32))
    assert np.array_equal(short[0, 1::2], np.ones(dim // 2, np.float32))


def test_learned_positions_match_loops():
    rng = np.random.default_rng(0)
    table, x, grad = rng.standard_normal((10, 3)), rng.standard_normal((4, 5, 3)), rng.standard_normal((4, 5, 3))
    out = ref.learned_positions_forward(table, x, 2)
    grad_x, grad_table = ref.learned_positions_backward(table, x, 2, grad)
    for b in range(4):
        for t in range(5):
            assert np.array_equal(out[b, t], x[b, t] + table[2 + t])
    assert np.array_equal(grad_x, grad)
    for row in range(10):
        expected = sum(grad[b, row - 2] for b in range(4)) if 2 <= row < 7 else np.zeros(3)
        np.testing.assert_allclose(grad_table[row], expected, rtol=1e-15, atol=0)


@pytest.mark.parametrize("pos", ["learned", "sinusoidal", "none"])
@pytest.mark.parametrize("scale", [False, True])
def test_layer_is_the_composition_of_its_parts(pos, scale):
    rng = np.random.default_rng(1)
    vocab, dim, max_len, start = 9, 6, 12, 3
    weight, positions = rng.standard_normal((vocab, dim)), rng.standard_normal((max_len, dim))
    tokens = rng.integers(0, vocab, (2, 4))
    grad = rng.standard_normal((2, 4, dim))
    config = {
        "vocab_size": vocab,
        "embed_dim": dim,
        "max_seq_len": max_len,
        "pos_encoding": pos,
        "scale_embeddings": scale,
    }
    table = positions if pos == "learned" else None
    c = math.sqrt(dim) if scale else 1.0
    pos_rows = {
        "learned": positions[start : start + 4],
        "sinusoidal": sinusoidal_table(max_len, dim, "float64")[start : start + 4],
        "none": 0.0,
    }[pos]
    out = ref.embedding_layer_forward(config, weight, table, tokens, start)
    np.testing.assert_allclose(out, ref.embedding_forward(weight, tokens) * c + pos_rows, rtol=1e-14, atol=1e-14)
    out_1d = ref.embedding_layer_forward(config, weight, table, tokens[0], start)
    assert out_1d.shape == (4, dim) and np.array_equal(out_1d, out[0])
    grad_w, grad_p = ref.embedding_layer_backward(config, weight, table, tokens, start, grad)
    np.testing.assert_allclose(grad_w, c * ref.embedding_backward(weight, tokens, grad), rtol=1e-14, atol=1e-14)
    if pos == "learned":
        np.testing.assert_allclose(grad_p, ref.learned_positions_backward(positions, grad, start, grad)[1], rtol=1e-14)
    else:
        assert grad_p is None


def test_memory_figures_of_the_module():
    gpt3 = ref.table_bytes(50257, 12288, "float32")
    assert gpt3["bytes"] == 2_470_232_064
    assert round(gpt3["bytes"] / 2**30, 2) == 2.30 and gpt3["mebibytes"] == 2_470_232_064 / 2**20
    assert gpt3["megabytes"] == 2470.232064
    assert ref.table_bytes(30522, 768, "bfloat16")["bytes"] == 30522 * 768 * 2
    assert ref.table_bytes(1, 1, "int8")["bytes"] == 1
    assert ref.parameter_count(
        {"vocab_size": 100, "embed_dim": 16, "max_seq_len": 32, "pos_encoding": "sinusoidal"}
    ) == {"trainable": 1600, "non_trainable": 512}
    assert ref.parameter_count({"vocab_size": 100, "embed_dim": 16})["trainable"] == 1600 + 512 * 16
    assert ref.gradient_bytes(4, 3, "float32", np.array([2, 0, 2])) == {"dense": 48, "row_sparse": 2 * (12 + 8)}
    assert ref.adam_state_bytes(10, "float16") == {"bytes": 40}
