"""The conformance matrix: implementations side by side, requirement by requirement.

Rooms:
- ``command``: ``embconf matrix``, each implementation run through :mod:`embconf.session`, or ``--merge``;
- ``merge``: column files measured in several environments (a venv, a container, a CI job) as one document,
  each column keeping the environment it was measured in;
- ``model``: the run records as one JSON document (spec/schemas/matrix.schema.json), sections from
  ``spec/vocabulary.json``, deviations from each record's verdict;
- ``markdown`` and ``html``: renderers that read only that document, so a saved JSON renders again; the HTML
  page in rooms of its own: ``html_columns`` (what the page knows of a column, its anchors), ``html_grid`` (the
  grid and its CSS-only filters), ``html_details`` (the summary and each implementation's deviations and cases),
  ``html_style`` (the style sheet).
"""

from __future__ import annotations

from embconf.matrix.model import MATRIX_FORMAT, build, write_json

__all__ = ["MATRIX_FORMAT", "build", "write_json"]
