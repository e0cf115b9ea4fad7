"""A stacked bar chart as plain geometry, for a server-rendered SVG (no script, no library).

Pure: labels and numbers in, rectangles and ticks out. The template draws them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

WIDTH, HEIGHT = 760, 240
LEFT, RIGHT, TOP, BOTTOM = 44, 8, 10, 28


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    series: str  # the series key: the CSS class that colours it
    title: str  # what a pointer or a screen reader is told: "2026-12-01 · blocked: 3"


@dataclass
class Chart:
    width: int = WIDTH
    height: int = HEIGHT
    bars: list[Bar] = field(default_factory=list)
    y_ticks: list[tuple[float, int]] = field(default_factory=list)  # (y, value)
    x_labels: list[tuple[float, str]] = field(default_factory=list)  # (x centre, label)
    baseline: float = HEIGHT - BOTTOM
    left: int = LEFT
    right: int = WIDTH - RIGHT
    total: int = 0


def nice_ceiling(value: int) -> int:
    """The smallest of 1, 2, 5 × 10^k at or above `value` (at least 1)."""
    if value <= 1:
        return 1
    power = 10 ** int(math.floor(math.log10(value)))
    for step in (1, 2, 5, 10):
        if step * power >= value:
            return step * power
    return 10 * power  # pragma: no cover — the loop always returns


def stacked_bars(columns: list[tuple[str, dict[str, int]]], series: list[tuple[str, str]]) -> Chart:
    """One column per (label, {series key: count}); `series` is [(key, name)] bottom to top."""
    chart = Chart()
    plot_width = chart.right - LEFT
    plot_height = chart.baseline - TOP
    peak = max((sum(values.get(key, 0) for key, _ in series) for _, values in columns), default=0)
    top_value = nice_ceiling(peak)
    chart.total = sum(sum(values.get(key, 0) for key, _ in series) for _, values in columns)
    chart.y_ticks = [(round(chart.baseline - plot_height * step / 4, 1), round(top_value * step / 4))
                     for step in range(5) if top_value * step % 4 == 0]
    if not columns:
        return chart
    slot = plot_width / len(columns)
    bar_width = max(slot * 0.7, 1.0)
    every = max(1, math.ceil(len(columns) / 10))  # at most ten labels under the columns
    for index, (label, values) in enumerate(columns):
        x = LEFT + index * slot + (slot - bar_width) / 2
        y = chart.baseline
        for key, name in series:
            count = values.get(key, 0)
            if count <= 0:
                continue
            height = plot_height * count / top_value
            y -= height
            chart.bars.append(Bar(round(x, 1), round(y, 1), round(bar_width, 1), round(height, 1), key,
                                  f"{label} · {name}: {count}"))
        if index % every == 0 or index == len(columns) - 1:
            chart.x_labels.append((round(x + bar_width / 2, 1), label))
    return chart
