"""Modules 10 and 11: text."""
