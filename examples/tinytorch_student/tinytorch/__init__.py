"""A student's TinyTorch: a minimal float32 Tensor, autograd, and embeddings (module 11)."""
