"""Hostile: every operation hangs (an infinite loop)."""


def _hang(*args, **kwargs):
    while True:
        pass


embedding_forward = embedding_backward = sinusoidal_table = _hang
