"""What a measured symptom is, as a typed value: :class:`SymptomKey`, its family (the kind of mistake it states)
and its parts (the operation, the output, what was measured), so that the code that reads a symptom back asks
for ``key.family`` and ``key.parts``, never for a prefix of a string.

``str(key)`` is the one rendering, the ``symptom`` of a case's diagnosis entry in every report
(``no_gradient:embedding_backward:grad_weight``) and a cause's ``key``; :meth:`SymptomKey.parse` the one reading
of it. A mistake's identity across operations is a key too (``no_gradient:token_table``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Union

SEPARATOR = ":"  # between the family and each part, in the rendering

# The families read back by the diagnosis's run-level analysis (each module that states one builds it from these).
NO_GRADIENT = "no_gradient"  # (operation, output): a parameter that received no gradient; (table,): the mistake
UNTYPED = "untyped"  # (exception type, expected error kind): an exception that names no error kind
STALE_BUFFER = "stale_buffer"  # (operation, output): a gradient buffer kept across calls
ROPE = "rope"  # (what, operation, detail...): a rotary symptom
SINUSOID = "sinusoid"  # (the table fitted...): a wrong sinusoid table, fitted
CONSTRUCTOR = "constructor"  # (exception, file, line): the constructor raised; one entry whatever the input
ASSERT_CHECK = "assert_check"  # (): an input check written as assert (a TinyTorch run's words)
UNWRITTEN = "unwritten"  # (file, line): a function still raising NotImplementedError (a TinyTorch run's words)
CAST_UNCHECKED = "cast_unchecked"  # (exception,): a NaN or infinite float id cast to an integer unchecked
UNEXPLAINED = "unexplained"  # (operation, output): a difference said in plain words
ZERO_VALUES = "zero_values"  # (operation, output): a difference whose differing values are all 0
# The families the detectors build from the measurement (each key made by SymptomKey.of, never as text).
NONE = "none"  # (operation, output): an output returned as None
DTYPE = "dtype"  # (operation, "got->expected")
SHAPE = "shape"  # (operation, how the shape differs, sizes said as N)
ALL_ZEROS = "zeros"  # (operation, output): an output all zeros
ZERO_ROWS = "zero_rows"  # (operation, output, "r,r"): a few rows all zeros
FACTOR = "factor"  # (operation, output, factor) or ("gradient", parameter, factor): a constant factor
TOKEN_SCALE = "token_scale"  # (factor,): the tokens scaled by another factor
POSITION_SCALE = "position_scale"  # (factor,): the positions scaled
ONE_HOT_PRODUCT = "one_hot_product"  # (operation,): a lookup computed as a one-hot product
IDS_SHIFTED = "ids_shifted"  # (shift,): every id reads another row
UNTOUCHED_ROWS = "untouched_rows"  # (operation, output): rows no id uses are not zero
POSITIONS_SHIFTED = "positions_shifted"  # (shift,): the position slice shifted
POSITION_GRAD_SEQUENCE = "position_grad_sequence"  # ("first" | "last",): one sequence's gradient, not the sum
ACCEPTS = "accepts"  # (operation, error kind): a result where the spec raises
CONVENTION = "convention"  # (area, name): a declarable convention followed without declaring it
PADDING_COUNTED = "padding_counted"  # (area,): the padding id counted, the outputs those without padding_idx
QUANTIZED_INTEGERS = "quantized_integers"  # (format kind,): only a quantized table's stored integers differ
BAG = "bag"  # (what, operation, detail...): a bag symptom measured on the case (diagnosis/symptoms/bags.py)
STATE = "state"  # ("carried", operation): a case that failed after other calls and passed alone (state carried)
PLAIN = frozenset({UNEXPLAINED, ZERO_VALUES})  # what was measured, in plain words: no mistake's identity
ZEROS = frozenset({ZERO_ROWS, ALL_ZEROS, ZERO_VALUES})  # an all-zero output of one operation, or zero rows of it
FAMILIES = frozenset(
    {NO_GRADIENT, UNTYPED, STALE_BUFFER, ROPE, SINUSOID, CONSTRUCTOR, ASSERT_CHECK, CAST_UNCHECKED, UNEXPLAINED}
    | {UNWRITTEN}
    | {ZERO_VALUES, NONE, DTYPE, SHAPE, ALL_ZEROS, ZERO_ROWS, FACTOR, TOKEN_SCALE, POSITION_SCALE, ONE_HOT_PRODUCT}
    | {IDS_SHIFTED, UNTOUCHED_ROWS, POSITIONS_SHIFTED, POSITION_GRAD_SEQUENCE, ACCEPTS, CONVENTION, PADDING_COUNTED}
    | {QUANTIZED_INTEGERS}
    | {BAG}
    | {STATE}
)  # every family named here: a key of one is made by SymptomKey.of (tests/test_typed_identities.py holds it)
SUM = "+"  # between the keys of parts measured together (``token_scale:2+position_scale:0``)


@dataclass(frozen=True)
class SymptomKey:
    """A symptom's identity: ``family`` and its ``parts``, rendered ``family:part:part`` (:meth:`__str__`)."""

    family: str
    parts: tuple[str, ...] = ()

    @classmethod
    def of(cls, family: str, *parts: object) -> SymptomKey:
        """The key of ``family`` with these parts (each said as text)."""
        return cls(family, tuple(str(part) for part in parts))

    @classmethod
    def parse(cls, text: Union[str, SymptomKey]) -> SymptomKey:
        """The key a rendering names (a key as it is): the inverse of ``str()``."""
        if isinstance(text, SymptomKey):
            return text
        family, *parts = text.split(SEPARATOR)
        return cls(family, tuple(parts))

    @classmethod
    def summed(cls, keys: Iterable[SymptomKey]) -> SymptomKey:
        """One key for parts measured together, rendered ``token_scale:2+position_scale:0`` (one key: itself)."""
        return cls.parse(SUM.join(map(str, keys)))

    def extended(self, *parts: object) -> SymptomKey:
        """This key with more parts (each said as text): a reading of the symptom this key names."""
        return SymptomKey(self.family, self.parts + tuple(str(part) for part in parts))

    def part(self, number: int) -> str:
        """The part at ``number`` ('' when the key has fewer)."""
        return self.parts[number] if -len(self.parts) <= number < len(self.parts) else ""

    def __str__(self) -> str:
        return SEPARATOR.join((self.family, *self.parts))
