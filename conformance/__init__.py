"""embedding-conformance: the conformance runner (``embconf``) for the embedding spec in ``spec/``."""
from __future__ import annotations

__version__ = "0.1.0"
