"""Hostile: embedding_forward leaves two processes behind, a child (``sleep``) and a daemon (double fork,
setsid), each meant to live an hour, and embedding_backward hangs. The worker's pid and theirs are
appended to $EMBCONF_TEST_PIDFILE, one a line. sinusoidal_table is correct."""

import os
import subprocess
import time

from embconf.reference import embedding_forward as _forward  # noqa: F401  (correct)
from embconf.reference import sinusoidal_table


def _daemon(pidfile: str) -> None:
    """Start the daemon, returning once it has written its pid."""
    ready, told = os.pipe()
    child = os.fork()
    if child == 0:
        os.setsid()
        if os.fork() == 0:
            with open(pidfile, "a") as handle:
                handle.write(f"{os.getpid()}\n")
            os.write(told, b"x")
            time.sleep(3600)
        os._exit(0)
    os.close(told)
    os.waitpid(child, 0)
    os.read(ready, 1)
    os.close(ready)


def embedding_forward(weight, ids):
    pidfile = os.environ["EMBCONF_TEST_PIDFILE"]
    sleeper = subprocess.Popen(["sleep", "3600"])
    with open(pidfile, "a") as handle:
        handle.write(f"{os.getpid()}\n{sleeper.pid}\n")
    _daemon(pidfile)
    return _forward(weight, ids)


def embedding_backward(weight, ids, grad_output):
    while True:
        time.sleep(1)
