"""The class report's score histogram: ten bars over [0, max], and scores above the maximum (extra credit) in a
bar of their own, never in the top one."""

from __future__ import annotations

from embconf.grading.report import histogram


def test_scores_above_the_maximum_get_a_bar_of_their_own():
    bars = histogram([0, 55, 95, 100, 104.5, 109.68], 100)
    assert [bar["count"] for bar in bars] == [1, 0, 0, 0, 0, 1, 0, 0, 0, 2, 2]
    assert bars[-1]["label"] == "above 100 (extra credit)" and bars[-2]["label"] == "90-100"
    assert bars[-1]["x"] + bars[-1]["w"] <= 600  # every bar inside the chart


def test_without_extra_credit_there_are_ten_bars():
    bars = histogram([10, 100], 100)
    assert len(bars) == 10 and bars[-1]["count"] == 1 and bars[0]["count"] == 0
