"""An optional extension graded as a course chooses (the bag layer, spec section 16): an ``extra_credit`` rubric item
adds what it earns and nothing to the maximum, the default rubric leaves bags ungraded, the feedback and Gradescope's
results name what the extension grades, and a class graded with the documented bag item scores every submission
without the extension as before."""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grading_samples as samples  # noqa: E402

from embconf.cli import main  # noqa: E402
from embconf.grading.feedback import feedback  # noqa: E402
from embconf.grading.outputs import gradescope_results  # noqa: E402
from embconf.grading.rubric import RubricError, load  # noqa: E402
from embconf.grading.score import score  # noqa: E402
from embconf.model.family import operations_of  # noqa: E402
from embconf.model.vocabulary import requirement_subjects  # noqa: E402


def named(requirement: str) -> str:
    """How the feedback names a requirement: its id and its subject (spec Appendix B)."""
    return f"{requirement} ({requirement_subjects()[requirement]})"


def _case(cid: str, requirement: str, operation: str, outcome: str, provided: bool = True) -> dict:
    return {"id": cid, "requirements": [requirement], "operation": operation, "outcome": outcome,
            "provided": provided, "message": "", "cause": None}  # fmt: skip


def _record(*cases: dict) -> dict:
    return {"name": "s", "entry": "s.py", "kind": "module", "status": "graded", "reason": "",
            "verdict": {"summary": "", "mistakes": []}, "cases": list(cases)}  # fmt: skip


LOOKUP = [
    _case("lookup.a", "EMB-FWD-1", "embedding_forward", "pass"),
    _case("lookup.b", "EMB-FWD-1", "embedding_forward", "fail"),
]
NO_BAGS = [_case(f"bag.{n}", "EMB-BAG-2", "embedding_bag_forward", "not_applicable", provided=False) for n in "xy"]
HALF_BAGS = [
    _case("bag.x", "EMB-BAG-2", "embedding_bag_forward", "pass"),
    _case("bag.y", "EMB-BAG-7", "embedding_bag_forward", "fail"),
]


@pytest.fixture
def rubric(tmp_path, corpus):
    path = tmp_path / "rubric.yaml"
    path.write_text(
        "rubric_format: 1\nitems:\n  - {id: lookup, points: 10, requirements: ['EMB-FWD-*']}\n"
        + samples.documented_bag_item(),
        encoding="utf-8",
    )
    return load(path, corpus.cases)


@pytest.mark.parametrize("bags, total", [(NO_BAGS, 5.0), (HALF_BAGS, 10.0)])
def test_extra_credit_adds_what_it_earns_and_nothing_to_the_maximum(rubric, bags, total):
    result = score(_record(*LOOKUP, *bags), rubric)
    assert rubric.max_points == 10 and result.max == 10 and result.total == total


def test_without_extra_credit_the_extension_counts_toward_the_maximum(tmp_path, corpus):
    path = tmp_path / "rubric.yaml"
    counted = samples.documented_bag_item().replace("    extra_credit: true\n", "")
    path.write_text("rubric_format: 1\nitems:\n" + counted, encoding="utf-8")
    result = score(_record(*HALF_BAGS), load(path, corpus.cases))
    assert result.max == 10 and result.total == 5


