"""Why no usable answer came from a child process the runner waits on (a worker or a protocol peer).

Each side raises these while it waits and words them itself (a worker's and a peer's replies read
differently); a message, where the raiser has one, says what happened in one line.
"""

from __future__ import annotations


class ChildFailure(Exception):
    """No usable answer came from the child."""


class Late(ChildFailure):
    """No answer by the deadline (the child may still be working on it)."""


class Gone(ChildFailure):
    """The child ended, or closed its end of the channel, before it answered."""


class OutOfMemory(ChildFailure):
    """The child's process tree held more resident memory than the limit (the message says how much)."""


class Garbled(ChildFailure):
    """The child answered something that cannot be read (the message says what)."""
