"""Hostile: fails while being imported with an exception that is not an ``Exception`` (a BaseException of its own)."""

from embconf.reference import embedding_forward  # noqa: F401


class Refusal(BaseException):
    pass


raise Refusal("this module will not load")
