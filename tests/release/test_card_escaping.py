"""Issue #11 defect 14: titles, authors, licences and URLs from a pool manifest are shown literally
in the card, never as Markdown or HTML. The card is rendered by a CommonMark + GFM-table parser
(markdown-it-py, as the Hub renders Markdown) and the resulting HTML is inspected."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from markdown_it import MarkdownIt
from support.hostile import card_context

from mvlsib.release.card.render import CardImage, attribution_markdown, render_card

HOSTILE_TITLE = "Lions | *bold* _it_ `code` <script>alert(1)</script> [x](https://evil.example) &amp; ~~s~~ \\ !"
HOSTILE_AUTHOR = "Ann <b>B</b> | C\nD ![img](https://evil.example/i.png) # not a heading"
HOSTILE_URL = 'https://example.org/a b/(c)|d<e>`f`?q=1&r="2"'


class _Cells(HTMLParser):
    """Table cells as text, every tag seen, and every link target."""

    def __init__(self):
        super().__init__()
        self.rows, self.tags, self.hrefs, self._cell = [], [], [], None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = ""
        elif tag == "a":
            self.hrefs.append(dict(attrs)["href"])

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.rows[-1].append(self._cell)
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def _render(markdown: str) -> _Cells:
    html = MarkdownIt("commonmark").enable("table").enable("strikethrough").render(markdown)
    parsed = _Cells()
    parsed.feed(html)
    return parsed


def _image(**kw) -> CardImage:
    base = dict(
        image_id="travel_0",
        topic="travel",
        license="CC-BY-4.0",
        author=HOSTILE_AUTHOR,
        source_url=HOSTILE_URL,
        title=HOSTILE_TITLE,
        width=640,
        height=480,
    )
    base.update(kw)
    return CardImage(**base)


def test_hostile_manifest_text_is_shown_literally():
    parsed = _render(attribution_markdown([_image()]))
    header, row = parsed.rows
    assert len(row) == len(header) == 7  # no `|` split a cell
    assert row[2] == HOSTILE_TITLE
    assert row[3] == " ".join(HOSTILE_AUTHOR.split())  # a newline would end the table row
    # only the table, its cells and the two links are HTML: nothing from the manifest became markup
    assert set(parsed.tags) <= {"table", "thead", "tbody", "tr", "th", "td", "a", "code"}
    assert parsed.tags.count("a") == 2 and parsed.tags.count("code") == 1  # the image id only


def test_source_url_stays_one_working_link():
    parsed = _render(attribution_markdown([_image()]))
    assert parsed.hrefs[1] == "https://example.org/a%20b/%28c%29%7Cd%3Ce%3E%60f%60?q=1&r=%222%22"
    from urllib.parse import unquote

    assert unquote(parsed.hrefs[1]) == HOSTILE_URL


@pytest.mark.parametrize("url", ["javascript:alert(1)", "data:text/html,<script>x</script>", "//evil.example/x"])
def test_non_http_urls_are_not_linked(url):
    parsed = _render(attribution_markdown([_image(source_url=url, title="t", author="a")]))
    assert all(h.startswith("https://") for h in parsed.hrefs)  # only the licence link
    assert parsed.rows[1][5] == url
    assert "script" not in parsed.tags


def test_hostile_text_in_a_whole_card():
    images = [_image(image_id=f"{t}_0", topic=t) for t in ("travel", "sports")]
    ctx = card_context(images, source_location="/data/<b>sib</b>|x", source_revision="none")
    parsed = _render(render_card(ctx).split("\n---\n", 1)[1])
    assert "script" not in parsed.tags and "b" not in parsed.tags and "img" not in parsed.tags
    assert ["SIB-200 source", "/data/<b>sib</b>|x"] in parsed.rows
