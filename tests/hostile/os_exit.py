"""Hostile: embedding_backward ends the process with os._exit(3); the other operations are correct."""

import os

from embconf.reference import embedding_forward, sinusoidal_table  # noqa: F401  (correct)


def embedding_backward(weight, ids, grad_output):
    os._exit(3)
