"""What ``--impl KIND:TARGET`` names, parsed once into a value (:class:`Impl`): the kind of adapter and its target
(a module, a file, a command line, a mutant id; empty for kinds that take none). Light: the command line parses
it before NumPy loads (a protocol peer starts meanwhile).

Each entry point parses the text once (the CLI's commands, the pytest plugin; grading and ``embconf.check`` build
the value); the value travels down to the run record, which holds it (:data:`NO_IMPL` when none named it) and
writes it back as the same text. A report read back is read with :meth:`Impl.read`."""

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
    def of(cls, name: Union[str, Impl]) -> Impl:
        """What a Python caller named (an Impl as it is; text parsed; :data:`NO_IMPL` for '': none named it)."""
        return cls.parse(name) if name else NO_IMPL

    @classmethod
    def read(cls, text: str) -> Impl:
        """The name a report read back gives (its kind '' when it names none: a record without its ``--impl``)."""
        try:
            return cls.parse(text)
        except ValueError:
            return cls("", text)

    def __str__(self) -> str:
        if not self.kind:
            return self.target
        return f"{self.kind}:{self.target}" if self.target else self.kind

    def __bool__(self) -> bool:
        """False for :data:`NO_IMPL` (a record of an adapter nobody named)."""
        return bool(self.kind or self.target)


NO_IMPL = Impl("")  # the name of an adapter a caller opened without naming it


ImplLike = Union[str, Impl]  # what the entry points accept: the text of --impl, or the name parsed
