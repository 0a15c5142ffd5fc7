"""Hangs (never replies) on embedding_backward; answers everything else. Given a file name, it writes a line
to that file as it starts to hang."""

import sys
import time

from _peer import backward, serve


def hook(message):
    if backward(message):
        if sys.argv[1:]:
            with open(sys.argv[1], "a") as handle:
                handle.write("hanging\n")
        time.sleep(3600)
    return False


serve(hook)
