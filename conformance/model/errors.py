"""The one exception that means "say it in one line and exit 2": bad usage, an implementation that cannot
be loaded, a fixture or input file that cannot be used. Every command raises it; only the CLI prints it."""

from __future__ import annotations


class UserError(Exception):
    """Anything that makes the command meaningless; its message is the one line the user reads."""
