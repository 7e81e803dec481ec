"""Small SVG charts drawn on the server: a curve, horizontal bars, a scatter. No script and
no inline style (the pages' Content-Security-Policy allows neither); colours come from
classes in style.css. Every label passes through ``escape``: task ids and reasons come
from the store."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from markupsafe import Markup, escape

WIDTH, HEIGHT = 520, 280
PAD_L, PAD_R, PAD_T, PAD_B = 52, 16, 14, 42


@dataclass
class Series:
    name: str
    points: list[tuple[float, float]]
    css: str = "s0"  # s0..s3: the series colour


@dataclass
class Mark:
    """A labelled point drawn over a curve (a declared metric's value)."""

    x: float
    y: float
    label: str


@dataclass
class Point:
    x: float
    y: float
    title: str  # the tooltip
    href: str | None = None


@dataclass
class Axis:
    lo: float
    hi: float
    log: bool = False
    label: str = ""
    ticks: list[float] = field(default_factory=list)

    def scale(self, v: float, a: float, b: float) -> float:
        """``v`` in [lo, hi] to a pixel in [a, b]."""
        if self.log:
            lo, hi, v = math.log10(self.lo), math.log10(self.hi), math.log10(max(v, self.lo))
        else:
            lo, hi = self.lo, self.hi
        t = 0.5 if hi == lo else (v - lo) / (hi - lo)
        return a + (b - a) * min(1.0, max(0.0, t))


def _num(v: float) -> str:
    if v == int(v) and abs(v) < 1e6:
        return str(int(v))
    return f"{v:.3g}"


def linear_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    return [round(first + i * step, 10) for i in range(int((hi - first) / step + 1e-9) + 1)]


def log_ticks(lo: float, hi: float) -> list[float]:
    if lo >= 1 and hi <= 10:  # a few samples per task: every k gets its tick
        return [float(k) for k in range(math.ceil(lo), math.floor(hi) + 1)]
    out = []
    for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        for m in (1, 2, 5):
            v = m * 10.0**e
            if lo <= v <= hi:
                out.append(v)
    return out or [lo, hi]


def _frame(x: Axis, y: Axis, title: str) -> list[str]:
    """The SVG's opening, grid, ticks and axis labels."""
    x0, x1, y0, y1 = PAD_L, WIDTH - PAD_R, HEIGHT - PAD_B, PAD_T
    out = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
        f'role="img" aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title>",
    ]
    for t in y.ticks:
        py = y.scale(t, y0, y1)
        out.append(f'<line class="grid" x1="{x0}" x2="{x1}" y1="{py:.1f}" y2="{py:.1f}"/>')
        out.append(
            f'<text class="tick" x="{x0 - 6}" y="{py + 4:.1f}" text-anchor="end">{_num(t)}</text>'
        )
    for t in x.ticks:
        px = x.scale(t, x0, x1)
        out.append(f'<line class="grid" x1="{px:.1f}" x2="{px:.1f}" y1="{y0}" y2="{y1}"/>')
        out.append(
            f'<text class="tick" x="{px:.1f}" y="{y0 + 16}" text-anchor="middle">{_num(t)}</text>'
        )
    out.append(f'<line class="axis" x1="{x0}" x2="{x1}" y1="{y0}" y2="{y0}"/>')
    out.append(f'<line class="axis" x1="{x0}" x2="{x0}" y1="{y0}" y2="{y1}"/>')
    out.append(
        f'<text class="label" x="{(x0 + x1) / 2}" y="{HEIGHT - 6}" '
        f'text-anchor="middle">{escape(x.label)}</text>'
    )
    out.append(
        f'<text class="label" x="12" y="{(y0 + y1) / 2}" text-anchor="middle" '
        f'transform="rotate(-90 12 {(y0 + y1) / 2})">{escape(y.label)}</text>'
    )
    return out


def line_chart(
    series: Sequence[Series],
    *,
    title: str,
    x_label: str,
    y_label: str,
    log_x: bool = False,
    y_range: tuple[float, float] = (0.0, 1.0),
    marks: Sequence[Mark] = (),
) -> Markup:
    """Curves through their points (sorted by x), with labelled marks on top."""
    xs = [p[0] for s in series for p in s.points] + [m.x for m in marks]
    if not xs:
        return Markup("")
    lo, hi = min(xs), max(xs)
    if log_x:
        lo = max(lo, 1e-9)
        hi = hi if hi > lo else lo * 10
    elif hi == lo:
        hi = lo + 1
    x = Axis(lo, hi, log_x, x_label, log_ticks(lo, hi) if log_x else linear_ticks(lo, hi))
    y = Axis(*y_range, label=y_label, ticks=linear_ticks(*y_range))
    out = _frame(x, y, title)
    x0, x1, y0, y1 = PAD_L, WIDTH - PAD_R, HEIGHT - PAD_B, PAD_T
    for s in series:
        pts = sorted(s.points)
        path = " ".join(f"{x.scale(px, x0, x1):.1f},{y.scale(py, y0, y1):.1f}" for px, py in pts)
        out.append(f'<polyline class="line {escape(s.css)}" points="{path}"/>')
        for px, py in pts if len(pts) <= 40 else ():
            out.append(
                f'<circle class="dot {escape(s.css)}" cx="{x.scale(px, x0, x1):.1f}" '
                f'cy="{y.scale(py, y0, y1):.1f}" r="2.5"><title>{escape(s.name)}: '
                f"{_num(px)} → {py:.4f}</title></circle>"
            )
    for m in marks:
        cx, cy = x.scale(m.x, x0, x1), y.scale(m.y, y0, y1)
        out.append(
            f'<circle class="mark" cx="{cx:.1f}" cy="{cy:.1f}" r="4.5">'
            f"<title>{escape(m.label)} = {m.y:.4f}</title></circle>"
        )
        # Labels near the right edge go to the left of their mark.
        right = cx > WIDTH - PAD_R - 60
        out.append(
            f'<text class="marklabel" x="{cx + (-6 if right else 6):.1f}" y="{cy + 14:.1f}" '
            f'text-anchor="{"end" if right else "start"}">{escape(m.label)}</text>'
        )
    if len(series) > 1:
        out.extend(_legend(series))
    out.append("</svg>")
    return Markup("\n".join(out))


