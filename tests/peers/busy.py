"""Starts a daemon (double fork, setsid: a grandchild re-parented away from it) that sleeps for an hour,
then computes without end on embedding_backward. The daemon's pid and its own are appended to the file
named by its argument, one a line. Correct elsewhere."""

import os
import sys
import time

from _peer import backward, serve


def daemonise(pidfile: str) -> None:
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            with open(pidfile, "a") as handle:
                handle.write(f"{os.getpid()}\n")
            for fd in (0, 1, 2):
                os.close(fd)
            time.sleep(3600)
        os._exit(0)


def hook(message):
    if backward(message):
        while True:  # busy, not asleep
            pass
    return False


with open(sys.argv[1], "a") as handle:
    handle.write(f"{os.getpid()}\n")
daemonise(sys.argv[1])
serve(hook)
