"""study_pages: the figures, Markdown tables and pages shared by the study scripts.

Every expected string below is written out by hand (not produced by the code under test); the
figure checks read the written PNG back and compare its pixel size with figsize x 90 dpi.
"""
import os
import sys

import numpy as np
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "studies"))
import study_pages as sp  # noqa: E402


# ------------------------------------------------------------------ numbers
@pytest.mark.parametrize("x, text", [
    (None, "-"), ("as is", "as is"), (0.0, "0"), (float("inf"), "inf"), (float("-inf"), "inf"),
    (1.23456, "1.23"), (0.0123, "0.0123"), (999.4, "999"), (1234.5, "1.23e3"), (-98765.0, "-9.88e4"),
    (5e-5, "5e-5"), (0.00999, "9.99e-3"), (1e300, "1e300")])
def test_fmt_compact(x, text):
    assert sp.fmt_compact(x) == text


@pytest.mark.parametrize("x, d, text", [
    ("as is", 4, "as is"), (0, 4, "0"), (1.0, 4, "1"), (0.123456, 4, "0.1235"), (0.001, 4, "0.001"),
    (0.000999, 4, "9.990e-04"), (99999.0, 4, "1e+05"), (100000.0, 4, "1.000e+05"), (-2.5e-7, 3, "-2.50e-07"),
    (np.float64(3.14159), 2, "3.1")])
def test_fmt_sig(x, d, text):
    assert sp.fmt_sig(x, d) == text


# ------------------------------------------------------------------ tables
def test_table_one_format_for_every_cell():
    assert sp.table(["a", "b"], [(1.0, "x"), (0.5, 2)], sp.fmt_sig) == (
        "| a | b |\n"
        "|---|---|\n"
        "| 1 | x |\n"
        "| 0.5 | 2 |")


def test_table_formats_per_column():
    rows = [(20.0, 0.123456, 3.2e-6), (1e5, "n/a", 0.0)]
    assert sp.table(["k", "G", "diff"], rows, ["g", sp.fmt_compact, ".1e"]) == (
        "| k | G | diff |\n"
        "|---|---|---|\n"
        "| 20 | 0.123 | 3.2e-06 |\n"
        "| 100000 | n/a | 0.0e+00 |")


def test_table_without_rows_is_header_and_separator():
    assert sp.table(["only"], [], sp.fmt_sig) == "| only |\n|---|"


def test_table_refuses_rows_of_the_wrong_length():
    with pytest.raises(ValueError, match=r"row 1 has 3 cells, the header 2 \(a, b\)"):
        sp.table(["a", "b"], [(1, 2), (1, 2, 3)], sp.fmt_sig)


def test_table_refuses_a_format_list_of_the_wrong_length():
    with pytest.raises(ValueError, match="3 column formats for 2 header columns"):
        sp.table(["a", "b"], [(1, 2)], ["g", "g", "g"])


def test_table_refuses_a_format_that_is_neither_callable_nor_a_spec():
    with pytest.raises(TypeError, match="not int"):
        sp.table(["a"], [(1,)], [3])


# ------------------------------------------------------------------ pages
def test_page_blocks_figures_and_tables():
    w = sp.Page(sp.fmt_sig)
    w("# Title\n")
    w.figure("fig_a.png", "first")
    w.figure("fig_b.png")
    w.table(["x", "y"], [(1.5, 2.0)])
    w.table(["p"], [(0.25,)], fmt=".1f", end="")
    w("\nafter the table")
    assert w.text() == (
        "# Title\n\n"
        "![first](fig_a.png)\n\n"
        "![fig_b.png](fig_b.png)\n\n"
        "| x | y |\n|---|---|\n| 1.5 | 2 |\n\n"
        "| p |\n|---|\n| 0.2 |\n\n"
        "after the table")


# ------------------------------------------------------------------ figures
def _png_size(path):
    import matplotlib.image as mi
    h, w_ = mi.imread(path).shape[:2]
    return w_, h


def test_save_figure_writes_a_png_at_90_dpi_and_closes_it(tmp_path):
    plt = sp.pyplot()
    fig, axs = sp.new_figure(1, 2, figsize=(6, 2.5))
    assert len(axs) == 2
    axs[0].plot([0, 1], [0, 1], label="line")
    sp.label_axes(axs[0], "t (s)", "x (m)", "panel", legend=7, grid=True)
    sp.label_axes(axs[1], ylabel="only y", grid=dict(which="both", axis="x"))
    assert (axs[0].get_xlabel(), axs[0].get_ylabel(), axs[0].get_title()) == ("t (s)", "x (m)", "panel")
    assert axs[0].get_legend().get_texts()[0].get_text() == "line"
    assert axs[1].get_xlabel() == "" and axs[1].get_ylabel() == "only y" and axs[1].get_legend() is None
    n_open = len(plt.get_fignums())
    assert sp.save_figure(fig, str(tmp_path), "two.png", title="overall") == "two.png"
    assert fig._suptitle.get_text() == "overall"
    assert len(plt.get_fignums()) == n_open - 1
    assert _png_size(tmp_path / "two.png") == (6 * 90, round(2.5 * 90))


def test_label_axes_refuses_an_unknown_grid():
    fig, ax = sp.new_figure()
    try:
        with pytest.raises(ValueError, match="grid must be None, True, 'both' or a dict"):
            sp.label_axes(ax, grid="minor")
    finally:
        sp.pyplot().close(fig)


# ------------------------------------------------------------------ command line
def test_main_writes_the_page_and_reports(tmp_path, capsys):
    seen = {}

    def build(quick, out, t0):
        seen.update(quick=quick, out=out)
        return "# page\n", ["a.png", "b.png"]

    out = tmp_path / "sub"
    assert sp.main(["--quick", "--out", str(out)], "A study.\n\nMore.", "tests", "mystudy.md", build) == 0
    assert seen == dict(quick=True, out=str(out))
    assert (out / "mystudy.md").read_text() == "# page\n"
    printed = capsys.readouterr().out
    assert printed.startswith(f"mystudy: wrote {out / 'mystudy.md'} and 2 figures in ")


def test_main_defaults_to_the_docs_studies_folder_and_rejects_unknown_options():
    assert sp.OUT_DIR == os.path.join(REPO, "docs", "studies")
    with pytest.raises(SystemExit):
        sp.main(["--fast"], "A study.", "tests", "x.md", lambda *a: ("", []))
