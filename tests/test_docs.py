"""The docs stay short where they must and true everywhere: the README's length, every relative link, and
every figure written by scripts/docs_figures.py (a figure typed by hand or gone stale fails here)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest
from helpers import ROOT, run_cli

FIGURES = ROOT / "scripts" / "docs_figures.py"
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Pages other engineers are writing on their own branches at the same time; drop each once it is merged.
BEING_WRITTEN = {ROOT / "docs" / "security.md", ROOT / "docs" / "autograder.md"}
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_the_readme_is_at_most_200_lines():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 200


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_every_relative_link_resolves(document):
    text = document.read_text(encoding="utf-8")
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue  # a URL, or an anchor of the same page
        path = (document.parent / target.split("#", 1)[0]).resolve()
        if not path.exists() and path not in BEING_WRITTEN:
            broken.append(target)
    assert broken == [], f"{document.name}: links to nothing: {broken}"


def test_the_readme_links_a_page_for_every_audience():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    pages = ["running-and-ci", "implementations", "protocol", "course-staff", "autograder"]
    pages += ["diagnosis", "bench", "security", "maintainers"]
    assert [page for page in pages if f"(docs/{page}.md)" not in readme] == []


def _figures(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(FIGURES), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=600)


def test_every_figure_in_the_docs_is_what_the_suite_says_now():
    done = _figures("--check")
    assert done.returncode == 0, done.stdout


def test_a_figure_typed_by_hand_is_caught_and_rewritten(tmp_path):
    (tmp_path / "docs").mkdir()
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    readme = tmp_path / "README.md"
    text = readme.read_text(encoding="utf-8")
    assert "<!-- figure:cases -->" in text
    readme.write_text(re.sub(r"(<!-- figure:cases -->)[^<]*", r"\g<1>85", text), encoding="utf-8")
    stale = _figures("--check", "--root", str(tmp_path))
    assert stale.returncode == 1
    assert "figure 'cases' is '85'" in stale.stdout
    assert _figures("--root", str(tmp_path)).returncode == 0
    assert readme.read_text(encoding="utf-8") == text
    assert _figures("--check", "--root", str(tmp_path)).returncode == 0


def test_an_unknown_figure_name_is_refused(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("There are <!-- figure:unicorns -->3<!-- /figure --> of them.\n")
    done = _figures("--check", "--root", str(tmp_path))
    assert done.returncode == 1 and "unknown figure 'unicorns'" in done.stdout


TEMPORARY = re.compile(r"(?<![\w.])(/tmp/|/var/tmp/|/var/folders/|/private/var/folders/)")


def test_no_doc_names_a_temporary_path():
    """A path in a temporary folder exists only on the machine that wrote it: no reader can follow it."""
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / "docs").rglob("*")) + [ROOT / "README.md"]
        if path.is_file()
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        if TEMPORARY.search(line)
    ]
    assert found == []


def test_a_generated_matrix_names_the_command_that_regenerates_it(tmp_path):
    out = tmp_path / "m.md"
    command = "bash docs/regenerate-matrix.sh"
    done = run_cli(
        "matrix", "--impl", "reference", "-k", "lookup.forward.*", "--markdown", str(out), "--regenerate-with", command
    )
    assert done.returncode == 0, done.stderr
    assert f"```\n{command}\n```" in out.read_text(encoding="utf-8") and str(tmp_path) not in out.read_text(
        encoding="utf-8"
    )
    script = (ROOT / "docs" / "regenerate-matrix.sh").read_text(encoding="utf-8")
    assert f'--regenerate-with "{command}"' in script


def test_every_docs_file_named_exists():
    """A docs page, script or document named in the docs, the READMEs or the suite's messages is there."""
    sources = [*DOCUMENTS, *ROOT.glob("examples/*/README.md"), *ROOT.glob("conformance/**/*.py")]
    named = {
        (path.relative_to(ROOT), name)
        for path in sources
        for name in re.findall(r"(?<![\w/.])docs/[\w./-]+\.(?:md|html|json|sh)", path.read_text(encoding="utf-8"))
    }
    assert sorted((str(path), name) for path, name in named if not (ROOT / name).exists()) == []


def test_no_install_hint_asks_an_index_for_the_suite():
    """The suite is on no package index: every install hint works from a checkout or a wheel, and torch's names its
    CPU build."""
    from embconf.adapters.frameworks import install_line

    sources = [*DOCUMENTS, *ROOT.glob("conformance/**/*.py")]
    asking = [
        str(path.relative_to(ROOT))
        for path in sources
        if re.search(r"pip install '?embedding-conformance\b", path.read_text(encoding="utf-8"))
    ]
    assert asking == []
    assert install_line("torch").startswith("pip install torch --index-url https://download.pytorch.org/whl/cpu")
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in (
        ROOT / "docs" / "running-and-ci.md"
    ).read_text(encoding="utf-8")


def test_the_ci_recipe_installs_each_framework_at_the_matrix_pins_and_torch_from_its_cpu_index():
    """The framework columns of docs/running-and-ci.md install what requirements-matrix.txt pins (what .ci/run
    installs), with PyTorch's CPU wheels offered to pip (the CUDA build is several GB), naming no host."""
    recipe = (ROOT / "docs" / "running-and-ci.md").read_text(encoding="utf-8").split("### One matrix")[1]
    recipe = recipe.split("```yaml")[1].split("```")[0]
    pinned = dict(
        line.split("==", 1)
        for line in (ROOT / "requirements-matrix.txt").read_text(encoding="utf-8").splitlines()
        if re.match(r"^[\w-]+==[\w.]+$", line)
    )
    pins = [pin for group in re.findall(r'pins: "([^"]+)"', recipe) for pin in group.split()]
    assert {"torch==2.13.0"} <= set(pins) and all(pinned[pin.split("==")[0]] == pin.split("==")[1] for pin in pins)
    assert "${{ matrix.pins }}" in recipe and "PIP_EXTRA_INDEX_URL: ${{ vars.TORCH_CPU_INDEX }}" in recipe
    assert "https://" not in recipe