def test_extra_credit_must_be_a_boolean(tmp_path, corpus):
    path = tmp_path / "rubric.yaml"
    path.write_text(
        samples.documented_bag_item().replace("extra_credit: true", "extra_credit: 'yes'"), encoding="utf-8"
    )
    path.write_text("rubric_format: 1\nitems:\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(RubricError, match="extra_credit"):
        load(path, corpus.cases)


def test_the_default_rubric_grades_no_bag_case(corpus):
    rubric = load(None, corpus.cases)
    bags = [case for case in corpus.cases if case.operation in operations_of("bags")]  # hand-written and pairwise
    assert len(bags) >= 40 and rubric.max_points == 100
    assert not [
        case.id for case in bags if any(i.selects(case.id, case.requirements, case.operation) for i in rubric.items)
    ]


def test_the_feedback_names_what_an_unattempted_extension_grades(rubric):
    text = feedback(score(_record(*LOOKUP, *NO_BAGS), rubric), "title")
    lost, extra = text.split("## Extra credit (optional extensions)")
    assert "bags" not in lost.split("## What lost points")[1].lower()
    assert "not attempted (up to 10 extra points)" in extra and "define EmbeddingBag in the module" in extra
    assert named("EMB-BAG-2") in extra


def test_the_feedback_names_the_bag_requirements_not_met_yet(rubric):
    text = feedback(score(_record(*LOOKUP, *HALF_BAGS), rubric), "title")
    extra = text.split("## Extra credit (optional extensions)")[1]
    assert "5 / 10 (lost 5)" in extra and f"Not met yet: {named('EMB-BAG-7')}." in extra
    assert "EMB-BAG-2" not in extra.split("Not met yet:")[1].splitlines()[0]


def test_gradescope_shows_the_extension_as_extra_credit(rubric):
    untried = gradescope_results(score(_record(*LOOKUP, *NO_BAGS), rubric))["tests"][1]
    tried = gradescope_results(score(_record(*LOOKUP, *HALF_BAGS), rubric))
    assert untried["name"].endswith("(extra credit)") and "status" not in untried and untried["score"] == 0
    assert named("EMB-BAG-2") in untried["output"]
    assert tried["tests"][1]["status"] == "failed" and tried["score"] == 10


# ----- a class graded with the documented bag item ------------------------------------------------------------


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """{name: gradebook row} and the output folder of a class graded with the default rubric plus the bag item."""
    folder, out = tmp_path_factory.mktemp("submissions"), tmp_path_factory.mktemp("out")
    text = samples.module_text()
    (folder / "with_bags.py").write_text(text, encoding="utf-8")
    (folder / "without_bags.py").write_text(samples.without_bags(text), encoding="utf-8")
    (folder / "padded_mean.py").write_text(samples.module_text("bag_mean_counts_padding"), encoding="utf-8")
    (folder / "empty_mean.py").write_text(samples.module_text("bag_empty_mean_nan"), encoding="utf-8")
    (folder / "overwrite.py").write_text(samples.without_bags(samples.module_text("overwrite")), encoding="utf-8")
    assert (
        main(
            ["grade", str(folder), "--out", str(out), "--jobs", "1", "--rubric", str(samples.bag_rubric(folder.parent))]
        )
        == 0
    )
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as handle:
        return {row["name"]: row for row in csv.DictReader(handle)}, out


def test_a_class_without_the_extension_scores_as_under_the_default_rubric(graded, tmp_path):
    rows, _ = graded
    default_out = tmp_path / "default"
    folder = tmp_path / "submissions"
    folder.mkdir()
    (folder / "overwrite.py").write_text(samples.without_bags(samples.module_text("overwrite")), encoding="utf-8")
    assert main(["grade", str(folder), "--out", str(default_out), "--jobs", "1"]) == 0
    with open(default_out / "gradebook.csv", newline="", encoding="utf-8") as handle:
        default = {row["name"]: row for row in csv.DictReader(handle)}
    assert rows["overwrite"]["score"] == default["overwrite"]["score"] and float(rows["overwrite"]["score"]) < 100
    assert rows["without_bags"]["score"] == "100" and rows["without_bags"]["max"] == "100"
    assert rows["without_bags"]["bags"] == "0"


def test_the_extension_earns_extra_points_and_a_wrong_one_fewer(graded):
    rows, out = graded
    assert rows["with_bags"]["score"] == "110" and rows["with_bags"]["max"] == "100"
    assert 100 < float(rows["padded_mean"]["score"]) < 110
    text = (out / "feedback" / "padded_mean.md").read_text(encoding="utf-8")
    unmet = text.split("## Extra credit")[1].split("Not met yet: ")[1].splitlines()[0]
    assert "## What lost points" not in text and named("EMB-BAG-7") in unmet and "EMB-BAG-2 " not in unmet
    results = json.loads((out / "results" / "with_bags.json").read_text(encoding="utf-8"))
    assert results["score"] == 110 and results["tests"][-1]["name"].endswith("(extra credit)")


def test_a_bag_mistake_leaves_only_its_requirement_unmet(graded):
    """An unguarded mean divisor fails every mean bag with nothing counted (empty, only padding, weights summing to
    zero), pairwise cases among them that pin other requirements too: one mistake, only EMB-BAG-6 unmet."""
    _, out = graded
    text = (out / "feedback" / "empty_mean.md").read_text(encoding="utf-8")
    extra = text.split("## Extra credit")[1]
    failed = int(re.search(r"(\d+) of \d+ cases failed", extra)[1])
    assert failed >= 2 and f"Likely mistake ({failed} cases)" in extra, extra[:600]
    assert "`bag.forward.mean.padding_empty`" in extra and "`bag.forward.mean.weights_sum_zero`" in extra
    assert f"Not met yet: {named('EMB-BAG-6')}." in extra, extra[:600]


def test_embconf_check_scores_the_extension_as_extra_credit(tmp_path):
    import embconf

    module = tmp_path / "embeddings.py"
    module.write_text(samples.module_text("bag_mean_counts_padding"), encoding="utf-8")
    result = embconf.check(module, rubric=samples.bag_rubric(tmp_path), base=samples.EXAMPLE)
    line = next(
        line for line in str(result).splitlines() if "Optional extension: bags (EMB-BAG) (extra credit)" in line
    )
    assert result.score.max == 100 and 100 < result.score.total < 110 and "/ 10" in line
    assert "Optional extension: bags (EMB-BAG) (extra credit)" in result._repr_html_()
