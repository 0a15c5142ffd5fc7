"""A correct implementation whose arithmetic runs in JAX (x64): JAX reserves about a gigabyte of address
space on first use that it never touches, so it must pass under the default memory limit. Ids and
shapes are checked with the reference's validators; the gather and the scatter-add are JAX's."""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from embconf.reference import sinusoidal_table  # noqa: E402,F401  (not what this module is about)
from embconf.reference.lookup import check_grad_shape, validate_ids  # noqa: E402


def embedding_forward(weight, ids):
    index = validate_ids(ids, weight.shape[0])
    return np.array(jnp.take(jnp.asarray(weight), jnp.asarray(index), axis=0))


def embedding_backward(weight, ids, grad_output):
    index = validate_ids(ids, weight.shape[0])
    check_grad_shape(grad_output, index.shape + weight.shape[1:])
    rows = jnp.asarray(grad_output.reshape(-1, weight.shape[1]), dtype=jnp.float64)
    total = jnp.zeros(weight.shape, dtype=jnp.float64).at[jnp.asarray(index.reshape(-1))].add(rows)
    return np.array(total).astype(weight.dtype)
