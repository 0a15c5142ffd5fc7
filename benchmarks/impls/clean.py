"""Correct and fast: the reference's lookup and sinusoid operations (the clean run bench_hangs compares with)."""

from embconf.reference import embedding_backward, embedding_forward, sinusoidal_table  # noqa: F401
