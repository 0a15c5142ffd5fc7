"""Student: the correct quantized embedding of _quantized.py (Q8_0, Q4_0, fused 8-bit rows)."""

from _quantized import (
    Embedding,
    EmbeddingLayer,
    PositionalEncoding,
    QuantizedEmbedding,
    Tensor,
    _compute_sinusoidal_table,
)
