"""Generators of hostile text and the parsers that check rendered output, shared by the output-safety tests."""

from __future__ import annotations

from html.parser import HTMLParser

from hypothesis import strategies as st
from markdown_it import MarkdownIt

# Hostile alphabet: every character that starts Markdown/HTML syntax or a formula, whitespace,
# controls, non-ASCII letters and look-alikes; plus fragments that are known attack shapes.
HOSTILE_CHARS = st.sampled_from(
    list("\\`*_[]<>|~&!#$()=+-@\"'{}:;/.%?^ \t\r\n\x00\x07\x1b\x7f\x85\u00a0\u2028\u200b\ufeffaZ9é中\uff1d")
)
FRAGMENT_LIST = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<!-- c -->",
    "&amp;",
    "&#60;",
    "[x](javascript:alert(1))",
    "![i](https://evil.example/i.png)",
    "<https://evil.example>",
    "`code`",
    "**b**",
    "~~s~~",
    "| a | b |",
    "$x^2$",
    '=HYPERLINK("http://evil")',
    "@SUM(A1)",
    "# h",
    "> q",
    "- item",
    "1. item",
    "https://example.org/a b",
    "\\",
]
FRAGMENTS = st.sampled_from(FRAGMENT_LIST)
HOSTILE = st.lists(st.one_of(HOSTILE_CHARS, FRAGMENTS), max_size=12).map("".join)
MD = MarkdownIt("commonmark").enable("table").enable("strikethrough")
TABLE_TAGS = {"table", "thead", "tbody", "tr", "th", "td"}


class _Doc(HTMLParser):
    """Every tag, every link target and the text of each table cell / list item / paragraph."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.hrefs: list[str] = []
        self.cells: list[str] = []
        self.text = ""
        self._open = None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "a":
            self.hrefs.append(dict(attrs).get("href") or "")
        if tag in ("td", "li", "p"):
            self._open = ""

    def handle_endtag(self, tag):
        if tag in ("td", "li", "p") and self._open is not None:
            self.cells.append(self._open)
            self._open = None

    def handle_data(self, data):
        self.text += data
        if self._open is not None:
            self._open += data


def parse_html(html: str) -> _Doc:
    doc = _Doc()
    doc.feed(html)
    doc.close()
    return doc


def table(cell: str) -> _Doc:
    return parse_html(MD.render(f"| h | x |\n|---|---|\n| {cell} | end |\n"))


URLS = st.one_of(
    HOSTILE,
    st.builds(
        lambda scheme, rest: scheme + rest,
        st.sampled_from(
            ["http://", "https://", "HTTPS://", "javascript:", "JavaScript:", "data:", "file://", "vbscript:", "//", ""]
        ),
        HOSTILE,
    ),
)


def card_context(images, *, source_location: str, source_revision: str):
    """A card context of ``images`` (one instance per image, the first language), with the given source:
    how the card tests put text into a whole card."""
    from mvlsib.release.card.render import CardContext
    from mvlsib.release.stats import compute_stats

    instances = [
        {
            "topic": im.topic,
            "sentence_label": 0,
            "image_label": 0,
            "ref_image_ids": [im.image_id],
            "image_option_ids": [im.image_id],
        }
        for im in images
    ]
    return CardContext(
        languages=["eng_Latn"],
        images=images,
        stats=compute_stats(instances, {im.image_id: im.topic for im in images}),
        seed=0,
        instances_sha256="ab" * 32,
        toolkit_version="1",
        num_sentences=1004,
        source_location=source_location,
        source_revision=source_revision,
    )
