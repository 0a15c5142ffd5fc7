"""Hostile: embedding_forward raises SystemExit (sys.exit(4)); the other operations are correct."""

import sys

from embconf.reference import embedding_backward, sinusoidal_table  # noqa: F401  (correct)


def embedding_forward(weight, ids):
    sys.exit(4)
