"""The credential values this process holds, hidden from every text it writes or prints.

A peer can hand a credential back: a server that echoes the ``Authorization`` header into its answer,
an error page quoting the request. Masking by shape (``httpio.redact``) misses a key of any other
shape, so the values themselves are remembered where they enter (every key or token passes
``httpio.check_credential``; the error boundary adds the environment's secret-named variables and
the values of credential options) and the writers every output goes through (``jsonio.dumps``, the
YAML writer, ``terminal``, and so the CSV and Markdown writers) replace each with ``***``.

Standard library alone: the bundled evaluator ships it beside the other leaves.
"""

from __future__ import annotations

import base64
import bisect
import json
import os
import re
import urllib.parse
from collections.abc import Iterable, Mapping

# The words that name a credential, the one list for option names, environment variables and URL queries.
CREDENTIAL_WORDS = ("token", "key", "apikey", "secret", "password", "passwd", "credential", "credentials", "auth")
# Environment variables that hold one (``HF_TOKEN``, ``OPENAI_API_KEY``): any of the words inside the name.
SECRET_ENV_NAME = re.compile("|".join(CREDENTIAL_WORDS), re.IGNORECASE)
# Shorter values are not credentials (TOKENIZERS_PARALLELISM=false) and would mask ordinary words.
MIN_CHARS = 8

_VALUES: set[str] = set()
_PATTERN: list[re.Pattern[str] | None] = [None]
# What may stand between two characters of an echoed value: a line wrap, raw or as a JSON writer
# escapes it (a server that folds a long key, MIME base64 broken every 76 characters).
# Three readings of backslashes before ``n``: one escape (a value's own backslash may precede it), an
# escape escaped again by a JSON writer (after a value's own, escaped too), or any run of them.
_BREAKS = tuple(re.compile(rf"(?:\s|{b}[nrt])+") for b in (r"\\", r"\\\\", r"\\+"))


def _base64_inner(raw: bytes) -> set[str]:
    """The characters of ``raw``'s base64 that are the same whatever bytes surround it.

    An echo may encode the key inside a longer text (``user:key``, a JSON body), so the key's bytes
    start at any of three offsets of a 3-byte group; the characters that mix its first or last bits
    with a neighbour's are left out, the rest are the key's own whatever the neighbours are."""
    found = set()
    for offset in range(3):
        encoded = base64.b64encode(bytes(offset) + raw).decode("ascii").rstrip("=")
        head = (0, 2, 3)[offset]  # characters that hold bits of the prefix
        tail = (offset + len(raw)) % 3  # a group cut short ends in one mixed character
        inner = encoded[head : len(encoded) - (1 if tail else 0)]
        found |= {inner, inner.translate(_URLSAFE)}
    return found


_URLSAFE = str.maketrans("+/", "-_")


def _encodings(value: str) -> set[str]:
    # the spellings a peer may echo a value in: percent-encoded (as quote, quote_plus, every byte, and
    # with lower-case hex), base64 (standard and URL-safe, at every alignment) and hex
    raw = value.encode("utf-8")
    quoted = {urllib.parse.quote(value, safe=""), urllib.parse.quote(value), urllib.parse.quote_plus(value)}
    quoted |= {"".join(f"%{b:02X}" for b in raw)}  # every byte, unreserved ones too
    quoted |= {re.sub("%[0-9A-F]{2}", lambda m: m.group(0).lower(), q) for q in quoted}
    return {value, *quoted, *_base64_inner(raw), raw.hex(), raw.hex().upper()}


def _spellings(value: str) -> set[str]:
    # as given, trimmed, each part (a key pasted with a line break), each in every encoding, and
    # each of those as JSON (with and without \u escapes, with ``\/``) and repr() escape it
    parts = {value, value.strip(), *value.split()}
    parts = {e for p in parts for e in _encodings(p)}
    for _ in range(2):  # an echo a writer escapes again: a JSON string inside a JSON answer
        parts |= {repr(p)[1:-1] for p in list(parts)}
        parts |= {json.dumps(p, ensure_ascii=ascii)[1:-1] for p in list(parts) for ascii in (False, True)}
        parts |= {p.replace("/", "\\/") for p in list(parts)}
    return {p for p in parts if len(p) >= MIN_CHARS}


def remember(value: str | None) -> None:
    """Hide ``value`` from every text written or printed from now on, in each of its spellings."""
    if not value:
        return
    new = _spellings(value) - _VALUES
    if new:
        _VALUES.update(new)
        # longest first: a value that holds another is masked whole
        _PATTERN[0] = re.compile("|".join(map(re.escape, values())))


def remember_all(found: Iterable[str | None]) -> None:
    for value in found:
        remember(value)


def remember_environment(environ: Mapping[str, str] | None = None) -> None:
    """Remember the value of every variable whose name says it holds a credential."""
    for name, value in (os.environ if environ is None else environ).items():
        if SECRET_ENV_NAME.search(name):
            remember(value)


def values() -> list[str]:
    """Every remembered spelling, longest first."""
    return sorted(_VALUES, key=lambda v: (-len(v), v))


def hide(text: str) -> str:
    """``text`` with every remembered credential replaced by ``***``."""
    pattern = _PATTERN[0]
    if pattern is None or not text:
        return text
    text = pattern.sub("***", text)
    for breaks in _BREAKS if "\\" in text else _BREAKS[:1]:  # without a backslash the readings agree
        if breaks.search(text):
            text = _hide_wrapped(pattern, breaks, text)
    return text


def _hide_wrapped(pattern: re.Pattern[str], breaks: re.Pattern[str], text: str) -> str:
    """``text`` with each value that is wrapped across lines (``breaks`` inside it) masked whole.

    Searched in the text with every break taken out, so the pattern stays one literal per spelling (a
    pattern allowing a break between any two characters takes seconds to compile for a long key); each
    match is mapped back to the stretch of ``text`` it covers, breaks included."""
    kept: list[str] = []
    starts: list[int] = []  # where each kept piece starts in the joined text
    origins: list[int] = []  # and in ``text``
    joined_at = last = 0
    for brk in [*breaks.finditer(text), None]:
        end = len(text) if brk is None else brk.start()
        starts.append(joined_at)
        origins.append(last)
        kept.append(text[last:end])
        joined_at += end - last
        last = 0 if brk is None else brk.end()

    def origin(at: int) -> int:
        piece = bisect.bisect_right(starts, at) - 1
        return origins[piece] + at - starts[piece]

    out, done = [], 0
    for match in pattern.finditer("".join(kept)):
        begin, end = origin(match.start()), origin(match.end() - 1) + 1
        out += [text[done:begin], "***"]
        done = end
    return "".join(out) + text[done:] if out else text


def forget_all() -> None:
    """Forget every remembered value (a test's clean slate)."""
    _VALUES.clear()
    _PATTERN[0] = None
