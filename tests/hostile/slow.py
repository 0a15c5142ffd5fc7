"""Correct, but every call takes 0.2 s longer than it needs."""

import time

from embconf import reference


def _slow(function):
    def slowed(*args, **kwargs):
        time.sleep(0.2)
        return function(*args, **kwargs)

    return slowed


embedding_forward = _slow(reference.embedding_forward)
embedding_backward = _slow(reference.embedding_backward)
sinusoidal_table = _slow(reference.sinusoidal_table)
