"""Wrong variant: the frequency exponent's sign is flipped, w_i = exp(+2i ln(10000) / D)."""

from _example import sinusoid_table, student_embeddings

student = student_embeddings()
student._compute_sinusoidal_table = sinusoid_table(sign=+1.0)  # BUG: frequencies grow instead of decaying

from tinytorch.core.embeddings import *  # noqa: E402,F401,F403
from tinytorch.core.embeddings import Tensor, _compute_sinusoidal_table  # noqa: E402,F401
