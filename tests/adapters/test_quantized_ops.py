"""The quantized operations' glue for framework adapters (spec section 17): the format read by name and the table's
width checked against it are the glue's verdicts; a hook a framework does not override declines; what a hook
returns is handed back as the spec's outputs (a quantizer's bytes as int32)."""

from __future__ import annotations

import numpy as np
import pytest

from embconf.adapters.quantized_ops import QuantCall, QuantizedOperations
from embconf.model.errors import Decline
from embconf.model.quantized import QuantFormat
from embconf.reference.errors import EmbeddingError
from embconf.reference.quantize import quantize_table
from embconf.reference.quantized import quantized_lookup


class Lookups(QuantizedOperations):
    """A framework that only reads tables (its lookup is the reference's, on the bytes the glue hands it)."""

    framework = "lookups-only"

    def lookup(self, call: QuantCall) -> np.ndarray:
        assert call.qweight.dtype == np.uint8
        return quantized_lookup(call.qweight, call.ids, call.fmt.name, call.embed_dim, call.out_dtype)


class Quantizer(QuantizedOperations):
    def quantize(self, weight: np.ndarray, fmt: QuantFormat) -> np.ndarray:
        return quantize_table(weight, fmt.name).astype(np.uint8)


TABLE = quantize_table(np.ones((3, 32), np.float32), "q8_0")


@pytest.mark.parametrize(
    ("call", "kind"),
    [
        (lambda ops: ops.quantized_lookup(TABLE, np.array([0]), "Q8_0", 32, "float32"), "invalid_config"),
        (lambda ops: ops.quantized_lookup(TABLE, np.array([0]), "q8_0", 32, "int8"), "invalid_config"),
        (lambda ops: ops.quantized_lookup(TABLE[:, :-1], np.array([0]), "q8_0", 32, "float32"), "shape_mismatch"),
        (lambda ops: ops.quantized_lookup(TABLE, np.array([0]), "q8_0", 48, "float32"), "shape_mismatch"),
        (
            lambda ops: ops.quantized_bag_forward(TABLE, np.array([0]), np.array([0]), "max", "q8_0", 32),
            "invalid_config",
        ),
    ],
)
def test_the_format_and_the_width_are_the_glues_verdicts(call, kind):
    with pytest.raises(EmbeddingError) as raised:
        call(Lookups())
    assert raised.value.kind == kind and raised.value.decided_by == "glue"


def test_a_lookup_hook_gets_bytes_and_gives_the_rows():
    rows = Lookups().quantized_lookup(TABLE, np.array([[2, 0]]), "q8_0", 32, "float16")
    assert rows.shape == (1, 2, 32) and rows.dtype == np.float16 and np.all(rows == 1)


def test_a_hook_not_overridden_declines_and_a_quantizer_returns_int32():
    for call in (
        lambda: Lookups().quantize_table(np.ones((1, 32), np.float32), "q4_0"),
        lambda: Lookups().quantized_table_bytes(1, 32, "q4_0"),
        lambda: Lookups().quantized_bag_forward(TABLE, np.array([0]), np.array([0]), "sum", "q8_0", 32),
        lambda: Quantizer().quantized_lookup(TABLE, np.array([0]), "q8_0", 32, "float32"),
    ):
        with pytest.raises(Decline):
            call()
    stored = Quantizer().quantize_table(np.ones((2, 32), np.float32), "q4_0")
    assert stored.dtype == np.int32 and np.array_equal(stored, quantize_table(np.ones((2, 32), np.float32), "q4_0"))
