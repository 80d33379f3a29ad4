"""Output safety, generated: hostile strings in every field that reaches Markdown, HTML or CSV.

Each property renders what the toolkit writes with a real parser (markdown-it-py with the GFM table
and strikethrough rules, as the Hub renders cards; the standard library's HTML and CSV parsers) and
asserts that the text comes back literally and that no element was created from data.
"""

from __future__ import annotations

import csv
import io
import urllib.parse

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from support.hostile import HOSTILE, MD, TABLE_TAGS, URLS, parse_html, table

from mvlsib import escape

N = 300  # examples per property


@settings(max_examples=N, deadline=None)
@given(HOSTILE)
def test_md_text_in_a_table_cell_is_literal(text):
    doc = table(escape.md_text(text))
    assert doc.cells == [escape.flat(text), "end"]  # one cell, the text as given, nothing split off
    assert set(doc.tags) <= TABLE_TAGS


@settings(max_examples=N, deadline=None)
@given(HOSTILE)
def test_md_text_in_a_list_item_is_literal(text):
    doc = parse_html(MD.render(f"- id: {escape.md_text(text)} end\n"))
    assert doc.cells == [f"id: {escape.flat(text)} end"]
    assert set(doc.tags) <= {"ul", "li"}


@settings(max_examples=N, deadline=None)
@given(HOSTILE)
def test_md_text_between_emphasis_marks_is_literal(text):
    flat = escape.flat(text)
    doc = parse_html(MD.render(f"- *{escape.md_text(text) or 'untitled'}* by x\n"))
    assert doc.cells == [f"{flat or 'untitled'} by x"]
    assert set(doc.tags) <= {"ul", "li", "em"}


@settings(max_examples=N, deadline=None)
@given(HOSTILE)
def test_md_code_in_a_table_cell_and_in_text(text):
    flat = escape.flat(text)
    doc = table(escape.md_code(text))
    assert doc.cells == [flat, "end"]
    assert set(doc.tags) <= TABLE_TAGS | {"code"}
    doc = parse_html(MD.render(f"- {escape.md_code(text, in_table=False)} end\n"))
    assert doc.cells == [f"{flat} end" if flat else "end"]
    assert set(doc.tags) <= {"ul", "li", "code"}


@settings(max_examples=N, deadline=None)
@given(URLS, HOSTILE)
def test_md_link_links_only_web_urls(url, label):
    doc = table(escape.md_link(url, escape.md_text(label)))
    assert len(doc.cells) == 2 and doc.cells[1] == "end"
    target = escape.web_url(url)
    if target is None:
        assert "a" not in doc.tags and doc.cells[0] == escape.flat(escape.url_text(url))
    else:
        assert doc.tags.count("a") <= 1
        assert all(urllib.parse.urlsplit(h).scheme.lower() in ("http", "https") for h in doc.hrefs)
    assert set(doc.tags) <= TABLE_TAGS | {"a"}


@settings(max_examples=N, deadline=None)
@given(URLS)
def test_md_autolink_links_only_web_urls(url):
    doc = parse_html(MD.render(f"- source: {escape.md_autolink(url)}\n"))
    assert set(doc.tags) <= {"ul", "li", "a"} and len(doc.cells) == 1
    if escape.web_url(url) is None:
        assert not doc.hrefs and doc.cells == [f"source: {escape.flat(escape.url_text(url))}".rstrip()]
    else:
        assert len(doc.hrefs) == 1 and urllib.parse.urlsplit(doc.hrefs[0]).scheme.lower() in ("http", "https")


@settings(max_examples=N, deadline=None)
@given(HOSTILE, URLS)
def test_html_text_and_href_make_no_element(text, url):
    href = escape.html_href(url)
    page = f'<p title="{escape.html_text(text)}">{escape.html_text(text)}</p>'
    if href is not None:
        page += f'<a href="{href}">x</a>'
    doc = parse_html(page)
    assert doc.tags == ["p"] + (["a"] if href is not None else [])
    assert doc.cells == [escape._CONTROLS.sub("", text)]
    if href is not None:
        assert doc.hrefs == [url.strip()]


FORMULA = set("=+-@\t\r\n\uff1d\uff0b\uff0d\uff20")


@settings(max_examples=N, deadline=None)
@given(st.one_of(HOSTILE, st.floats(allow_nan=False), st.integers(), st.none()))
def test_csv_cell_never_starts_a_formula(value):
    cell = escape.csv_cell(value)
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow([cell])  # as every CSV writer of the toolkit
    back = next(csv.reader(io.StringIO(buf.getvalue(), newline="")))[0]
    if isinstance(value, str):
        plain_number = escape._PLAIN_NUMBER.fullmatch(value) is not None
        assert plain_number or not (back[:1] in FORMULA or back.lstrip()[:1] in FORMULA)
        # the other changes: CR written as LF, a control or bidi character shown as its escape
        lf = escape.cell_text(value.replace("\r\n", "\n").replace("\r", "\n"))
        assert back == lf or back == "'" + lf  # nothing else changed
    else:
        assert cell is value


@settings(max_examples=N, deadline=None)
@given(HOSTILE)
def test_mpl_text_is_one_line_without_controls(text):
    out = escape.mpl_text(text)
    assert out == escape.flat(text) and "\n" not in out and not escape._ANY_CONTROL.search(out)


@pytest.mark.eval  # matplotlib comes with the [eval] extra
@settings(max_examples=20, deadline=None)
@given(HOSTILE)
def test_any_text_draws_literally_on_a_figure(text):
    """Figures are drawn with parse_math off: a malformed formula (``$x^{$``) is text, not an error."""
    from mvlsib.evaluation.analysis.figures import _pyplot

    plt = _pyplot()
    fig, ax = plt.subplots()
    try:
        ax.set_title(escape.mpl_text(text) + " $x^{$")
        fig.canvas.draw()
    finally:
        plt.close(fig)


SCHEMES = [
    ("https://example.org/a.jpg", True),
    ("http://example.org", True),
    ("HTTP://EXAMPLE.ORG/x", True),
    (" https://example.org/a b ", True),
    ("javascript:alert(1)", False),
    ("JAVASCRIPT:alert(1)", False),
    (" javascript:alert(1)", False),
    ("java\tscript:alert(1)", False),
    ("data:text/html,<script>", False),
    ("file:///etc/passwd", False),
    ("vbscript:msgbox", False),
    ("ftp://example.org/x", False),
    ("//example.org/x", False),
    ("example.org/x", False),
    ("https:example.org", False),
    ("https://", False),
    ("http://[::1", False),
    ("https://example.org/\nx", False),
    ("https://exa\x00mple.org", False),
    ("", False),
]


def test_web_url_scheme_table():
    for url, ok in SCHEMES:
        assert (escape.web_url(url) is not None) is ok, url


@settings(max_examples=N, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(HOSTILE)
def test_has_markup_flags_whatever_would_render_as_an_element(text):
    """Text that markdown-it would turn into an HTML element, an entity or a link is flagged (the
    converse need not hold: flagging `<b` without `>` is fine)."""
    html = MarkdownIt("commonmark").render(escape.flat(text))
    doc = parse_html(html)
    layout = {"p", "em", "strong", "code", "blockquote", "ul", "ol", "li", "hr", "br", "pre", "h1", "h2", "h3", "h4"}
    made = set(doc.tags) - layout - {"h5", "h6"}  # what is left: links, images, raw HTML elements
    if made:
        assert escape.has_markup(text), (text, html)
