"""The conformance matrix: implementations side by side, requirement by requirement.

Rooms:
- ``command``: ``embconf matrix``, each implementation run through :mod:`embconf.session`, or ``--merge``;
- ``merge``: column files measured in several environments (a venv, a container, a CI job) as one document,
  each column keeping the environment it was measured in;
- ``model``: the run records as one JSON document (spec/schemas/matrix.schema.json), sections from
  ``spec/vocabulary.json``, deviations from each record's verdict;
- ``markdown`` and ``html``: renderers that read only that document, so a saved JSON renders again.
"""

from __future__ import annotations

from embconf.matrix.model import MATRIX_FORMAT, build, write_json

__all__ = ["MATRIX_FORMAT", "build", "write_json"]
