"""Innocent: at import it moves to the temporary directory and turns on np.seterr(all="raise") (no rule forbids
either), then leaves the global state alone; every operation is the reference's."""

import os
import tempfile

import numpy as np

from embconf.reference import *  # noqa: F403  (correct)

os.chdir(tempfile.gettempdir())
np.seterr(all="raise")
