"""Hostile: answers correctly, but rewrites inside the worker how outputs travel back, so that the runner is
sent rows it did not ask for: an output asked for whole comes as its first row alone, and a sinusoid table
asked for by rows comes as those rows in reverse order (labelled so)."""

import embconf.isolation.worker
from embconf.model.encoding import PinnedRows
from embconf.reference import embedding_forward, sinusoidal_table  # noqa: F401  (correct)


def _lying_rows(value, rows):
    if rows is None:
        return PinnedRows(tuple(value.shape), (0,), value[:1])
    return PinnedRows(tuple(value.shape), tuple(rows)[::-1], value[list(rows)[::-1]])


embconf.isolation.worker.rows_only = _lying_rows
