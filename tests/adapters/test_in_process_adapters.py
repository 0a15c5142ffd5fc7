"""The in-process adapters directly: the functions adapter's declared capabilities and typed errors, the tinytorch
adapter's reading of a student's module (what it declares, missing gradients, coarse rejections, a trainable
sinusoidal constant, parameter counts), and the torch adapter's install hint, error mapping and skips."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from helpers import EXAMPLE_STUDENT, IMPLS, ROOT

from embconf.adapters import ImplementationError, create_adapter
from embconf.model.contract import UNSPECIFIED, Status

pytestmark = pytest.mark.usefixtures("isolated_imports")

EXAMPLE_IMPL = f"tinytorch:{EXAMPLE_STUDENT.relative_to(ROOT)}"
NUMPY_FUNCTIONS = f"functions:{(IMPLS / 'numpy_functions.py').relative_to(ROOT)}"


# ----- the functions adapter ----------------------------------------------------------------


def _module(tmp_path: Path, name: str, source: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return str(path)


def test_functions_capabilities_come_from_the_module(tmp_path):
    adapter = create_adapter(NUMPY_FUNCTIONS)
    caps = adapter.capabilities()
    assert len(caps.operations) == 12 and caps.conventions == frozenset()  # the canonical table: nothing declared
    # stateful: a module of plain functions is its one instance (spec section 9.7)
    assert caps.features == {"float64", "int32_ids", "float_ids", "row_sparse_grad", "large_tables", "stateful"}
    partial = create_adapter(
        "functions:"
        + _module(
            tmp_path,
            "partial_impl",
            """
        EMBCONF_SINUSOID_CONVENTION = "concatenated"
        def sinusoidal_table(max_len, embed_dim, dtype):
            raise NotImplementedError
        helper = 3
    """,
        )
    )
    caps = partial.capabilities()
    assert caps.operations == {"sinusoidal_table"} and "sinusoid-concatenated" in caps.all_features


@pytest.mark.parametrize(
    "source, words",
    [
        ("EMBCONF_FEATURES = ['float64', 'bfloat8']\ndef embedding_forward(weight, ids): pass\n", "unknown feature"),
        ("EMBCONF_FEATURES = 'float64'\ndef embedding_forward(weight, ids): pass\n", "must be a list"),
        ("EMBCONF_SINUSOID_CONVENTION = 'cosine'\ndef embedding_forward(weight, ids): pass\n", "not one of"),
        ("def forward(weight, ids): pass\n", "defines none of the spec operations"),
    ],
)
def test_functions_declaration_errors(tmp_path, source, words):
    with pytest.raises(ImplementationError, match=words):
        create_adapter("functions:" + _module(tmp_path, "bad_declaration", source))


def test_functions_typed_errors_and_exceptions(tmp_path):
    adapter = create_adapter(
        "functions:"
        + _module(
            tmp_path,
            "typed",
            """
        class Rejected(Exception):
            kind = "index_out_of_range"
        def embedding_forward(weight, ids):
            raise Rejected("id 9 is out of range")
        def embedding_backward(weight, ids, grad_output):
            raise ValueError("no kind")
    """,
        )
    )
    weight, ids = np.zeros((2, 2), np.float32), np.array([9])
    typed = adapter.call("embedding_forward", {"weight": weight, "ids": ids})
    assert (typed.status, typed.error_kind) == (Status.REJECTED, "index_out_of_range")
    other = adapter.call(
        "embedding_backward", {"weight": weight, "ids": ids, "grad_output": np.zeros((1, 2), np.float32)}
    )
    assert other.status == Status.RAISED and "ValueError: no kind" in other.message


# ----- the tinytorch adapter ----------------------------------------------------------------


def _fake_student(tmp_path: Path, body: str) -> str:
    """A student module built on the example's Tensor, with ``body`` appended."""
    header = f"""
        import sys
        sys.path.insert(0, {str(ROOT / "examples" / "tinytorch_student")!r})
        import numpy as np
        from tinytorch.core.tensor import Tensor
        import tinytorch.core.autograd
    """
    return "tinytorch:" + _module(tmp_path, "fake_student", textwrap.dedent(header) + textwrap.dedent(body))


def test_tinytorch_declares_only_what_the_module_has(tmp_path):
    adapter = create_adapter(
        _fake_student(
            tmp_path,
            """
        def _compute_sinusoidal_table(max_len, embed_dim):
            return np.zeros((max_len, embed_dim), dtype=np.float64)
    """,
        )
    )
    assert adapter.capabilities().operations == {"sinusoidal_table"}
    reply = adapter.call("sinusoidal_table", {"max_len": 2, "embed_dim": 4, "dtype": "float32"})
    assert (
        reply.status == Status.OUTPUTS and reply.outputs["table"].dtype == np.float64
    )  # reported as produced, not cast


@pytest.mark.parametrize(
    "body, words",
    [("x = 1\n", "none of the TinyTorch embeddings API"), ("del Tensor\nclass Embedding: pass\n", "no Tensor class")],
)
def test_tinytorch_without_the_api_is_an_implementation_error(tmp_path, body, words):
    with pytest.raises(ImplementationError, match=words):
        create_adapter(_fake_student(tmp_path, body))


