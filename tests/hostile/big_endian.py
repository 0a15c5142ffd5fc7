"""Hostile (though correct): every array it returns holds the right values in big-endian byte order (``>f4``)."""

from embconf.reference import embedding_backward as _backward
from embconf.reference import embedding_forward as _forward
from embconf.reference import sinusoidal_table as _table


def _big_endian(array):
    return array.astype(array.dtype.newbyteorder(">"))


def embedding_forward(weight, ids):
    return _big_endian(_forward(weight, ids))


def embedding_backward(**inputs):
    return _big_endian(_backward(**inputs))


def sinusoidal_table(**inputs):
    return _big_endian(_table(**inputs))
