"""Figures, Markdown tables and pages for the study scripts in this folder.

One place for what every study repeats around its computations: where the repository and the
shared robots are, the command line (--quick, --out), a figure set up and saved with the
project's settings (Agg backend, tight layout, 90 dpi PNG), labelled axes, number formats, a
Markdown table from a header and rows, and the page that collects text, figure links and tables
before it is written next to its figures.

Importing this module also puts the repository's python/ and build/python/ folders at the end
of sys.path (after PYTHONPATH, so an explicit module location wins), so that a study imports
plucker and plucker_studies after it.
"""
import argparse
import math
import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _extra in (os.path.join(REPO, "python"), os.path.join(REPO, "build", "python")):
    if os.path.isdir(_extra) and _extra not in sys.path:
        sys.path.append(_extra)

#: The shared robots' URDFs (PLUCKER_SHARED_DIR/models, default ../shared/models); may be absent.
MODELS_DIR = os.path.join(os.environ.get("PLUCKER_SHARED_DIR", os.path.join(REPO, "..", "shared")), "models")
#: Where a study writes its page and figures unless --out says otherwise.
OUT_DIR = os.path.join(REPO, "docs", "studies")
#: Resolution of every saved figure (dots per inch).
DPI = 90


# ------------------------------------------------------------------------------ numbers
def fmt_compact(x):
    """Three significant digits; below 1e-2 or from 1e3 on as mantissa e exponent without padding
    (1.23e4, 5e-5); None as '-', infinities as 'inf', strings unchanged."""
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    if math.isinf(x):
        return "inf"
    if x == 0:
        return "0"
    if abs(x) >= 1e3 or abs(x) < 1e-2:
        mant, exp = f"{x:.2e}".split("e")
        return f"{float(mant):.3g}e{int(exp)}"
    return f"{x:.3g}"


def fmt_sig(x, d=4):
    """d significant digits for 1e-3 <= |x| < 1e5 (and 0), else d - 1 decimals in e notation;
    strings unchanged."""
    if isinstance(x, str):
        return x
    x = float(x)
    if x == 0 or (1e-3 <= abs(x) < 1e5):
        return f"{x:.{d}g}"
    return f"{x:.{d - 1}e}"


def _formatter(spec):
    """A cell formatter from a callable or a format specification such as '.3g' (strings pass
    through unchanged)."""
    if callable(spec):
        return spec
    if isinstance(spec, str):
        return lambda c: c if isinstance(c, str) else format(c, spec)
    raise TypeError(f"a cell format must be a callable or a format specification string, not {type(spec).__name__}")


def table(header, rows, fmt):
    """A Markdown table: the header row, the separator and one row per entry of rows. fmt formats
    the cells: one formatter (a callable or a format specification such as '.3g') for every cell,
    or a list of them, one per column. Every row must have as many cells as the header."""
    n = len(header)
    cols = [_formatter(f) for f in fmt] if isinstance(fmt, (list, tuple)) else [_formatter(fmt)] * n
    if len(cols) != n:
        raise ValueError(f"table: {len(cols)} column formats for {n} header columns")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * n]
    for i, row in enumerate(rows):
        row = list(row)
        if len(row) != n:
            raise ValueError(f"table: row {i} has {len(row)} cells, the header {n} ({', '.join(header)})")
        lines.append("| " + " | ".join(f(c) for f, c in zip(cols, row)) + " |")
    return "\n".join(lines)


# ------------------------------------------------------------------------------ figures
def pyplot():
    """matplotlib.pyplot on the Agg backend (files only, no display)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def new_figure(nrows=1, ncols=1, figsize=(7, 4.5)):
    """A new figure and its axes (one Axes, or an array of them for several panels)."""
    return pyplot().subplots(nrows, ncols, figsize=figsize)


def label_axes(ax, xlabel=None, ylabel=None, title=None, legend=None, grid=None):
    """Label one Axes, then add its legend and grid. legend: None (none), True (default size), a
    number (font size) or a dict of Axes.legend's options; grid: None (none), True (major lines),
    'both' (major and minor lines, for log axes) or a dict of Axes.grid's options; both grids
    are drawn at alpha 0.3."""
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    if title is not None:
        ax.set_title(title)
    if legend is not None:
        ax.legend(**(legend if isinstance(legend, dict) else {} if legend is True else dict(fontsize=legend)))
    if grid is True:
        ax.grid(alpha=0.3)
    elif grid == "both":
        ax.grid(True, which="both", alpha=0.3)
    elif isinstance(grid, dict):
        ax.grid(True, **dict(dict(alpha=0.3), **grid))
    elif grid is not None:
        raise ValueError(f"label_axes: grid must be None, True, 'both' or a dict, not {grid!r}")


def save_figure(fig, out, name, title=None):
    """Give the figure its overall title (if any), lay it out, write it as out/name at DPI and
    close it; returns name (the page links figures by name, next to the page)."""
    if title is not None:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(os.path.join(out, name), dpi=DPI)
    pyplot().close(fig)
    return name


# ------------------------------------------------------------------------------ pages
class Page:
    """A Markdown page built block by block: page(text) appends a block, and the blocks are
    joined by newlines, so a block that ends in a newline is followed by a blank line."""

    def __init__(self, fmt):
        self.fmt = fmt  # the default cell format of the page's tables
        self.blocks = []

    def __call__(self, text):
        self.blocks.append(text)

    def figure(self, name, alt=None):
        """A figure link, ![alt](name), as a paragraph of its own."""
        self(f"![{name if alt is None else alt}]({name})\n")

    def table(self, header, rows, fmt=None, end="\n"):
        """A table (the page's cell format unless fmt is given), followed by end."""
        self(table(header, rows, self.fmt if fmt is None else fmt) + end)

    def text(self):
        return "\n".join(self.blocks)


def main(argv, doc, quick_help, page_name, build):
    """The command line every study has: --quick (reduced sizes, for the tests) and --out (the
    folder for the page and its figures). build(quick, out, t0) runs the study and returns
    (page text, list of figure names); the page is written as out/page_name."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help=quick_help)
    ap.add_argument("--out", default=OUT_DIR, help="output folder (page and PNGs)")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    t0 = time.time()
    page, figures = build(args.quick, args.out, t0)
    path = os.path.join(args.out, page_name)
    with open(path, "w") as f:
        f.write(page)
    print(f"{os.path.splitext(page_name)[0]}: wrote {path} and {len(figures)} figures in {time.time() - t0:.1f} s")
    return 0
