"""Pure engines of the review UI: where hints' passages sit in an answer, and the chart's geometry."""
import pytest

from governance.review.chart import nice_ceiling, stacked_bars
from governance.review.passages import place, span_of

TEXT = "The kettle is revolutionary and arrives by Friday."


def hint(passage, start=None, end=None):
    if start is None and passage is not None and passage in TEXT:
        start = TEXT.index(passage)
        end = start + len(passage)
    return {"passage": passage, "start": start, "end": end}


def test_pieces_put_the_text_back_together_and_mark_each_passage():
    placed = place(TEXT, [hint("revolutionary"), hint("by Friday")])
    assert "".join(p.text for p in placed.pieces) == TEXT
    marked = [(p.text, p.hints, p.first_of) for p in placed.pieces if p.hints]
    assert marked == [("revolutionary", (0,), (0,)), ("by Friday", (1,), (1,))]
    assert placed.placed == {0, 1}


def test_overlapping_passages_are_cut_at_every_boundary():
    placed = place(TEXT, [hint("is revolutionary"), hint("revolutionary and")])
    assert "".join(p.text for p in placed.pieces) == TEXT
    assert [(p.text, p.hints, p.first_of) for p in placed.pieces if p.hints] == [
        ("is ", (0,), (0,)), ("revolutionary", (0, 1), (1,)), (" and", (1,), ()),
    ]


def test_a_hint_is_only_marked_where_its_offsets_hold_its_passage():
    assert span_of(TEXT, hint("revolutionary")) == (14, 27)
    assert span_of(TEXT, hint("revolutionary", 0, 13)) is None  # offsets that point elsewhere
    assert span_of(TEXT, hint(None, 0, 3)) == (0, 3)  # no passage quoted: the offsets decide
    assert span_of(TEXT, hint("x", 5, 5)) is None
    assert span_of(TEXT, hint("x", 40, 400)) is None
    assert span_of(TEXT, {"passage": "The", "start": True, "end": 3}) is None
    assert span_of(TEXT, {"passage": "The", "start": "0", "end": 3}) is None
    assert span_of(TEXT, {"passage": None}) is None
    placed = place(TEXT, [hint("revolutionary", 0, 13), hint("kettle")])
    assert placed.placed == {1}


def test_an_empty_text_has_no_pieces():
    assert place("", [hint("x", 0, 1)]).pieces == []


def test_stacked_bars_scale_to_a_round_peak_and_stack_in_series_order():
    chart = stacked_bars([("2026-12-01", {"a": 3, "b": 1}), ("2026-12-02", {}), ("2026-12-03", {"b": 8})],
                         [("a", "A"), ("b", "B")])
    assert chart.total == 12
    assert [tick[1] for tick in chart.y_ticks] == [0, 5, 10]
    first = [bar for bar in chart.bars if bar.title.startswith("2026-12-01")]
    assert [bar.series for bar in first] == ["a", "b"]
    a, b = first
    assert a.y + a.height == pytest.approx(chart.baseline) and b.y + b.height == pytest.approx(a.y)  # b on a
    tallest = [bar for bar in chart.bars if bar.title.startswith("2026-12-03")][0]
    assert tallest.height == round((chart.baseline - 10) * 8 / 10, 1)
    assert b.title == "2026-12-01 · B: 1"
    assert chart.x_labels[0][1] == "2026-12-01" and chart.x_labels[-1][1] == "2026-12-03"


def test_an_empty_chart_has_an_axis_and_no_bars():
    chart = stacked_bars([("d", {})], [("a", "A")])
    assert chart.bars == [] and chart.total == 0 and chart.y_ticks[-1][1] == 1


def test_nice_ceiling():
    assert [nice_ceiling(v) for v in (0, 1, 2, 3, 7, 11, 50, 51, 999)] == [1, 1, 2, 5, 10, 20, 50, 100, 1000]


def test_every_occurrence_of_a_judged_passage_is_marked():
    """Issue 43: a judge quotes a passage once; the same words elsewhere are marked too."""
    from governance.review.passages import place

    text = "Delivery by Friday is certain. Call us. Delivery by Friday is certain, we said."
    passage = "Delivery by Friday is certain"
    hint = {"check": "rules_judge", "type": "violation", "passage": passage, "start": 0, "end": len(passage)}
    placed = place(text, [hint])
    marked = [p.text for p in placed.pieces if p.hints]
    assert marked == [passage, passage]
    assert placed.occurrences == {0: 2}
    # Offsets that do not hold the passage still mark nothing.
    assert place(text, [{**hint, "start": 1, "end": 5}]).placed == set()
