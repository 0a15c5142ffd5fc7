"""The exceptions with a meaning of their own: :class:`UserError`, "say it in one line and exit 2" (bad usage,
an implementation that cannot be loaded, a fixture or input file that cannot be used; every command raises
it, only the CLI prints it), and :class:`Decline`, which an implementation raises to decline one case."""

from __future__ import annotations


class UserError(Exception):
    """Anything that makes the command meaningless; its message is the one line the user reads."""


class Decline(Exception):
    """Raised by an implementation's function (``embconf.Decline("why")``) to decline the one case it was sent:
    the case is ``not_applicable`` with that reason, counted as declined within the declared capabilities
    (spec section 11). It is the explicit way to decline from Python; the wire's is the ``skipped`` reply."""

    def __init__(self, reason: str = "") -> None:
        super().__init__(reason)
        self.reason = reason or "no reason given"
