"""Student: reads a Q4_0 byte as two consecutive values (element 2j low, 2j + 1 high), the layout ggml had before
llama.cpp #1405; byte j holds element j and element j + 16 (EMB-QNT-3)."""

import numpy as np
from _quantized import Embedding, EmbeddingLayer, PositionalEncoding, Tensor, _compute_sinusoidal_table
from _quantized import QuantizedEmbedding as Correct


class QuantizedEmbedding(Correct):
    def nibbles(self, body):
        return np.stack([body & 15, body >> 4], axis=-1).reshape(-1).astype(np.float32)
