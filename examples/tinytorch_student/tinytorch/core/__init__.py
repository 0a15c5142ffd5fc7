"""Core modules: tensor (01), autograd (05), embeddings (11)."""
