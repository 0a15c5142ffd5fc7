"""Wrong variant (EMB-ROPE-11): positions and frequencies cast to bfloat16 and multiplied there, the cos/sin cache
bug of Hugging Face transformers #25681 / #29285 and EleutherAI gpt-neox #1003; otherwise tests/impls/rope_float32.py."""

import rope_float32
from rope_float32 import *  # noqa: F403

rope_float32.ANGLE_DTYPE = "bfloat16"  # BUG: the angles computed in bfloat16
