"""Every sinusoid table it computes is wrong the first time it is asked for (every value plus one) and right
when the same table is asked for again (issue 34: the second answer must not replace the first)."""

from embconf.reference import sinusoidal_table as _table

_seen: set = set()


def sinusoidal_table(max_len, embed_dim, dtype="float32"):
    table = _table(max_len, embed_dim, dtype)
    if (max_len, embed_dim, str(dtype)) not in _seen:
        _seen.add((max_len, embed_dim, str(dtype)))
        table = table + table.dtype.type(1)
    return table
