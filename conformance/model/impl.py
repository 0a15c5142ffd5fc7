"""What ``--impl KIND:TARGET`` names, parsed once into a value (:class:`Impl`): the kind of adapter and its target
(a module, a file, a command line, a mutant id; empty for kinds that take none). Light: the command line parses
it before NumPy loads (a protocol peer starts meanwhile)."""

from __future__ import annotations

from typing import NamedTuple, Union


class Impl(NamedTuple):
    """An implementation's name: ``kind`` and ``target``, as ``KIND:TARGET`` gives them (``str()`` gives it back)."""

    kind: str
    target: str = ""

    @classmethod
    def parse(cls, text: Union[str, Impl]) -> Impl:
        """The name ``text`` gives (an Impl as it is); ValueError when it names no kind."""
        if isinstance(text, Impl):
            return text
        kind, _, target = text.partition(":")
        if not kind.strip():
            raise ValueError(f"bad --impl {text!r}: expected KIND:TARGET")
        return cls(kind.strip(), target.strip())

    @classmethod
    def kind_of(cls, text: Union[str, Impl]) -> str:
        """The kind ``text`` names ('' when it names none: a record read back without its ``--impl``)."""
        try:
            return cls.parse(text).kind
        except ValueError:
            return ""

    def __str__(self) -> str:
        return f"{self.kind}:{self.target}" if self.target else self.kind


ImplLike = Union[str, Impl]  # what the entry points accept: the text of --impl, or the name parsed
