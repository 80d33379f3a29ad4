"""Text from data shown literally in Markdown, HTML, CSV and matplotlib: the one place that escapes it.

Every field that reaches a rendered document (the dataset card, ``images credits``, the gallery,
the evaluator's report and leaderboard) comes from a file someone else wrote: a pool manifest,
a run folder's name, a model id. Each output format has one function here, and every writer
calls it, so a field cannot become markup, a link, a table column or a spreadsheet formula.

Markdown follows CommonMark 0.31 (https://spec.commonmark.org/0.31.2/, "Backslash escapes": any
ASCII punctuation may be escaped) with the GFM table extension (https://github.github.com/gfm/,
"Tables": ``\\|`` is a literal pipe inside a cell, code spans included). CSV neutralisation
follows OWASP's "CSV Injection" page (cells starting with ``= + - @``, tab or carriage return).
"""

from __future__ import annotations

import html
import re
import string
import urllib.parse
from collections.abc import Iterable, Sequence

from . import credentials, httpio, terminal

# ASCII punctuation that can start Markdown or HTML syntax inline: backslash, emphasis, code,
# links and images, raw HTML and autolinks, entities, strikethrough, the table cell separator,
# headings, and $ (the Hub renders $...$ as maths).
_MARKDOWN_SPECIALS = re.compile(r"([\\`*_\[\]<>|~&!#$])")
# Percent-encoded in a link destination: what could end the `(...)` or the table cell, or open HTML.
_URL_SAFE = "".join(c for c in string.punctuation if c not in '()<>|`\\"{}^ ') + "%"
# Characters a spreadsheet reads as the start of a formula (OWASP), plus their full-width forms
# that some spreadsheet locales accept, and a line feed (LibreOffice strips leading whitespace).
_FORMULA_STARTS = frozenset("=+-@\t\r\n\uff1d\uff0b\uff0d\uff20")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
# C0/C1 controls other than tab, line feed and carriage return (which flatten to spaces), and the
# bidirectional overrides and isolates (which would reorder the rest of a line as it is shown).
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_ANY_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
WEB_SCHEMES = ("http", "https")


def _text(value: object) -> str:
    # every text shown starts here: no credential this process holds is shown (``credentials``)
    return credentials.hide(str(value))


def flat(text: object) -> str:
    """``text`` on one line: runs of whitespace (line breaks included) become one space; control
    characters are dropped. A line break would end a table row or a list item."""
    return " ".join(_CONTROLS.sub("", _text(text)).split())


class Markdown(str):
    """Markdown a function of this module built from escaped parts (a code span, a link, bold text):
    ``md_row`` takes it as it is. Nothing else makes one, so any other cell is escaped."""

    __slots__ = ()


def md_row(cells: Iterable[object]) -> str:
    """One GFM table row: each cell literal text (``md_text``: no tag, link or ``|`` of a value survives)
    unless it is ``Markdown`` built here. The one way a table row of a report is made."""
    return "| " + " | ".join(c if isinstance(c, Markdown) else md_text(c) for c in cells) + " |"


def md_table_head(cells: Sequence[object]) -> list[str]:
    """A GFM table's header row (``md_row``) and its delimiter row."""
    return [md_row(cells), "|" + "---|" * len(cells)]


def md_strong(text: object) -> Markdown:
    """``text`` literal and bold."""
    return Markdown(f"**{md_text(text)}**")


def _md_escaped(match: re.Match[str]) -> str:
    # angle brackets as entities (CommonMark decodes them in text): the source then holds no ``<tag``
    # either, for a reader of the raw file or a tool that greps it
    char = match.group()
    return {"<": "&lt;", ">": "&gt;"}.get(char, "\\" + char)


def md_text(text: object) -> str:
    """Text shown literally in Markdown, inline (a paragraph, a list item or a table cell)."""
    return _MARKDOWN_SPECIALS.sub(_md_escaped, flat(text))


def md_code(text: object, *, in_table: bool = True) -> str:
    """Text shown as an inline code span (``in_table``: inside a GFM table cell).

    The fence is one backtick longer than the longest run of backticks inside; a space pads
    text that begins or ends with a backtick (CommonMark strips one such space). In a table,
    ``|`` is written ``\\|``, which GFM turns back into ``|`` before the code span is read.
    """
    body = flat(text)
    if not body:
        return Markdown("")
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    fence = "`" * (longest + 1)
    if body.startswith("`") or body.endswith("`"):
        body = f" {body} "
    return Markdown(fence + (body.replace("|", "\\|") if in_table else body) + fence)


