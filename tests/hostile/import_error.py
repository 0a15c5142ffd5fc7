"""Hostile: fails while being imported."""

from embconf.reference import embedding_forward  # noqa: F401

raise RuntimeError("no GPU found (this module refuses to load)")
