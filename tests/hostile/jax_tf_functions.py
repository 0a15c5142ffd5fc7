"""A correct implementation that loads both JAX (x64) and TensorFlow, as a keras_hub project does: the
gather is TensorFlow's, the scatter-add JAX's. Together they reserve gigabytes of address space they
never touch, so this must pass under the default memory limit."""

import numpy as np
import tensorflow as tf
from jax_functions import embedding_backward, sinusoidal_table, validate_ids  # noqa: F401


def embedding_forward(weight, ids):
    index = validate_ids(ids, weight.shape[0])
    return np.array(tf.gather(tf.constant(weight), tf.constant(index), axis=0).numpy())
