"""Modules 01 and 05: tensor and autograd."""
