"""On embedding_backward: starts a child that keeps the peer's stdout (and stderr) open for a minute, says
so on stderr, then dies with status 3 without answering."""

import os
import sys
import time

from _peer import backward, serve


def hook(message):
    if backward(message):
        if os.fork() == 0:  # the child: holds every inherited descriptor, answers nothing
            time.sleep(60)
            os._exit(0)
        print(f"fork_holds_stdout: dying on request {message['seq']}", file=sys.stderr, flush=True)
        os._exit(3)
    return False


serve(hook)
