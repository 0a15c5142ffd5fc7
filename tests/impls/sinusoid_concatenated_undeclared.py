"""The [sin | cos] table (the named profile concatenated, EMB-SIN-V1) without declaring it."""

from embconf.reference import sinusoidal_table as _reference


def sinusoidal_table(max_len, embed_dim, dtype="float32"):
    return _reference(max_len, embed_dim, dtype, "concatenated")
