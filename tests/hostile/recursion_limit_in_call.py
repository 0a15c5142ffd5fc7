"""Hostile: embedding_forward answers correctly but leaves Python a recursion limit of 60 frames; the rest is correct."""

import sys

from embconf.reference import embedding_backward, sinusoidal_table  # noqa: F401  (correct)
from embconf.reference import embedding_forward as _forward


def embedding_forward(weight, ids):
    sys.setrecursionlimit(60)
    return _forward(weight, ids)
