"""The quantized operations (spec section 17), named and called as the spec's, over a framework's hooks: the glue
reads ``format`` into a :class:`~embconf.model.quantized.QuantFormat` (a name no format has: ``invalid_config``),
``qweight`` into bytes and checks the row width against the format (``shape_mismatch``): the suite's layout, so
its verdict (``decided_by: glue``). The ids, offsets and values are the framework's to judge.

A framework adapter's part derives from :class:`QuantizedOperations` and overrides the hooks it has: ``lookup``,
``quantize``, ``table_bytes`` and ``bag``; one it does not override declines.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from embconf.adapters.frameworks import glue_checks
from embconf.model.errors import Decline
from embconf.model.quantized import QuantFormat
from embconf.reference.quantized import checked_format, checked_table


@dataclass(frozen=True)
class QuantCall:
    """One lookup's inputs: the table's bytes (uint8 (R, row_bytes)), its format and width, the ids, the dtype."""

    qweight: np.ndarray
    ids: np.ndarray
    fmt: QuantFormat
    embed_dim: int
    out_dtype: str = "float32"


class QuantizedOperations:
    """The spec's four quantized operations over the hooks a framework overrides."""

    framework = "this framework"

    def quantized_lookup(self, qweight: Any, ids: Any, format: str, embed_dim: int, out_dtype: str) -> Any:
        with glue_checks():
            fmt = checked_format(format, out_dtype=out_dtype)
            table = checked_table(qweight, fmt, embed_dim)
        return self.lookup(QuantCall(table, np.asarray(ids), fmt, int(embed_dim), out_dtype))

    def quantize_table(self, weight: Any, format: str) -> Any:
        with glue_checks():
            fmt = checked_format(format)
        return np.asarray(self.quantize(np.asarray(weight), fmt)).astype(np.int32)

    def quantized_table_bytes(self, num_rows: int, embed_dim: int, format: str) -> Any:
        with glue_checks():
            fmt = checked_format(format)
        return self.table_bytes(num_rows, embed_dim, fmt)

    def quantized_bag_forward(
        self,
        qweight: Any,
        ids: Any,
        offsets: Any,
        mode: str,
        format: str,
        embed_dim: int,
        per_sample_weights: Optional[Any] = None,
    ) -> Any:
        with glue_checks():
            fmt = checked_format(format, mode=mode)
            table = checked_table(qweight, fmt, embed_dim)
        call = QuantCall(table, np.asarray(ids), fmt, int(embed_dim))
        weights = None if per_sample_weights is None else np.asarray(per_sample_weights)
        return self.bag(call, np.asarray(offsets), mode, weights)

    def lookup(self, call: QuantCall) -> Any:
        """The rows of ``call.ids``, dequantized: shape ids.shape + (D,), dtype ``call.out_dtype``."""
        raise Decline(f"{self.framework} has no lookup of {call.fmt.name}")

    def quantize(self, weight: np.ndarray, fmt: QuantFormat) -> Any:
        """The bytes (uint8 (R, row_bytes)) of ``weight`` quantized into ``fmt``."""
        raise Decline(f"{self.framework} does not quantize into {fmt.name}")

    def table_bytes(self, num_rows: int, embed_dim: int, fmt: QuantFormat) -> Any:
        """(row_bytes, table_bytes) as the framework stores the table."""
        raise Decline(f"{self.framework} does not size {fmt.name} tables")

    def bag(self, call: QuantCall, offsets: np.ndarray, mode: str, weights: Optional[np.ndarray]) -> Any:
        """The bags' output (B, D) float32: each row dequantized, weighted, reduced."""
        raise Decline(f"{self.framework} has no bags over {call.fmt.name}")
