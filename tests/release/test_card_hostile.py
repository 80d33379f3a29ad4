"""The dataset card with generated hostile text in every field that comes from a pool manifest or the
build (image id, topic, title, author, licence, source URL, SIB-200 location and revision): rendered
by markdown-it-py (CommonMark + GFM tables, as the Hub renders cards), each table cell holds the text
literally, no element is made from data, and only http(s) URLs are linked."""

from __future__ import annotations

import urllib.parse

from hypothesis import given, settings
from hypothesis import strategies as st
from support.hostile import HOSTILE, MD, URLS, card_context, parse_html

from mvlsib.escape import flat, url_text, web_url
from mvlsib.release.card.render import CardImage, attribution_markdown, render_card

IMAGE = st.builds(
    CardImage,
    image_id=HOSTILE,
    topic=HOSTILE,
    license=st.one_of(st.sampled_from(["CC-BY-4.0", "CC0-1.0", "CC BY-SA 4.0", ""]), HOSTILE),
    author=HOSTILE,
    source_url=URLS,
    title=HOSTILE,
    width=st.sampled_from([0, 640]),
    height=st.just(480),
)
# Elements the card's own template and sections make (details/summary/pre/code blocks, headings, ...).
CARD_TAGS = {"table", "thead", "tbody", "tr", "th", "td", "a", "code", "p", "h1", "h2", "h3", "h4"}
CARD_TAGS |= {"ul", "ol", "li", "em", "strong", "pre", "details", "summary", "blockquote", "hr", "br"}


@settings(max_examples=200, deadline=None)
@given(images=st.lists(IMAGE, min_size=1, max_size=4))
def test_attribution_table_cells_are_literal(images):
    doc = parse_html(MD.render(attribution_markdown(images)))
    assert set(doc.tags) <= {"table", "thead", "tbody", "tr", "th", "td", "a", "code"}
    cells = doc.cells
    assert len(cells) == 7 * len(images)  # no `|` or line break split a row
    for i, im in enumerate(images):
        row = cells[7 * i : 7 * i + 7]
        assert row[:4] == [flat(im.image_id), flat(im.topic), flat(im.title), flat(im.author)]
        if im.source_url and web_url(im.source_url) is None:
            assert row[5] == flat(url_text(im.source_url))  # shown without a credential it may hold
    for href in doc.hrefs:
        assert urllib.parse.urlsplit(href).scheme in ("http", "https"), href


@settings(max_examples=40, deadline=None)
@given(
    images=st.lists(IMAGE, min_size=1, max_size=3, unique_by=lambda im: im.image_id),
    location=HOSTILE,
    revision=HOSTILE,
)
def test_whole_card_makes_no_element_from_data(images, location, revision):
    ctx = card_context(images, source_location=location, source_revision=revision)
    card = render_card(ctx)
    body = card.split("\n---\n", 1)[1]
    doc = parse_html(MD.render(body))
    assert set(doc.tags) <= CARD_TAGS, set(doc.tags) - CARD_TAGS
    if flat(location):
        assert flat(location) in doc.cells
    assert flat(revision) in doc.cells or not flat(revision)
    for href in doc.hrefs:
        assert urllib.parse.urlsplit(href).scheme in ("http", "https"), href
