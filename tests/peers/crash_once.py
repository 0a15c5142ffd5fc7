"""Correct, except that it exits (status 1) on its first embedding_backward request ever: the file named
by its argument marks that it has crashed, so the restarted process is correct throughout."""

import os
import sys

from _peer import backward, serve

MARK = sys.argv[1]


def hook(message):
    if backward(message) and not os.path.exists(MARK):
        open(MARK, "w").close()
        print(f"crash_once: crashing on request {message['seq']}", file=sys.stderr, flush=True)
        sys.exit(1)
    return False


serve(hook)
