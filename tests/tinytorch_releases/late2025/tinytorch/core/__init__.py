"""Modules 01 and 06: tensor and autograd."""
