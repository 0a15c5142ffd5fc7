"""Correct, but reserves 6 GiB of address space it never touches at import, as JAX and TensorFlow do (with
less): resident memory stays small, so it must pass under the default memory limit."""

import mmap

from embconf.reference import embedding_backward, embedding_forward, sinusoidal_table  # noqa: F401  (correct)

_RESERVED = mmap.mmap(-1, 6 * 2**30, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(mmap, "MAP_NORESERVE", 0))
