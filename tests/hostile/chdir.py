"""Hostile: embedding_forward changes the working directory (then answers correctly); the rest is correct."""

import os

from embconf.reference import embedding_backward, sinusoidal_table  # noqa: F401  (correct)
from embconf.reference import embedding_forward as _forward


def embedding_forward(weight, ids):
    os.chdir("/")
    return _forward(weight, ids)
