"""A rubric item grades every optional feature it names: a case not applicable only because the submission does not
claim features the item names counts as failed, not attempted (whatever ``not_applicable`` says), so leaving a wrong
mode out of a bag class's ``MODES`` buys back nothing; an item naming no features counts such a case as before."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grading_samples as samples  # noqa: E402
from helpers import assert_exit, assert_one_line_error, run_cli  # noqa: E402

from embconf.adapters.tinytorch_bags import bag_claim, unclaimed_reason  # noqa: E402
from embconf.grading.check_text import unattempted  # noqa: E402
from embconf.grading.feedback import feedback  # noqa: E402
from embconf.grading.rubric import RubricError, load  # noqa: E402
from embconf.grading.score import score  # noqa: E402

MAX_UNCLAIMED = "mode max: not attempted (not in EmbeddingBag.MODES)"
BAGS = "  - {id: bags, points: 10, requirements: ['EMB-BAG-[0-9]*'], operations: [embedding_bag_forward]"


def _rubric(tmp_path: Path, corpus, item: str) -> object:
    path = tmp_path / "rubric.yaml"
    path.write_text(f"rubric_format: 1\nitems:\n{item}\n", encoding="utf-8")
    return load(path, corpus.cases)


def _case(cid: str, outcome: str, unclaimed: tuple[str, ...] = (), provided: bool = True) -> dict:
    return {"id": cid, "requirements": ["EMB-BAG-4"], "operation": "embedding_bag_forward", "outcome": outcome,
            "provided": provided, "message": "", "cause": None, **({"unclaimed": list(unclaimed)} if unclaimed else {})}  # fmt: skip


def _record(*cases: dict) -> dict:
    return {"name": "s", "entry": "s.py", "kind": "module", "status": "graded", "reason": "",
            "verdict": {"summary": "", "mistakes": []}, "cases": list(cases)}  # fmt: skip


SUM_PASSES = _case("bag.sum", "pass")
MAX_LEFT_OUT = _case("bag.max", "not_applicable", ("bag-max",))


@pytest.mark.parametrize("policy", ["exclude", "pass"])
def test_a_case_of_a_named_feature_left_unclaimed_counts_as_failed_whatever_not_applicable_says(
    tmp_path, corpus, policy
):
    rubric = _rubric(tmp_path, corpus, BAGS + f", features: [bag-max], not_applicable: {policy}}}")
    result = score(_record(SUM_PASSES, MAX_LEFT_OUT), rubric).items[0]
    assert (result.passed, result.counted, result.points) == (1, 2, 5.0)
    assert [c["id"] for c in result.unattempted] == ["bag.max"]


def test_an_item_naming_no_features_counts_an_unclaimed_case_as_not_applicable_says(tmp_path, corpus):
    result = score(_record(SUM_PASSES, MAX_LEFT_OUT), _rubric(tmp_path, corpus, BAGS + "}")).items[0]
    assert (result.passed, result.counted, result.points, result.unattempted) == (1, 1, 10.0, [])


def test_a_case_also_needing_a_feature_the_item_does_not_name_keeps_its_policy(tmp_path, corpus):
    rubric = _rubric(tmp_path, corpus, BAGS + ", features: [bag-max]}")
    half = _case("bag.max.float16", "not_applicable", ("bag-max", "float16"))
    result = score(_record(SUM_PASSES, half), rubric).items[0]
    assert (result.counted, result.points) == (1, 10.0)


def test_a_submission_without_the_operation_keeps_the_missing_policy(tmp_path, corpus):
    rubric = _rubric(tmp_path, corpus, BAGS + ", features: [bag-max], missing: exclude, extra_credit: true}")
    absent = _case("bag.max", "not_applicable", ("bag-max",), provided=False)
    result = score(_record(absent), rubric)
    assert (result.items[0].counted, result.total, result.items[0].lost) == (0, 0.0, 0.0)


def test_a_missing_operation_is_told_missing_not_unattempted(tmp_path, corpus):
    rubric = _rubric(tmp_path, corpus, BAGS + ", features: [bag-max]}")
    text = feedback(score(_record(_case("bag.max", "not_applicable", ("bag-max",), provided=False)), rubric), "title")
    assert "the module has no EmbeddingBag" in text and "not attempted" not in text


def test_the_feedback_says_what_was_not_attempted_once(tmp_path, corpus):
    rubric = _rubric(tmp_path, corpus, BAGS + ", features: [bag-max]}")
    result = score(_record(SUM_PASSES, MAX_LEFT_OUT, _case("bag.max.ties", "not_applicable", ("bag-max",))), rubric)
    text = feedback(result, "title")
    assert text.count(MAX_UNCLAIMED) == 1 and f"{MAX_UNCLAIMED}: 2 cases counted as failed." in text
    assert "`bag.max` (not attempted)" in text and "no known mistake" not in text
    assert unattempted(result) == [f"{MAX_UNCLAIMED}: 2 cases the rubric grades count as failed."]


class _Bag:
    """The handed-out interface (docs/course-staff.md) with weighted mean: it claims every feature it names."""

    MODES, WEIGHTED_MODES = ("sum", "mean", "max"), ("sum", "mean")

    def __init__(self, vocab_size, embed_dim, mode="mean", padding_idx=None, include_last_offset=False): ...

    def forward(self, indices, offsets=None, per_sample_weights=None): ...


def _interface(**attributes: object) -> types.ModuleType:
    """A module whose EmbeddingBag is the interface with ``attributes`` replaced."""
    return types.SimpleNamespace(EmbeddingBag=type("EmbeddingBag", (_Bag,), attributes))  # type: ignore[return-value]


LEFT_OUT = {  # feature -> the interface changed as the feedback's reason for not claiming it says
    "bag-max": {"MODES": ("sum", "mean")},
    "bag-weights": {"forward": lambda self, indices, offsets=None: None},
    "bag-weighted-mean": {"WEIGHTED_MODES": ("sum",)},
    "bag-padding": {"__init__": lambda self, vocab_size, embed_dim, mode="mean", include_last_offset=False: None},
    "bag-last-offset": {"__init__": lambda self, vocab_size, embed_dim, mode="mean", padding_idx=None: None},
    "bag-2d": {"forward": lambda self, indices, offsets, per_sample_weights=None: None},
}


@pytest.mark.parametrize("feature", sorted(LEFT_OUT))
def test_the_reason_given_for_a_feature_not_attempted_is_what_leaves_it_unclaimed(feature):
    assert feature in bag_claim(_interface())
    assert feature not in bag_claim(_interface(**LEFT_OUT[feature]))
    what, why = unclaimed_reason(feature)
    assert what != feature and why


@pytest.mark.parametrize(
    "features, words",
    [("[bag-maxx]", ("unknown feature 'bag-maxx'", "bag-max")), ("[rope-yarn]", ("no case it grades", "rope-yarn"))],
)
def test_a_feature_no_case_of_the_item_needs_is_refused_in_one_line(tmp_path, corpus, features, words):
    with pytest.raises(RubricError, match="item 'bags'") as raised:
        _rubric(tmp_path, corpus, BAGS + f", features: {features}}}")
    assert "\n" not in str(raised.value) and all(word in str(raised.value) for word in words)
    (tmp_path / "subs").mkdir()
    assert_one_line_error(
        run_cli(
            "grade", str(tmp_path / "subs"), "--out", str(tmp_path / "out"), "--rubric", str(tmp_path / "rubric.yaml")
        ),
        *words,
    )


def test_features_must_be_a_list_of_names(tmp_path, corpus):
    with pytest.raises(RubricError, match="features"):
        _rubric(tmp_path, corpus, BAGS + ", features: bag-max}")


# ----- a class of three graded as a TA grades it --------------------------------------------------------------


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The gradebook scores, feedback and Gradescope scores of a class graded with the documented bag item: a correct
    bag layer, one whose max starts from zero, and the same with max left out of ``MODES``."""
    root = tmp_path_factory.mktemp("class")
    folder = root / "submissions"
    folder.mkdir()
    wrong = samples.module_text("bag_max_from_zero")
    listed = 'MODES = ("sum", "mean", "max")'
    assert listed in wrong, "the example's bag layer no longer lists its modes so"
    students = {"correct": samples.module_text(), "max_wrong": wrong, "max_hidden": wrong.replace(listed, 'MODES = ("sum", "mean")')}  # fmt: skip
    for name, text in students.items():
        (folder / f"{name}.py").write_text(text, encoding="utf-8")
    rubric = samples.bag_rubric(root)
    assert_exit(run_cli("grade", str(folder), "--out", str(root / "out"), "--jobs", "2", "--rubric", str(rubric)), 0)
    rows = (root / "out" / "gradebook.csv").read_text(encoding="utf-8").splitlines()
    header = rows[0].split(",")
    scores = {row.split(",")[0]: float(row.split(",")[header.index("score")]) for row in rows[1:]}
    gradescope = {}
    for name in ("max_wrong", "max_hidden"):
        upload, results = root / name, root / f"{name}.json"
        upload.mkdir()
        (upload / "embeddings.py").write_text(students[name], encoding="utf-8")
        assert_exit(run_cli("gradescope", "--submission", str(upload), "--results", str(results), "--rubric", str(rubric)), 0)  # fmt: skip
        gradescope[name] = json.loads(results.read_text(encoding="utf-8"))
    return scores, root / "out" / "feedback", gradescope


def test_leaving_a_wrong_mode_out_of_modes_scores_no_more_than_listing_it(graded):
    scores, _, _ = graded
    assert scores["correct"] == 110 and scores["max_hidden"] <= scores["max_wrong"] < 110


def test_the_feedback_tells_the_student_which_mode_was_not_attempted(graded):
    _, feedback_folder, _ = graded
    hidden = (feedback_folder / "max_hidden.md").read_text(encoding="utf-8").split("## Extra credit")[1]
    assert hidden.count(MAX_UNCLAIMED) == 1 and "(not attempted)" in hidden
    assert MAX_UNCLAIMED not in (feedback_folder / "max_wrong.md").read_text(encoding="utf-8")


def test_gradescope_gives_the_class_the_scores_grade_gives(graded):
    scores, _, gradescope = graded
    for name, results in gradescope.items():
        assert results["score"] == scores[name], name
    bags = gradescope["max_hidden"]["tests"][-1]
    assert bags["name"].endswith("(extra credit)") and MAX_UNCLAIMED in bags["output"]
