"""Log-log line plots written as SVG with the Python standard library only.

Used by bench/compare: one plot per metric, x = message size in bytes, y = metric, one line
per configuration.  Points with non-positive coordinates cannot sit on log axes and are left out
(the tables keep them).
"""
import math
from xml.sax.saxutils import escape

WIDTH, HEIGHT = 900, 560
LEFT, RIGHT, TOP, BOTTOM = 90, 230, 50, 70
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf"]
DASHES = ["", "6,3", "2,3", "8,3,2,3"]


def size_label(v):
    """1024 -> '1K', 4194304 -> '4M' (binary units, as the benchmarks use)."""
    for unit, div in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if v >= div and v % div == 0:
            return "%d%s" % (v // div, unit)
    return "%g" % v


def value_label(v):
    if v >= 1e4 or v < 1e-2:
        return "%.0e" % v
    return "%g" % v


def _log_range(values, base):
    lo = min(values)
    hi = max(values)
    a = math.floor(math.log(lo, base) + 1e-9)
    b = math.ceil(math.log(hi, base) - 1e-9)
    if a == b:
        a, b = a - 1, b + 1
    return a, b


class _Axes:
    def __init__(self, xs, ys):
        self.xa, self.xb = _log_range(xs, 2)
        self.ya, self.yb = _log_range(ys, 10)
        self.w = WIDTH - LEFT - RIGHT
        self.h = HEIGHT - TOP - BOTTOM

    def px(self, x):
        return LEFT + (math.log2(x) - self.xa) / (self.xb - self.xa) * self.w

    def py(self, y):
        return TOP + self.h - (math.log10(y) - self.ya) / (self.yb - self.ya) * self.h


def _text(x, y, s, anchor="middle", size=12, extra=""):
    return ('<text x="%.1f" y="%.1f" font-size="%d" text-anchor="%s" %s>%s</text>'
            % (x, y, size, anchor, extra, escape(s)))


def _grid(ax):
    out = []
    step = 2 if ax.xb - ax.xa > 16 else 1
    for e in range(ax.xa, ax.xb + 1):
        x = ax.px(2 ** e)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>'
                   % (x, TOP, x, TOP + ax.h))
        if (e - ax.xa) % step == 0:
            out.append(_text(x, TOP + ax.h + 18, size_label(2 ** e), size=11))
    for e in range(ax.ya, ax.yb + 1):
        y = ax.py(10 ** e)
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ccc"/>'
                   % (LEFT, y, LEFT + ax.w, y))
        out.append(_text(LEFT - 8, y + 4, value_label(10.0 ** e), "end", 11))
        for m in range(2, 10):
            if e < ax.yb:
                ym = ax.py(m * 10 ** e)
                out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#f0f0f0"/>'
                           % (LEFT, ym, LEFT + ax.w, ym))
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>'
               % (LEFT, TOP, ax.w, ax.h))
    return out


def _series(ax, idx, name, pts):
    colour = COLOURS[idx % len(COLOURS)]
    dash = DASHES[(idx // len(COLOURS)) % len(DASHES)] if idx >= len(COLOURS) else ""
    path = " ".join("%s%.1f,%.1f" % ("M" if i == 0 else "L", ax.px(x), ax.py(y))
                    for i, (x, y) in enumerate(pts))
    out = ['<path d="%s" fill="none" stroke="%s" stroke-width="2" %s/>'
           % (path, colour, 'stroke-dasharray="%s"' % dash if dash else "")]
    for x, y in pts:
        out.append('<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>' % (ax.px(x), ax.py(y), colour))
    ly = TOP + 10 + idx * 20
    lx = LEFT + ax.w + 15
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2" %s/>'
               % (lx, ly, lx + 25, ly, colour, 'stroke-dasharray="%s"' % dash if dash else ""))
    out.append(_text(lx + 32, ly + 4, name, "start", 12))
    return out


def plot(path, title, ylabel, series, note=""):
    """series: list of (name, [(size, value), ...]).  Writes an SVG file at path."""
    clean = [(n, [(x, y) for x, y in pts if x > 0 and y > 0]) for n, pts in series]
    clean = [(n, pts) for n, pts in clean if pts]
    xs = [x for _, pts in clean for x, _ in pts] or [1, 2]
    ys = [y for _, pts in clean for _, y in pts] or [1, 10]
    ax = _Axes(xs, ys)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif">' % (WIDTH, HEIGHT),
           '<rect width="100%" height="100%" fill="white"/>',
           _text(LEFT + ax.w / 2, 28, title, size=16, extra='font-weight="bold"')]
    out += _grid(ax)
    for i, (name, pts) in enumerate(clean):
        out += _series(ax, i, name, pts)
    out.append(_text(LEFT + ax.w / 2, HEIGHT - 25, "message size (bytes, log scale)", size=13))
    out.append(_text(22, TOP + ax.h / 2, ylabel + " (log scale)", size=13,
                     extra='transform="rotate(-90 22 %.1f)"' % (TOP + ax.h / 2)))
    if note:
        out.append(_text(LEFT, HEIGHT - 6, note, "start", 10, 'fill="#555"'))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
