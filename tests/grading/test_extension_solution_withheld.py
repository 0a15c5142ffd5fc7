"""The autograder carries a course's bag extension and no solution of it: the zip ships the rubric with its
extra-credit item and module 11's stub in the base (the example's bag layer lives there), a base defining
``EmbeddingBag`` in another file is refused in one line, and nothing the bundled wheel is built from defines
the bag layer outside the module the stub replaces."""

from __future__ import annotations

import ast
import sys
import zipfile
from pathlib import Path

import pytest
from helpers import ROOT, assert_exit, assert_one_line_error, run_cli

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grading_samples as samples  # noqa: E402

from embconf.autograder.build import bag_solution  # noqa: E402
from embconf.autograder.stub import STUB  # noqa: E402
from embconf.autograder.wheel import CHECKOUT_PARTS  # noqa: E402

REQUIREMENT = "embedding-conformance==0.1.0"  # an explicit requirement: no wheel is built
BAG_CLASSES = {"EmbeddingBag", "EmbeddingBagFunction"}


def defines_bag_layer(source: bytes) -> bool:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    return any(isinstance(node, ast.ClassDef) and node.name in BAG_CLASSES for node in ast.walk(tree))


def test_the_zip_carries_the_bag_rubric_and_no_bag_layer(tmp_path):
    course = samples.write(tmp_path, "course", "package")  # the course's package: module 11 with its bag layer
    assert defines_bag_layer((course / "tinytorch" / "core" / "embeddings.py").read_bytes())
    out = tmp_path / "autograder.zip"
    done = run_cli("autograder", "--out", str(out), "--suite", REQUIREMENT, "--base", str(course),
                   "--rubric", str(samples.bag_rubric(tmp_path)))  # fmt: skip
    assert_exit(done, 0)
    with zipfile.ZipFile(out) as archive:
        assert "extra_credit: true" in archive.read("rubric.yaml").decode()
        assert archive.read("base/tinytorch/core/embeddings.py").decode() == STUB
        assert [name for name in archive.namelist() if defines_bag_layer(archive.read(name))] == []


def test_a_base_defining_the_bag_layer_elsewhere_is_refused(tmp_path):
    course = samples.write(tmp_path, "course", "package")
    (course / "tinytorch" / "core" / "bags.py").write_text(
        "class EmbeddingBag:\n    MODES = ('sum',)\n", encoding="utf-8"
    )
    out = tmp_path / "autograder.zip"
    done = run_cli("autograder", "--out", str(out), "--suite", REQUIREMENT, "--base", str(course))
    assert_one_line_error(done, "tinytorch/core/bags.py defines EmbeddingBag", "tinytorch/core/embeddings.py")
    assert not out.exists()


BOUND_OTHERWISE = {  # a bag solution in a base file, bound under another name than a class EmbeddingBag
    "renamed": "class _Bag:\n    def forward(self, indices, offsets=None):\n        return indices\nEmbeddingBag = _Bag\n",
    "imported_as": "from tinytorch.core._private import Pooled as EmbeddingBag\n",
    "modes_only": "class Pooled:\n    MODES = ('sum', 'mean')\n",
    "functional": "def reduce_bags(weight, ids, offsets, mode='sum'):\n    return weight[ids]\n",
    "assigned": "EmbeddingBag = type('Pooled', (), {})\n",
    "set_by_name": "import sys\nsetattr(sys.modules['tinytorch.core'], 'EmbeddingBag', object)\n",
}


def test_a_base_binding_the_bag_layer_under_another_name_is_refused(tmp_path):
    course = samples.write(tmp_path, "course", "package")
    (course / "tinytorch" / "core" / "pooling.py").write_text(BOUND_OTHERWISE["renamed"], encoding="utf-8")
    out = tmp_path / "autograder.zip"
    done = run_cli("autograder", "--out", str(out), "--suite", REQUIREMENT, "--base", str(course))
    assert_one_line_error(done, "tinytorch/core/pooling.py defines _Bag (forward takes offsets)")
    assert not out.exists()


@pytest.mark.parametrize("source", sorted(BOUND_OTHERWISE.values()), ids=sorted(BOUND_OTHERWISE))
def test_bag_code_is_found_by_what_it_is(source):
    assert bag_solution(ast.parse(source)) != ""


def test_the_rest_of_a_tinytorch_package_is_no_bag_code():
    package = ROOT / "examples" / "tinytorch_student" / "tinytorch"
    others = [p for p in package.rglob("*.py") if p.name != "embeddings.py"]
    assert others and [p.name for p in others if bag_solution(ast.parse(p.read_bytes()))] == []


def test_the_wheel_is_built_from_nothing_else_defining_the_bag_layer():
    example_module = ROOT / "examples" / "tinytorch_student" / "tinytorch" / "core" / "embeddings.py"
    sources = [p for part in CHECKOUT_PARTS for p in sorted((ROOT / part).rglob("*.py")) if (ROOT / part).is_dir()]
    defining = [p.relative_to(ROOT).as_posix() for p in sources if defines_bag_layer(p.read_bytes())]
    assert len(sources) > 100 and defining == [example_module.relative_to(ROOT).as_posix()]
