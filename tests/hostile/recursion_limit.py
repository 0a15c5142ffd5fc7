"""Hostile: exhausts the recursion limit while being imported, leaving Python a limit of 40 frames (too few
for the runner's own work); the functions are correct."""

import sys

from embconf.reference import embedding_backward, embedding_forward, sinusoidal_table  # noqa: F401  (correct)


def _dive(depth: int) -> int:
    try:
        return _dive(depth + 1)
    except RecursionError:
        return depth


DEPTH = _dive(0)
sys.setrecursionlimit(40)
