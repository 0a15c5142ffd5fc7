"""Wrong variant: the sinusoidal table has cos in the even columns and sin in the odd ones."""

import numpy as np
from _example import sinusoid_table, student_embeddings

student = student_embeddings()
student._compute_sinusoidal_table = sinusoid_table(even=np.cos, odd=np.sin)  # BUG: sin and cos swapped

from tinytorch.core.embeddings import *  # noqa: E402,F401,F403
from tinytorch.core.embeddings import Tensor, _compute_sinusoidal_table  # noqa: E402,F401
