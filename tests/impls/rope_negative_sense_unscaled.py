"""The negative angle (undeclared negative_sense) and llama3 scaling ignored: the convention answers the failing
cases without llama3 scaling, not those with it. Otherwise tests/impls/rope_negative_sense.py."""

import rope_negative_sense
from rope_negative_sense import *  # noqa: F403

rope_negative_sense.IGNORE_SCALING = True  # BUG: llama3 scaling dropped
