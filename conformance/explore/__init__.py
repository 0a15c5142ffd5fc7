"""``embconf explore``: a search for what the goldens miss. It draws inputs at the boundaries of each family's
declared input domains (``reference/cases/domains.py``) with Hypothesis, has the reference compute each expected
value and the spec's rules its tolerance, runs them through the one pipeline (:mod:`embconf.session`: the same
worker processes, timeouts and judging as ``embconf run``), and shrinks a failure to a minimal input, written as
a candidate fixture on request.

Rooms:
- ``draw``: what one drawn case is (an operation, its boundaries, a seed) and the Hypothesis strategy of them;
  the case built from one, with the reference's answer, and the requirement ids it exercises.
- ``search``: one area searched under a budget (cases and seconds), the failure shrunk; deterministic for a seed.
- ``candidate``: the shrunk failures as a fixture file (the fixtures' schema) that ``embconf run --fixtures``
  loads.
- ``command``: the command's options and what it prints.
"""
