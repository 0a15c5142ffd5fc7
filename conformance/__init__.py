"""embedding-conformance: the conformance runner (``embconf``) for the embedding spec in ``spec/``."""

from __future__ import annotations

from embconf.model.errors import Decline
from embconf.model.version import __version__

__all__ = ["Decline", "__version__", "check"]


def check(*args, **kwargs):
    """Check a TinyTorch embeddings module from Jupyter or a terminal (see :mod:`embconf.grading.check`)."""
    from embconf.grading.check import check as run_check

    return run_check(*args, **kwargs)
