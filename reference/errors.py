"""The typed error taxonomy of the spec (EMB-ERR-1).

Every invalid input is rejected with exactly one of these kinds. The reference
raises :class:`EmbeddingError`; any implementation may signal a kind by raising
an exception with a ``kind`` attribute, or over the protocol with ``error.kind``.
"""

from __future__ import annotations

ERROR_KINDS: tuple[str, ...] = (
    "index_out_of_range",  # an id < 0 or >= vocab_size
    "invalid_index",  # a float id that is not a finite integer (0.5, nan, inf)
    "sequence_too_long",  # start_pos + seq_len > the position table's length
    "invalid_start_pos",  # start_pos negative or not an integer
    "shape_mismatch",  # an input of the wrong rank or width
    "invalid_config",  # an unknown pos_encoding or another bad constructor argument
    "invalid_offsets",  # bag offsets not starting at 0, decreasing, past the ids, or a last offset that is not N (2.1.0)
)


class EmbeddingError(ValueError):
    """An input the spec says must be rejected; ``kind`` is one of ERROR_KINDS."""

    def __init__(self, kind: str, message: str) -> None:
        if kind not in ERROR_KINDS:
            raise AssertionError(f"unknown error kind {kind!r}")
        super().__init__(message)
        self.kind = kind
