"""``embconf explore``: a search for what the goldens miss. It draws inputs at the boundaries of each family's
declared input domains (``reference/cases/domains.py``) with Hypothesis, has the reference compute each expected
value and the spec's rules its tolerance, runs them through the one pipeline (:mod:`embconf.session`: the same
worker processes, timeouts and judging as ``embconf run``), and shrinks a failure to a minimal input, written as
a candidate fixture on request.

Rooms:
- ``draw``: what one drawn case is (an operation, its boundaries, a seed), the seeded draws of them, the case built
  from one (the reference's answer its golden, the requirement ids it exercises), and the Hypothesis strategy of
  the draws inside a failure (what a shrink walks).
- ``features``: the optional features a drawn case needs, read off its inputs as the goldens carry them.
- ``budget``: how much one area's search may spend, and the defaults.
- ``search``: one area searched under its budget, the first failure shrunk; deterministic for a seed.
- ``candidate``: the shrunk failures as a fixture file (the fixtures' schema) that ``embconf run --fixtures``
  loads.
- ``command``: the command's options and what it prints.
"""
