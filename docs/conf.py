# Sphinx configuration of plucker's documentation site (`make docs`, scripts/build_docs.py).
#
# Sources: the Markdown pages of docs/ (MyST), DEVELOPERS.md (included by conventions.md),
# the docstrings of the compiled module `plucker` and of python/plucker_cli.py and
# python/plucker_sweep.py (autodoc: the module must be importable, PYTHONPATH=build/python:python).
# The C++ reference is a Doxygen HTML tree (docs/Doxyfile) written beside the site, in cpp/.
# Nothing is fetched at build time.
import glob
import os
import re
import sys

from docutils import nodes
from docutils.parsers.rst import Directive

project = "plucker"
author = "the plucker developers"
copyright = "plucker developers"

try:
    import plucker

    release = version = getattr(plucker, "__version__", "")
except ImportError as e:  # autodoc needs the built module: say so instead of a page of warnings
    sys.exit(f"docs/conf.py: cannot import the plucker module ({e}); build it (make build) and set "
             "PYTHONPATH=build/python:python")

extensions = ["myst_parser", "sphinx.ext.autodoc"]  # no MathJax: the pages have no LaTeX maths

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
# Not pages of the site: the Doxygen configuration and the Doxygen main page (docs/Doxyfile).
exclude_patterns = ["_build", "Doxyfile", "api/doxygen_mainpage.md"]

# MyST: GitHub-style heading anchors so that the existing pages' [limits](#limits) links resolve.
myst_heading_anchors = 3
myst_enable_extensions = ["deflist"]

html_theme = "alabaster"  # ships with Sphinx: no further package
html_title = "plucker documentation"
html_theme_options = {"description": "rigid-body robot dynamics in C++20 and Python", "fixed_sidebar": True,
                      "page_width": "1100px", "sidebar_width": "260px"}
html_sidebars = {"**": ["about.html", "navigation.html", "relations.html", "searchbox.html"]}
html_show_sourcelink = False
smartquotes = False  # keep the quotes of code in docstrings as typed (copyable)

autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": True}

# ---- the compiled module's docstrings are plain text (written for help()), not reStructuredText:
# escape the characters reST would read as markup (|x| substitutions, *emphasis*, `roles`,
# trailing_ references, backslashes), so that they render as written and -W stays clean.
_RST_SPECIAL = re.compile(r"([\\*|`])")
_TRAILING_UNDERSCORE = re.compile(r"(\w)_(?=\W|$)")


def _plain_text_docstring(app, what, name, obj, options, lines):
    if not name.startswith("plucker."):  # plucker_cli / plucker_sweep: reST-compatible already
        return
    for i, line in enumerate(lines):
        line = _RST_SPECIAL.sub(r"\\\1", line)
        lines[i] = _TRAILING_UNDERSCORE.sub(r"\1\\_", line)


class CliHelp(Directive):
    """`{cli-help}`: the --help text of `plucker` and of each subcommand, from the parser itself."""

    def run(self):
        import argparse

        import plucker_cli

        parser = plucker_cli.parser()
        parser.prog = "plucker"
        out = [parser.format_help()]
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    out.append(sub.format_help())
        text = "\n".join(out)
        block = nodes.literal_block(text, text)
        block["language"] = "text"
        return [block]


def _studies_toctree(app, docname, source):
    """Appends the "Studies" section to the index: every docs/studies/*.md. A toctree :glob: that
    matches nothing is a warning (an error under -W), so the section is added only when there is
    a study to list."""
    if docname != "index":
        return
    studies = sorted(glob.glob(os.path.join(app.srcdir, "studies", "*.md")))
    if studies:
        entries = "\n".join("studies/" + os.path.splitext(os.path.basename(p))[0] for p in studies)
        source[0] += f"\n```{{toctree}}\n:maxdepth: 1\n:caption: Studies\n\n{entries}\n```\n"


def setup(app):
    app.connect("source-read", _studies_toctree)
    app.connect("autodoc-process-docstring", _plain_text_docstring)
    app.add_directive("cli-help", CliHelp)
    return {"parallel_read_safe": True}
