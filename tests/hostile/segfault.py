"""Hostile: embedding_forward dereferences a null pointer (SIGSEGV); the other operations are correct."""

import ctypes

from embconf.reference import embedding_backward, sinusoidal_table  # noqa: F401  (correct)


def embedding_forward(weight, ids):
    return ctypes.string_at(0)