def _legend(series: Sequence[Series]) -> list[str]:
    out = []
    for i, s in enumerate(series):
        y = PAD_T + 6 + 16 * i
        out.append(
            f'<rect class="swatch {escape(s.css)}" x="{WIDTH - PAD_R - 150}" y="{y - 8}" '
            f'width="10" height="10"/>'
        )
        out.append(
            f'<text class="tick" x="{WIDTH - PAD_R - 135}" y="{y + 1}">{escape(s.name[:24])}</text>'
        )
    return out


def bar_chart(
    items: Sequence[tuple[str, float, str | None]], *, title: str, unit: str = ""
) -> Markup:
    """Horizontal bars, largest first as given: (label, value, link or None)."""
    if not items:
        return Markup("")
    label_w, bar_h, gap = 150, 18, 6
    width = WIDTH
    height = PAD_T + len(items) * (bar_h + gap) + 4
    top = max(v for _, v, _ in items) or 1
    out = [
        f'<svg class="chart bars" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="{escape(title)}" '
        f'xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title>",
    ]
    span = width - label_w - 70
    for i, (label, value, href) in enumerate(items):
        y = PAD_T + i * (bar_h + gap)
        w = max(1.0, span * value / top)
        bar = (
            f'<text class="tick" x="{label_w - 6}" y="{y + 13}" text-anchor="end">'
            f"{escape(label[:24])}</text>"
            f'<rect class="bar" x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h}">'
            f"<title>{escape(label)}: {_num(value)}{escape(unit)}</title></rect>"
            f'<text class="tick" x="{label_w + w + 5:.1f}" y="{y + 13}">{_num(value)}'
            f"{escape(unit)}</text>"
        )
        out.append(f'<a href="{escape(href)}">{bar}</a>' if href else bar)
    out.append("</svg>")
    return Markup("\n".join(out))


def scatter(
    points: Sequence[Point],
    *,
    title: str,
    x_label: str,
    y_label: str,
    log: bool = False,
    span: tuple[float, float] | None = None,
) -> Markup:
    """B against A per task, the same scale on both axes, with the diagonal y = x (above
    it: better in B). ``log`` for speeds; values <= 0 sit on the axes' floor."""
    if not points:
        return Markup("")
    values = [v for p in points for v in (p.x, p.y)]
    if span is not None:
        lo, hi = span
    elif log:
        positive = [v for v in values if v > 0] or [1.0]
        lo, hi = min(positive) / 1.5, max(positive) * 1.5
    else:
        lo, hi = min(0.0, *values), max(1.0, *values)
    ticks = log_ticks(lo, hi) if log else linear_ticks(lo, hi)
    x = Axis(lo, hi, log, x_label, ticks)
    y = Axis(lo, hi, log, y_label, ticks)
    out = _frame(x, y, title)
    x0, x1, y0, y1 = PAD_L, WIDTH - PAD_R, HEIGHT - PAD_B, PAD_T
    out.append(
        f'<line class="diagonal" x1="{x0}" y1="{y0}" x2="{x.scale(hi, x0, x1):.1f}" '
        f'y2="{y.scale(hi, y0, y1):.1f}"/>'
    )
    # Tasks on the same spot (pass rates of 5 samples take 6 values) are one dot, sized
    # by how many they are.
    spots: dict[tuple[float, float], list[Point]] = {}
    for p in points:
        spots.setdefault((round(p.x, 9), round(p.y, 9)), []).append(p)
    for (px, py), group in spots.items():
        cls = "up" if py > px else "down" if py < px else "same"
        r = 3.5 + 2.2 * (math.sqrt(len(group)) - 1)
        shown = "\n".join(p.title for p in group[:12])
        more = f"\n… {len(group) - 12} more" if len(group) > 12 else ""
        title = (f"{len(group)} tasks\n" if len(group) > 1 else "") + shown + more
        dot = (
            f'<circle class="pt {cls}" cx="{x.scale(px, x0, x1):.1f}" '
            f'cy="{y.scale(py, y0, y1):.1f}" r="{r:.1f}"><title>{escape(title)}</title></circle>'
        )
        href = group[0].href if len(group) == 1 else None
        out.append(f'<a href="{escape(href)}">{dot}</a>' if href else dot)
    out.append("</svg>")
    return Markup("\n".join(out))
