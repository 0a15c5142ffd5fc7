"""Writes 2 MiB to stderr before every reply (a runner that does not drain stderr would hang),
then crashes on embedding_backward after a last, recognisable line."""

import sys

from _peer import backward, serve

NOISE = ("chatty: " + "x" * 1000 + "\n") * 2048


def hook(message):
    sys.stderr.write(NOISE)
    if backward(message):
        sys.stderr.write("chatty: last words before the crash\n")
        sys.stderr.flush()
        sys.exit(4)
    sys.stderr.flush()
    return False


serve(hook)
