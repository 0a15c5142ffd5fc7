"""Hostile: not valid Python."""


def embedding_forward(weight, ids)
    return weight[ids]