def test_tinytorch_reports_a_missing_gradient_as_none(tmp_path):
    adapter = create_adapter(
        _fake_student(
            tmp_path,
            """
        class Embedding:
            def __init__(self, vocab_size, embed_dim):
                self.weight = Tensor(np.zeros((vocab_size, embed_dim)), requires_grad=True)
            def forward(self, indices):
                rows = self.weight.data[indices.data.astype(np.int64)]
                return Tensor(rows, requires_grad=True)  # detached from the table: no gradient reaches it
    """,
        )
    )
    weight = np.ones((3, 2), np.float32)
    reply = adapter.call(
        "embedding_backward", {"weight": weight, "ids": np.array([0, 2]), "grad_output": np.ones((2, 2), np.float32)}
    )
    assert reply.status == Status.OUTPUTS and reply.outputs["grad_weight"] is None


def test_tinytorch_value_errors_are_coarse_rejections():
    adapter = create_adapter(EXAMPLE_IMPL)
    reply = adapter.call("embedding_forward", {"weight": np.zeros((3, 2), np.float32), "ids": np.array([3])})
    assert (reply.status, reply.error_kind) == (Status.REJECTED, UNSPECIFIED) and "out of range" in reply.message
    reply = adapter.call(
        "embedding_layer_forward",
        {
            "config": {"vocab_size": 3, "embed_dim": 2, "pos_encoding": "rope"},
            "token_weight": np.zeros((3, 2), np.float32),
            "position_table": None,
            "tokens": np.array([0]),
            "start_pos": 0,
        },
    )
    assert (reply.status, reply.error_kind) == (Status.REJECTED, UNSPECIFIED)  # raised by the constructor


def test_tinytorch_flags_a_trainable_sinusoidal_constant(tmp_path):
    adapter = create_adapter(
        _fake_student(
            tmp_path,
            f"""
        sys.path.insert(0, {str(ROOT / "examples" / "tinytorch_student")!r})
        from tinytorch.core import embeddings as correct

        class EmbeddingLayer(correct.EmbeddingLayer):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                if isinstance(self.pos_encoding, Tensor):
                    self.pos_encoding.requires_grad = True  # the constant is marked trainable
    """,
        )
    )
    reply = adapter.call(
        "embedding_layer_backward",
        {
            "config": {"vocab_size": 3, "embed_dim": 2, "max_seq_len": 4, "pos_encoding": "sinusoidal"},
            "token_weight": np.zeros((3, 2), np.float32),
            "position_table": None,
            "tokens": np.array([0, 1]),
            "start_pos": 0,
            "grad_output": np.ones((2, 2), np.float32),
        },
    )
    assert reply.status == Status.OUTPUTS and reply.outputs["grad_position_table"] is not None


def test_tinytorch_parameter_count_reads_the_students_objects():
    adapter = create_adapter(EXAMPLE_IMPL)
    reply = adapter.call(
        "parameter_count",
        {"config": {"vocab_size": 10, "embed_dim": 4, "max_seq_len": 6, "pos_encoding": "sinusoidal"}},
    )
    assert reply.outputs == {"trainable": 40, "non_trainable": 24}


# ----- the torch adapter --------------------------------------------------------------------


def test_torch_missing_is_a_one_line_install_hint(monkeypatch):
    from embconf.adapters.pytorch import TorchAdapter

    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(
        ImplementationError,
        match=r"torch is not installed; pip install torch --index-url https://download\.pytorch\.org/whl/cpu",
    ):
        TorchAdapter()


def test_torch_maps_errors_and_skips_sinusoidal_layers():
    pytest.importorskip("torch")
    adapter = create_adapter("torch")
    reply = adapter.call("embedding_forward", {"weight": np.zeros((3, 2), np.float32), "ids": np.array([-1])})
    assert (reply.status, reply.error_kind) == (Status.REJECTED, "index_out_of_range")
    config = {"vocab_size": 3, "embed_dim": 2, "max_seq_len": 4, "pos_encoding": "sinusoidal"}
    assert adapter.call("parameter_count", {"config": config}).status == Status.SKIPPED
    assert "sinusoidal_table" not in adapter.capabilities().operations
    huge = adapter.call(
        "parameter_count",
        {"config": {"vocab_size": 256000, "embed_dim": 2304, "max_seq_len": 8192, "pos_encoding": "learned"}},
    )
    assert huge.outputs == {"trainable": (256000 + 8192) * 2304, "non_trainable": 0}  # counted on the meta device


def test_torch_takes_no_target():
    pytest.importorskip("torch")
    with pytest.raises(ImplementationError, match="takes no target"):
        create_adapter("torch:something")


@pytest.mark.parametrize("encoding", ["none", "sinusoidal"])
def test_tinytorch_ignores_a_position_table_given_to_a_layer_without_learned_positions(encoding):
    """SPEC: position_table "is null and is ignored" for these encodings: a table given anyway changes nothing."""
    from embconf.reference import embedding_layer_forward

    adapter = create_adapter(EXAMPLE_IMPL)
    config = {"vocab_size": 10, "embed_dim": 8, "max_seq_len": 8, "pos_encoding": encoding}
    rng = np.random.default_rng(0)
    weight, table = (rng.standard_normal(shape).astype(np.float32) for shape in ((10, 8), (8, 8)))
    tokens = np.array([[4, 0, 7]], dtype=np.int64)
    given = adapter.call(
        "embedding_layer_forward",
        dict(config=config, token_weight=weight, position_table=table, tokens=tokens, start_pos=0),
    )
    assert given.status is Status.OUTPUTS, given
    expected = embedding_layer_forward(config, weight, None, tokens, 0)
    np.testing.assert_allclose(given.outputs["output"], expected, atol=1e-5)
