"""Student submissions for the grading tests and benchmark, made from the example student's module:
correct or with one realistic mistake, as a package folder, a single module, a percent-format
notebook or a Jupyter notebook (nbdev ``#| export`` cells); with or without its optional bag layer, and the
rubric docs/course-staff.md gives for grading that layer."""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path
from typing import Optional

from embconf.grading.rubric import DEFAULT_RUBRIC

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tinytorch_student"
MODULE = EXAMPLE / "tinytorch" / "core" / "embeddings.py"

# mistake -> (text in the correct module, its replacement)
MISTAKES: dict[str, tuple[str, str]] = {
    "overwrite": ("np.add.at(grad_weight, self.ids, grad_output)", "grad_weight[self.ids] = grad_output"),
    "sin_cos_swapped": (
        "table[:, 0::2] = np.sin(angles)\n    table[:, 1::2] = np.cos(",
        "table[:, 0::2] = np.cos(angles)\n    table[:, 1::2] = np.sin(",
    ),
    "exponent_sign": ("np.exp(-two_i * math.log(10000.0)", "np.exp(two_i * math.log(10000.0)"),
    "start_pos_ignored": ("self.position_embeddings[start:start + seq_len]", "self.position_embeddings[0:seq_len]"),
    "syntax_error": ("POS_ENCODINGS = (", "def broken(:\n    pass\nPOS_ENCODINGS = ("),
    "bag_mean_counts_padding": (  # the bag layer's mean divided by every position, padding included (EMB-BAG-7)
        'return float(self.w[positions].sum()) if self.mode == "mean" else 1.0',
        'return float(self.w[self.bounds[b][0]:self.bounds[b][1]].sum()) if self.mode == "mean" else 1.0',
    ),
    "bag_empty_mean_nan": (  # an empty (or weightless) bag's mean is 0 / 0 (EMB-BAG-6)
        "if not positions.size or self.divisors[b] == 0:\n            return np.zeros",
        'if self.mode != "mean" and (not positions.size or self.divisors[b] == 0):\n            return np.zeros',
    ),
    "bag_max_from_zero": (  # a max that starts from zero: a bag of negative rows gives 0 (EMB-BAG-4)
        "return self.rows[positions].max(axis=0)",
        "return np.maximum(self.rows[positions].max(axis=0), 0.0)",
    ),
}
NEVER_RUN = 'raise SystemExit("a grader executed a cell that is not exported")'


def module_text(mistake: Optional[str] = None) -> str:
    text = MODULE.read_text(encoding="utf-8")
    if mistake is None:
        return text
    old, new = MISTAKES[mistake]
    assert old in text, f"the example module changed: {old!r} is gone"
    return text.replace(old, new, 1)


def gradebook(out: Path) -> dict[str, dict[str, str]]:
    """The rows of OUT/gradebook.csv by submission name."""
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as handle:
        return {row["name"]: row for row in csv.DictReader(handle)}


def module_doing(code: str) -> str:
    """The correct module running ``code`` first thing when it is imported (a hostile submission)."""
    head, future, rest = module_text().partition("from __future__ import annotations\n")
    assert future, "the example module no longer starts with a __future__ import"
    return head + future + code + rest


def notebook_cells(
    mistake: Optional[str] = None, source: Optional[str] = None, default_exp: str = "core.embeddings"
) -> list[tuple[str, str]]:
    """(cell type, source) cells of a notebook exporting the module (or ``source``) to ``default_exp``: prose,
    exported code, a test cell."""
    parts = (module_text(mistake) if source is None else source).split("\n\n# ----- ")
    cells = [("markdown", "# Module 11: embeddings"), ("code", f"#| default_exp {default_exp}")]
    for number, part in enumerate(parts):
        cells.append(("code", "#| export\n" + (part if number == 0 else "# ----- " + part)))
        cells.append(("code", f"# a check the student runs while working\n{NEVER_RUN}"))
    return cells


def write(folder: Path, name: str, form: str, mistake: Optional[str] = None, **notebook: str) -> Path:
    """Write one submission in ``form`` (package, module, percent, ipynb) into ``folder``; ``notebook``: the
    ``source`` and ``default_exp`` of a notebook form (default: the example module, to core.embeddings)."""
    if form == "package":
        path = folder / name
        shutil.copytree(EXAMPLE / "tinytorch", path / "tinytorch", ignore=shutil.ignore_patterns("__pycache__"))
        (path / "tinytorch" / "core" / "embeddings.py").write_text(module_text(mistake), encoding="utf-8")
    elif form == "module":
        path = folder / f"{name}.py"
        path.write_text(module_text(mistake), encoding="utf-8")
    elif form == "percent":
        path = folder / f"{name}.py"
        path.write_text(
            "".join(
                f"# %%{' [markdown]' if kind == 'markdown' else ''}\n"
                + (_commented(src) if kind == "markdown" else src)
                + "\n\n"
                for kind, src in notebook_cells(mistake, **notebook)
            ),
            encoding="utf-8",
        )
    elif form == "ipynb":
        path = folder / f"{name}.ipynb"
        cells = [
            {
                "cell_type": kind,
                "metadata": {},
                "source": src.splitlines(keepends=True),
                **({"outputs": [], "execution_count": None} if kind == "code" else {}),
            }
            for kind, src in notebook_cells(mistake, **notebook)
        ]
        path.write_text(
            json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8"
        )
    else:
        raise ValueError(form)
    return path


def _commented(text: str) -> str:
    return "\n".join(f"# {line}" for line in text.splitlines())


def documented_bag_item() -> str:
    """The YAML of the bag item docs/course-staff.md tells a course to add to its rubric."""
    doc = (EXAMPLE.parents[1] / "docs" / "course-staff.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Optional extension: bags") :]
    return re.search(r"```yaml\n(.*?)```", section, re.S).group(1)


def bag_rubric(folder: Path) -> Path:
    """The default rubric with the documented extra-credit bag item."""
    path = folder / "rubric.yaml"
    path.write_text(DEFAULT_RUBRIC.read_text(encoding="utf-8") + documented_bag_item(), encoding="utf-8")
    return path


def without_bags(module: str) -> str:
    """A module-11 text without the bag layer (the example's last section, and its names in ``__all__``)."""
    module = module.replace('    "EmbeddingBag",\n    "EmbeddingBagFunction",\n', "")
    return module[: module.index("\n\n# ----- optional extension: bags")] + "\n"
