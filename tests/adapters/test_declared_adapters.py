"""Adapters by declaration: an adapter declares its targets and capabilities, each operation is the method of that
name (on the adapter or a part), the rope operations are written once (RopeOperations), tensors cross through one
converter set. A framework adapter is one short class: the one here passes the rope and lookup cases; a wrong one
fails them."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest
from helpers import problems, run_undiagnosed

from embconf.adapters import ImplementationError, create_adapter
from embconf.adapters.common import InProcessAdapter, check_target
from embconf.adapters.convert import from_numpy, to_numpy, torch_tensor
from embconf.adapters.frameworks import FrameworkAdapter, refusals
from embconf.adapters.rope_operations import RopeCall, RopeOperations
from embconf.model.contract import Capabilities
from embconf.model.dtypes import numpy_dtype
from embconf.reference import rope_backward, rope_forward
from embconf.reference.errors import EmbeddingError

NUMPY_FRAMEWORK = types.SimpleNamespace(__version__="0.0-test")  # the "framework": NumPy and the reference formulas


class NumpyRope(RopeOperations):
    """A rope part over the reference rotation: both pairings, partial, any positions, no scaling family."""

    pairings = ("half_split", "interleaved")
    partial = True
    positions = True

    def __init__(self, sign: float = 1.0) -> None:
        self.sign = sign  # -1: a wrong rotation (the angle's sign flipped)

    def _inputs(self, rotation: RopeCall) -> dict:
        positions = self.sign * np.asarray(rotation.position_ids)
        return {
            "position_ids": positions.astype(np.asarray(rotation.position_ids).dtype),
            "rotary_dim": rotation.rotary_dim,
            "base": rotation.base,
            "scaling": rotation.scaling,
            "pairing": rotation.pairing,
        }

    def rotated(self, x, rotation):
        return rope_forward(x=x, **self._inputs(rotation))

    def gradient(self, x, rotation, grad_output):
        return rope_backward(x=x, grad_output=grad_output, **self._inputs(rotation))


class NumpyAdapter(FrameworkAdapter):
    """What a new framework adapter is: kind, targets, capabilities, one method per operation, a rope part."""

    kind = "numpy-test"
    targets = ("", "wrong")

    def __init__(self, target: str = "") -> None:
        rope = NumpyRope(-1.0 if target == "wrong" else 1.0)
        caps = Capabilities(rope.operations | {"embedding_forward"}, rope.features() | {"float64", "int32_ids"})
        super().__init__(target, NUMPY_FRAMEWORK, caps, "NumPy (test)", (rope,))

    def embedding_forward(self, weight, ids):
        if np.any((ids < 0) | (ids >= len(weight))):
            raise type("OutOfRange", (Exception,), {"kind": "index_out_of_range"})("id out of range")
        return weight[ids] * (-1.0 if self.target == "wrong" else 1.0)


def _cases(corpus, prefixes):
    return [case for case in corpus.cases if case.id.startswith(prefixes)]


def test_a_declared_adapter_computes_its_operations_by_their_names(corpus):
    adapter = NumpyAdapter()
    assert set(adapter.handlers) == {"rope_tables", "rope_forward", "rope_backward", "embedding_forward"}
    cases = _cases(corpus, ("rope.", "lookup."))
    run = run_undiagnosed(adapter, cases)
    assert problems(run.results) == []
    assert sum(r.outcome == "pass" for r in run.results) > 20


def test_a_wrong_declared_adapter_fails(corpus):
    run = run_undiagnosed(NumpyAdapter("wrong"), _cases(corpus, ("rope.forward", "rope.backward", "lookup.forward")))
    failed = problems(run.results)
    assert any(i.startswith("rope.forward") for i in failed) and any(i.startswith("lookup.forward") for i in failed)


def test_an_operation_declared_without_its_method_is_a_bug_in_the_adapter():
    class Missing(InProcessAdapter):
        kind = "missing"

        def __init__(self) -> None:
            super().__init__("missing", Capabilities(frozenset({"embedding_forward", "embedding_backward"})))

        def embedding_forward(self, weight, ids):
            return weight[ids]

    with pytest.raises(TypeError, match="declares embedding_backward but has no method"):
        Missing()


def test_a_target_not_declared_is_refused_before_the_framework_is_imported(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # importing it would fail with the install line
    with pytest.raises(ImplementationError, match=r"the torch adapter takes no target or 'float32-master' \(got 'x'\)"):
        create_adapter("torch:x")
    with pytest.raises(ImplementationError, match=r"takes no target or 'wrong' \(got 'other'\); use --impl numpy-test"):
        NumpyAdapter("other")
    with pytest.raises(ImplementationError, match=r"takes one of a, b \(got ''\); use --impl k:a or --impl k:b"):
        check_target("k", "", ("a", "b"))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_tensors_cross_the_converters_bit_exactly(dtype):
    array = (np.arange(6, dtype=np.float64).reshape(2, 3) / 7 - 0.3).astype(numpy_dtype(dtype))
    crossings = []
    torch = sys.modules.get("torch") or _optional("torch")
    if torch is not None:
        crossings.append(torch_tensor(torch, array, copy=True))
        crossings.append(torch.nn.Parameter(torch_tensor(torch, array, copy=True)))  # a table the call renormed
    mx = _optional("mlx.core")
    if mx is not None:
        crossings.append(from_numpy(array, lambda a: mx.array(a, dtype=getattr(mx, a.dtype.name)), _mlx_bf16(mx)))
    if not crossings:
        pytest.skip("needs torch or mlx installed")
    for tensor in crossings:
        back = to_numpy(tensor)
        assert back.dtype == array.dtype and back.tobytes() == array.tobytes()


def _mlx_bf16(mx):
    return lambda m: m.view(mx.bfloat16)


def _optional(module: str):
    try:
        return __import__(module, fromlist=["_"])
    except ImportError:
        return None


def test_a_framework_refusal_is_typed_by_its_text_and_nothing_else_is():
    def raising(exc):
        with refusals(
            ValueError, (("dims must be even", "odd width"), "invalid_config"), ("cotangent", "shape_mismatch")
        ):
            raise exc

    with pytest.raises(EmbeddingError) as typed:
        raising(ValueError("[rope] dims must be even"))
    assert typed.value.kind == "invalid_config" and str(typed.value).endswith("ValueError: [rope] dims must be even")
    with pytest.raises(EmbeddingError, match="cotangent") as shaped:
        raising(ValueError("does not match cotangent shape"))
    assert shaped.value.kind == "shape_mismatch"
    with pytest.raises(ValueError, match="something else"):
        raising(ValueError("something else"))
    with pytest.raises(TypeError):
        raising(TypeError("dims must be even"))  # another exception type is not the framework's refusal
