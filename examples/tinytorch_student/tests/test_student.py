"""Tests of the example TinyTorch student package (module 11, embeddings).

Run from the repository root: python -m pytest examples/tinytorch_student/tests -q
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PACKAGE_ROOT))

from tinytorch.core.autograd import Function  # noqa: E402
from tinytorch.core.embeddings import (  # noqa: E402
    Embedding,
    EmbeddingFunction,
    EmbeddingLayer,
    PositionalEncoding,
    _compute_sinusoidal_table,
    create_sinusoidal_embeddings,
)
from tinytorch.core.tensor import Tensor  # noqa: E402


def seeded(seed: int = 0) -> np.random.Generator:
    np.random.seed(seed)  # the layers draw their init from the global generator
    return np.random.default_rng(seed)


def reference_sinusoid(max_len: int, dim: int) -> np.ndarray:
    """The formula evaluated element by element in float64 with the math module."""
    table = np.zeros((max_len, dim))
    for pos in range(max_len):
        for col in range(dim):
            two_i = col - col % 2
            angle = pos * math.exp(-two_i * math.log(10000.0) / dim)
            table[pos, col] = math.sin(angle) if col % 2 == 0 else math.cos(angle)
    return table


# ----- Tensor and autograd ------------------------------------------------------

def test_tensor_storage_is_float32():
    for data in ([1, 2, 3], np.arange(3, dtype=np.int64), np.ones(2, dtype=np.float64), 5):
        assert Tensor(data).data.dtype == np.float32
    t = Tensor([[1, 2], [3, 4]])
    assert t.shape == (2, 2) and t.grad is None and t.requires_grad is False


def test_module_loads_by_file_path(tmp_path):
    module_file = str(PACKAGE_ROOT / "tinytorch" / "core" / "embeddings.py")
    code = (
        "import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('impl', {module_file!r})\n"
        "mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)\n"
        "out = mod.EmbeddingLayer(10, 4)(mod.Tensor([[1, 2]]))\n"
        "out.sum().backward(); print(out.shape)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path,
                            capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "(1, 2, 4)"


def test_backward_is_off_until_autograd_is_imported():
    code = (
        "from tinytorch.core.tensor import Tensor\n"
        "t = Tensor([1.0], requires_grad=True)\n"
        "try:\n    t.backward()\nexcept NotImplementedError:\n    print('off')\n"
        "import tinytorch.core.autograd\n"
        "t.backward(); print(t.grad)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=PACKAGE_ROOT,
                            capture_output=True, text=True, check=True)
    assert result.stdout.split("\n")[:2] == ["off", "[1.]"]


def test_broadcast_gradients_reduce_to_operand_shapes():
    a = Tensor(np.arange(6).reshape(2, 3), requires_grad=True)
    b = Tensor([[10.0], [20.0]], requires_grad=True)  # (2, 1)
    c = Tensor([1.0, 2.0, 3.0], requires_grad=True)  # (3,)
    out = (a * b + c) * 2.0
    g = np.arange(6, dtype=np.float32).reshape(2, 3)
    out.backward(g)
    np.testing.assert_array_equal(a.grad, 2 * g * np.array([[10], [20]]))
    np.testing.assert_array_equal(b.grad, (2 * g * a.data).sum(axis=1, keepdims=True))
    np.testing.assert_array_equal(c.grad, (2 * g).sum(axis=0))
    assert all(t.grad.dtype == np.float32 for t in (a, b, c))


def test_scalar_on_the_left_and_numpy_on_the_left():
    a = Tensor([1.0, 2.0], requires_grad=True)
    out = 3 * a + np.array([1.0, 1.0])
    assert isinstance(out, Tensor)
    out.backward(Tensor([1.0, 1.0]))
    np.testing.assert_array_equal(a.grad, [3.0, 3.0])


def test_grads_accumulate_and_non_leaves_get_none():
    w = Tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    const = Tensor([[1.0, 1.0], [1.0, 1.0]])
    hidden = w * const
    hidden.sum().backward()
    (w * 2).mean().backward()
    np.testing.assert_array_equal(w.grad, np.full((2, 2), 1.5))
    assert hidden.grad is None and const.grad is None


def test_backward_without_gradient_needs_one_element():
    t = Tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError):
        (t * 2).backward()
    (t * 2)[1:].reshape(1, 1).backward()
    np.testing.assert_array_equal(t.grad, [0.0, 2.0])


def test_graph_is_freed_after_backward():
    t = Tensor([1.0], requires_grad=True)
    out = t * 3
    out.backward()
    with pytest.raises(RuntimeError):
        out.backward()


def test_reshape_getitem_and_mean_axis_gradients():
    t = Tensor(np.arange(12).reshape(3, 4), requires_grad=True)
    out = t[np.array([0, 0, 2])].reshape(2, 6).mean(axis=1)
    out.backward(np.array([6.0, 12.0]))
    expected = np.zeros((3, 4))
    expected[0] = [1 + 1, 1 + 1, 1 + 2, 1 + 2]  # row 0 taken twice
    expected[2] = [2, 2, 2, 2]
    np.testing.assert_array_equal(t.grad, expected)


# ----- Embedding ---------------------------------------------------------------

@pytest.mark.parametrize("ids_shape", [(), (4,), (2, 3), (2, 2, 3), (0,), (2, 0)])
def test_lookup_shapes_and_values(ids_shape):
    rng = seeded()
    emb = Embedding(vocab_size=7, embed_dim=5)
    ids = rng.integers(0, 7, size=ids_shape)
    out = emb(Tensor(ids))
    assert out.shape == ids_shape + (5,)
    assert out.data.dtype == np.float32
    np.testing.assert_array_equal(out.data, emb.weight.data[ids])
    assert not np.shares_memory(out.data, emb.weight.data)
    np.testing.assert_array_equal(emb.forward(Tensor(ids)).data, out.data)

    out.backward(np.ones(out.shape, dtype=np.float32))
    counts = np.bincount(ids.ravel(), minlength=7).astype(np.float32)
    np.testing.assert_array_equal(emb.weight.grad, np.repeat(counts[:, None], 5, axis=1))


def test_init_parameters_and_bounds():
    seeded()
    emb = Embedding(100, 28)
    assert emb.vocab_size == 100 and emb.embed_dim == 28
    assert emb.weight.shape == (100, 28) and emb.weight.requires_grad
    assert np.abs(emb.weight.data).max() <= math.sqrt(6 / 128)
    params = emb.parameters()
    assert params == [emb.weight] and params[0] is emb.weight
    assert emb.parameters() is not params


def test_rows_are_copied_bit_exactly():
    emb = Embedding(4, 4)
    special = np.array([np.nan, np.inf, -np.inf, -0.0], dtype=np.float32)
    emb.weight.data[1] = special
    out = emb(Tensor([1, 1])).data
    assert out.view(np.uint32)[0].tolist() == special.view(np.uint32).tolist()
    emb.weight.data[1] = 0.0  # mutating the table afterwards leaves the output alone
    assert np.isnan(out[1, 0])


def test_backward_accumulates_repeated_ids():
    emb = Embedding(5, 2)
    out = emb(Tensor([0, 2, 0]))
    g = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=np.float32)
    out.backward(g)
    np.testing.assert_array_equal(emb.weight.grad[0], g[0] + g[2])
    np.testing.assert_array_equal(emb.weight.grad[2], g[1])
    assert np.all(emb.weight.grad[[1, 3, 4]] == 0)

    emb.weight.grad = None
    emb(Tensor([0, 2, 0])).sum().backward()
    np.testing.assert_array_equal(emb.weight.grad[[0, 2]], [[2, 2], [1, 1]])


def test_embedding_function_apply():
    assert issubclass(EmbeddingFunction, Function)
    weight = Tensor(np.arange(12).reshape(4, 3), requires_grad=True)
    out = EmbeddingFunction.apply(weight, indices=np.array([[3, 3], [0, 1]]))
    assert out.shape == (2, 2, 3)
    np.testing.assert_array_equal(out.data[0, 0], [9, 10, 11])
    (grad_weight,) = out._grad_fn.backward(np.ones((2, 2, 3), dtype=np.float32))
    assert grad_weight.dtype == np.float32
    np.testing.assert_array_equal(grad_weight[:, 0], [1, 1, 0, 2])


@pytest.mark.parametrize("bad", [0.5, -0.5, np.nan, np.inf, -np.inf])
def test_non_integer_ids_are_rejected(bad):
    with pytest.raises(ValueError, match="finite integers"):
        Embedding(10, 4)(Tensor([1.0, bad]))


@pytest.mark.parametrize("bad", [10, 11, -1, 1e9])
def test_out_of_range_ids_are_rejected(bad):
    with pytest.raises(ValueError, match="out of range"):
        Embedding(10, 4)(Tensor([[1.0, bad]]))


def test_integrality_is_checked_before_range():
    with pytest.raises(ValueError, match="finite integers"):
        Embedding(10, 4)(Tensor([99.0, 0.5]))


# ----- sinusoidal table ----------------------------------------------------------

@pytest.mark.parametrize("dim", [1, 2, 7, 16])
def test_sinusoid_matches_float64_formula(dim):
    table = _compute_sinusoidal_table(2050, dim)
    assert table.dtype == np.float32 and table.shape == (2050, dim)
    expected = reference_sinusoid(2050, dim)
    # float32 rounding of values in [-1, 1] is at most 2**-25 ~ 3e-8
    np.testing.assert_allclose(table, expected, rtol=0, atol=6e-8)


def test_sinusoid_odd_dim_layout():
    table = _compute_sinusoidal_table(10, 7).astype(np.float64)
    np.testing.assert_array_equal(table[0], [0, 1, 0, 1, 0, 1, 0])  # sin(0), cos(0)
    w_last = math.exp(-6 * math.log(10000.0) / 7)  # the 4th sine column, exponent over D=7
    assert table[9, 6] == pytest.approx(math.sin(9 * w_last), abs=1e-7)
    np.testing.assert_allclose(_compute_sinusoidal_table(4, 1)[:, 0], np.sin(np.arange(4)), atol=6e-8)
    np.testing.assert_allclose(_compute_sinusoidal_table(4, 2)[:, 1], np.cos(np.arange(4)), atol=6e-8)


def test_create_sinusoidal_embeddings_is_a_constant_tensor():
    t = create_sinusoidal_embeddings(12, 6)
    assert isinstance(t, Tensor) and not t.requires_grad
    np.testing.assert_array_equal(t.data, _compute_sinusoidal_table(12, 6))


# ----- learned positions ---------------------------------------------------------

def test_learned_positions_forward_backward_with_offset():
    rng = seeded(1)
    pe = PositionalEncoding(max_seq_len=10, embed_dim=4)
    assert pe.position_embeddings.shape == (10, 4) and pe.position_embeddings.requires_grad
    assert np.abs(pe.position_embeddings.data).max() <= math.sqrt(2 / 4)
    assert pe.parameters() == [pe.position_embeddings]

    x = Tensor(rng.standard_normal((3, 5, 4)), requires_grad=True)
    out = pe(x, start_pos=2)
    np.testing.assert_array_equal(out.data, x.data + pe.position_embeddings.data[2:7])
    g = rng.standard_normal((3, 5, 4)).astype(np.float32)
    out.backward(g)
    expected = np.zeros((10, 4), dtype=np.float32)
    expected[2:7] = g.sum(axis=0)
    np.testing.assert_allclose(pe.position_embeddings.grad, expected, rtol=1e-6)
    assert np.all(pe.position_embeddings.grad[[0, 1, 7, 8, 9]] == 0)
    np.testing.assert_array_equal(x.grad, g)


def test_learned_positions_accept_numpy_integers_and_reach_the_end():
    pe = PositionalEncoding(6, 2)
    out = pe.forward(Tensor(np.zeros((1, 2, 2))), start_pos=np.int64(4))
    np.testing.assert_array_equal(out.data[0], pe.position_embeddings.data[4:6])


@pytest.mark.parametrize(
    "shape, start_pos",
    [((2, 4), 0), ((1, 2, 3, 4), 0), ((1, 3, 5), 0), ((1, 7, 4), 0), ((1, 3, 4), 4),
     ((1, 3, 4), -1), ((1, 3, 4), 1.5), ((1, 3, 4), 1.0), ((1, 3, 4), True)],
)
def test_learned_positions_errors(shape, start_pos):
    with pytest.raises(ValueError):
        PositionalEncoding(6, 4)(Tensor(np.zeros(shape)), start_pos=start_pos)


# ----- EmbeddingLayer -------------------------------------------------------------

def expected_positions(layer: EmbeddingLayer, start: int, seq_len: int) -> np.ndarray:
    if layer.pos_encoding_type == "learned":
        return layer.pos_encoding.position_embeddings.data[start:start + seq_len]
    if layer.pos_encoding_type == "sinusoidal":
        return _compute_sinusoidal_table(layer.max_seq_len, layer.embed_dim)[start:start + seq_len]
    return np.zeros((seq_len, layer.embed_dim), dtype=np.float32)


@pytest.mark.parametrize("pos_encoding", ["learned", "sinusoidal", None])
@pytest.mark.parametrize("scale", [False, True])
@pytest.mark.parametrize("batched", [True, False])
def test_layer_forward_backward(pos_encoding, scale, batched):
    rng = seeded(2)
    layer = EmbeddingLayer(vocab_size=11, embed_dim=6, max_seq_len=9,
                           pos_encoding=pos_encoding, scale_embeddings=scale)
    ids = rng.integers(0, 11, size=(2, 4) if batched else (4,))
    ids.flat[:2] = 3  # a repeated id
    out = layer(Tensor(ids), start_pos=3)

    factor = np.float32(math.sqrt(6) if scale else 1.0)
    expected = layer.token_embedding.weight.data[ids] * factor + expected_positions(layer, 3, 4)
    assert out.shape == ids.shape + (6,)
    np.testing.assert_array_equal(out.data, expected)

    g = rng.standard_normal(out.shape).astype(np.float32)
    out.backward(g)
    grad_w = np.zeros((11, 6), dtype=np.float32)
    np.add.at(grad_w, ids, g * factor)
    np.testing.assert_allclose(layer.token_embedding.weight.grad, grad_w, rtol=1e-6)
    untouched = np.setdiff1d(np.arange(11), ids)
    assert np.all(layer.token_embedding.weight.grad[untouched] == 0)

    if pos_encoding == "learned":
        grad_p = np.zeros((9, 6), dtype=np.float32)
        grad_p[3:7] = g.reshape(-1, 4, 6).sum(axis=0)
        np.testing.assert_allclose(layer.pos_encoding.position_embeddings.grad, grad_p, rtol=1e-6)
    elif pos_encoding == "sinusoidal":
        assert layer.pos_encoding.grad is None and not layer.pos_encoding.requires_grad


def test_layer_attributes_and_parameters():
    learned = EmbeddingLayer(20, 8, max_seq_len=16)
    assert learned.pos_encoding_type == "learned" and learned.max_seq_len == 16
    assert learned.vocab_size == 20 and learned.embed_dim == 8 and learned.scale_embeddings is False
    assert isinstance(learned.token_embedding, Embedding)
    assert isinstance(learned.pos_encoding, PositionalEncoding)
    params = learned.parameters()
    assert params[0] is learned.token_embedding.weight
    assert params[1] is learned.pos_encoding.position_embeddings and len(params) == 2

    sinus = EmbeddingLayer(20, 8, max_seq_len=16, pos_encoding="sinusoidal")
    assert isinstance(sinus.pos_encoding, Tensor) and sinus.pos_encoding.shape == (16, 8)
    assert sinus.parameters() == [sinus.token_embedding.weight]

    plain = EmbeddingLayer(20, 8, pos_encoding=None)
    assert plain.pos_encoding is None and plain.max_seq_len == 512
    assert len(plain.parameters()) == 1 and plain.parameters()[0] is plain.token_embedding.weight


@pytest.mark.parametrize("bad", ["rope", "Learned", "", 0])
def test_layer_rejects_unknown_pos_encoding(bad):
    with pytest.raises(ValueError):
        EmbeddingLayer(10, 4, pos_encoding=bad)


@pytest.mark.parametrize("pos_encoding", ["learned", "sinusoidal", None])
def test_layer_enforces_max_seq_len_and_start_pos(pos_encoding):
    layer = EmbeddingLayer(10, 4, max_seq_len=5, pos_encoding=pos_encoding)
    assert layer(Tensor([[1, 2]]), start_pos=3).shape == (1, 2, 4)
    for tokens, start in [([[1, 2]], 4), ([1] * 6, 0), ([1], -1), ([1], 0.5), ([1], True)]:
        with pytest.raises(ValueError):
            layer(Tensor(tokens), start_pos=start)


def test_layer_reads_token_weight_at_call_time():
    layer = EmbeddingLayer(5, 3, max_seq_len=4, pos_encoding=None)
    layer(Tensor([0, 1]))
    new_weight = Tensor(np.arange(15).reshape(5, 3), requires_grad=True)
    layer.token_embedding.weight = new_weight
    out = layer(Tensor([4, 0]))
    np.testing.assert_array_equal(out.data, [[12, 13, 14], [0, 1, 2]])
    out.sum().backward()
    np.testing.assert_array_equal(new_weight.grad[:, 0], [1, 0, 0, 0, 1])
    assert layer.parameters()[0] is new_weight
