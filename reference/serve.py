"""Where the reference protocol peer was until it moved next to the protocol: ``python -m embconf.reference.serve``
(the command earlier releases documented) says in one line where it went and exits with status 2, so a run that
names it fails its handshake with that line."""

from __future__ import annotations

import sys

MOVED = (
    "embconf.reference.serve has moved: run the reference protocol peer as 'python -m embconf.protocol.reference_peer'"
)

if __name__ == "__main__":
    sys.stderr.write(MOVED + "\n")
    sys.exit(2)
