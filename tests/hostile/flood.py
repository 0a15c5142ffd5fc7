"""Hostile: prints megabytes to stdout and stderr. embedding_forward then answers correctly;
embedding_backward then exits the process, so its crash report shows the tail of the flood."""

import os
import sys

from embconf.reference import embedding_forward as _forward
from embconf.reference import sinusoidal_table  # noqa: F401  (correct)

LINE = "x" * 1023 + "\n"


def _flood(megabytes=4):
    for _ in range(megabytes * 1024):
        sys.stdout.write(LINE)
        sys.stderr.write(LINE)
    os.write(2, b"C code can print too\n")


def embedding_forward(weight, ids):
    _flood()
    return _forward(weight, ids)


def embedding_backward(weight, ids, grad_output):
    _flood()
    print("LAST WORDS", flush=True)
    os._exit(1)
