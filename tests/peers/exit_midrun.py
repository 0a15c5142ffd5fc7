"""Exits with status 3 on embedding_backward, saying why on stderr."""

import sys

from _peer import backward, serve


def hook(message):
    if backward(message):
        print(f"exit_midrun: giving up on request {message['seq']}", file=sys.stderr, flush=True)
        sys.exit(3)
    return False


serve(hook)
