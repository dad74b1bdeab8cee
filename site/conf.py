"""Sphinx configuration of the course website (built by ``tools/site.py``, never by hand).

``tools/site.py`` copies this file, the pages next to it, the executed notebooks and
the student notebooks into ``site/_build/src`` and runs Sphinx there. The lessons
are NOT executed again: myst-nb renders the outputs stored in ``notebooks/``.
"""
import os
import sys
from pathlib import Path

# The library is pip-installed (-e .); the repository root is put first anyway so that
# the docstrings rendered are always those of this checkout.
ROOT = Path(os.environ.get("NN_FROM_SCRATCH_ROOT", Path(__file__).resolve().parents[3]))
sys.path.insert(0, str(ROOT))

project = "nn_from_scratch"
author = "the nn_from_scratch authors"
copyright = "the nn_from_scratch authors"

extensions = [
    "myst_nb",               # Markdown pages and executed notebooks
    "sphinx.ext.autodoc",    # the library page: docstrings from the code
    "sphinx.ext.napoleon",   # ... which are written in Google style (Args:, Returns:)
    "sphinx.ext.mathjax",
]
exclude_patterns = [
    "_build", "_*.md",       # _readme.md and the generated parts: included, not pages
    "notebooks/**", "student/**",   # downloads only; the lesson pages live in lessons/
]

# --- notebooks: use the committed outputs, never execute ---
nb_execution_mode = "off"
# Checker outputs carry a custom MIME type next to text/plain: never choose it, show the
# text/plain line. (tools/site.py also drops it from the staged pages: myst-nb would otherwise
# warn about it while reading, before this priority list is consulted.)
nb_mime_priority_overrides = [("*", "application/vnd.nn-from-scratch.check+json", None)]
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3     # README links such as (#for-students) resolve on the site

# --- the library page ---
autodoc_member_order = "bysource"
autodoc_typehints = "none"           # the docstrings give shapes, which say more than types
autodoc_preserve_defaults = True     # dtype=jnp.float32, not dtype=<class '...float32'>
napoleon_google_docstring = True
napoleon_numpy_docstring = False

# --- maths: a local MathJax 3, no CDN (readers and CI may be offline) ---
# tools/site.py copies it from the sphinx-mathjax-offline package into _static/mathjax.
mathjax_path = "mathjax/tex-chtml.js"
mathjax3_config = {"tex": {"inlineMath": [["\\(", "\\)"]], "displayMath": [["\\[", "\\]"]]}}

# --- the look ---
html_theme = "sphinx_book_theme"
html_title = "nn_from_scratch"
html_favicon = "_static/favicon.svg"   # also spares the browser a /favicon.ico that is not there
html_context = {"default_mode": "auto"}  # light or dark as the reader's system says
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_js_files = [("zh-stemmer.js", {"priority": 100})]  # before Sphinx's language_data.js
html_show_sourcelink = False
html_copy_source = False
html_last_updated_fmt = None
html_show_copyright = False
repository_url = os.environ.get("SITE_REPOSITORY_URL", "")  # set by the Pages workflow
html_theme_options = {
    "home_page_in_toc": True,
    "show_toc_level": 2,
    "show_navbar_depth": 1,
    "use_download_button": False,   # each lesson has its own download links, see tools/site.py
    "use_fullscreen_button": False,
    "repository_url": repository_url,
    "use_repository_button": bool(repository_url),
    "path_to_docs": "site",
    "navbar_persistent": [],        # the search box sits in the sidebar; no second one on top
    # English | 中文 on every page (tools/site.py builds both languages, html/ and html/zh/)
    "article_header_end": ["article-header-buttons.html", "lang-switch.html"],
}
templates_path = ["_templates"]
# tools/site.py sets language=zh_CN for the Chinese site: Sphinx's own words in Chinese, and a
# search index that splits Chinese text into words (with jieba, from the site extra).
pygments_style = "friendly"
