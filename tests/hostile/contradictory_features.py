"""Hostile: declares both answers of EMB-MEM-1, a stored sinusoid table and a computed one; correct otherwise."""

from embconf.reference import embedding_forward, sinusoidal_table  # noqa: F401  (correct)

EMBCONF_FEATURES = ["sinusoid_stored", "sinusoid_computed"]
