"""Hostile: embedding_backward starts a child process that touches 1 GiB and sleeps, and waits for it: the
memory belongs to the worker's process tree. The child's pid is appended to $EMBCONF_TEST_PIDFILE."""

import os
import subprocess
import sys

from embconf.reference import embedding_forward, sinusoidal_table  # noqa: F401  (correct)

HOG = "import time; block = bytearray(b'x') * 2**30; time.sleep(3600)"


def embedding_backward(weight, ids, grad_output):
    child = subprocess.Popen([sys.executable, "-c", HOG])
    with open(os.environ["EMBCONF_TEST_PIDFILE"], "a") as handle:
        handle.write(f"{child.pid}\n")
    child.wait()
