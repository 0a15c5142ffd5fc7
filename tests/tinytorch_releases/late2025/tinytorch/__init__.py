"""A student's TinyTorch as the late-2025 release laid it out (December 2025; written for this suite, modelled on
that release's API): module 11 still exported to ``tinytorch/text/embeddings.py``, autograd switched on here."""

from .core.autograd import enable_autograd
from .core.tensor import Tensor
from .text.embeddings import Embedding, EmbeddingLayer, PositionalEncoding

enable_autograd()

__all__ = ["Embedding", "EmbeddingLayer", "PositionalEncoding", "Tensor"]