def md_code_block(text: object, info: str = "text") -> str:
    """Multi-line text shown literally in a fenced code block: its line breaks kept, control characters
    dropped, and a fence longer than any run of backticks inside (a text cannot close the block)."""
    body = "\n".join(_CONTROLS.sub("", line) for line in _text(text).replace("\r", "").split("\n"))
    fence = "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", body)), default=0))
    return f"{fence}{info}\n{body}\n{fence}"


def web_url(url: object) -> str | None:
    """``url`` when it is an absolute http(s) URL with a host, else None (``javascript:``,
    ``data:``, ``file:``, relative paths and anything unparsable are never linked)."""
    text = str(url).strip()
    if not text or _ANY_CONTROL.search(text):
        return None
    try:
        parts = urllib.parse.urlsplit(text)
    except ValueError:  # an invalid IPv6 literal, for one
        return None
    if parts.scheme.lower() not in WEB_SCHEMES or not parts.netloc:
        return None
    if httpio.holds_credential(text):  # a card, a gallery or the credits would publish it
        return None
    return text


def url_text(url: object) -> str:
    """A URL as text to show (not link): with ``user:password@`` and secret query values hidden."""
    text = str(url)
    return httpio.public_url(text) if httpio.holds_credential(text) else text


def md_link(url: object, label: str) -> str:
    """A Markdown link with the already-escaped ``label`` to an http(s) ``url``, percent-encoded so it
    cannot leave the link or the table cell; any other URL is shown as literal text, not linked."""
    target = web_url(url)
    if target is None:
        return md_text(url_text(url))
    return Markdown(f"[{label}]({urllib.parse.quote(target, safe=_URL_SAFE)})")


def md_autolink(url: object) -> str:
    """``<url>`` for an http(s) ``url`` (percent-encoded: an autolink ends at a space, ``<`` or ``>``);
    any other URL shown as literal text."""
    target = web_url(url)
    if target is None:
        return md_text(url_text(url))
    return Markdown(f"<{urllib.parse.quote(target, safe=_URL_SAFE)}>")


def html_text(text: object) -> str:
    """Text shown literally in HTML element content or a quoted attribute value."""
    return html.escape(_CONTROLS.sub("", _text(text)), quote=True)


def html_href(url: object) -> str | None:
    """An ``href`` attribute value for an http(s) ``url`` (escaped), or None when it must not be a link."""
    target = web_url(url)
    return None if target is None else html.escape(target, quote=True)


def cell_text(text: str) -> str:
    """``text`` with every control and bidi character shown as an escape, tabs and line breaks kept
    (a CSV cell or a TSV field holds them quoted; a terminal acts on neither)."""
    return "\t".join(terminal.block(part) for part in _text(text).split("\t"))


def csv_cell(value: object) -> object:
    """A CSV cell a spreadsheet shows as text: a string starting like a formula gets a leading
    apostrophe (the spreadsheets' own "this is text" mark). Numbers, and strings that are plain
    numbers such as ``-0.05``, are kept as they are. Control and bidi characters are shown as escapes
    (``terminal.block``: a terminal showing the file acts on none). A carriage return becomes a line feed:
    ``csv.writer`` with ``"\n"`` line ends leaves a lone CR unquoted, and the row would read back split."""
    if not isinstance(value, str) or not value or _PLAIN_NUMBER.fullmatch(value):
        return value
    value = cell_text(value.replace("\r\n", "\n").replace("\r", "\n"))
    if value[0] in _FORMULA_STARTS or value.lstrip()[:1] in _FORMULA_STARTS:
        return "'" + value
    return value


def mpl_text(text: object) -> str:
    """Text for a figure: one line, controls dropped. Figures are drawn with ``text.parse_math``
    off (``analysis/figures.py``), so a ``$`` is shown as it is, never the start of a formula."""
    return flat(text)


def has_markup(text: str) -> bool:
    """Whether ``text`` holds something a Markdown or HTML renderer would treat as markup: an HTML tag,
    comment or entity, a Markdown link or image, or an autolink."""
    return bool(_MARKUP.search(text))


_MARKUP = re.compile(
    r"<\s*/?\s*[A-Za-z!?]"  # an HTML tag, comment, doctype or processing instruction
    r"|&(?:#\d+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);"  # an entity
    r"|!?\[[^\]]*\]\s*[(\[]"  # a Markdown link, image or reference link
    r"|\b(?:javascript|vbscript|data):",  # a script or inline-data URL written into text
    re.IGNORECASE,
)
