"""JSON read with bounds: size, nesting depth, number length, no NaN/Infinity.

Every JSON text the toolkit did not just write itself (a server's answer, a line of a run folder
someone may have edited, a Hub API reply) is parsed here, so that a hostile or broken peer gives
one ``JsonLimitError`` naming what was exceeded instead of a ``RecursionError``, a ``ValueError``
from int() on 6,000 digits, or a record holding ``NaN``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from . import credentials

# What JSON may carry raw that a terminal, an editor or a browser acts on when the file is shown:
# DEL, C1 controls (U+009B is a CSI), bidirectional formatting, line and paragraph separators
# (terminal.py's set; json itself escapes C0). ``dumps`` writes them as \\uXXXX: the same string to any reader.
_ACTIVE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")

MAX_DEPTH = 64
MAX_NUMBER_CHARS = 40  # a float64 needs at most ~25 characters; ids and counts far fewer
MAX_BYTES = 64 * 1024 * 1024

# Strings first, so brackets inside them are not counted; then the brackets themselves.
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


class JsonLimitError(ValueError):
    """A JSON text that is malformed or exceeds a bound; the message says which."""


def nesting_depth(text: str) -> int:
    """The deepest bracket nesting of a JSON text, counted without parsing (strings skipped)."""
    depth = deepest = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
        elif token in "]}":
            depth -= 1
    return deepest


def _number(kind: str):
    def parse(literal: str):
        if len(literal) > MAX_NUMBER_CHARS:
            raise JsonLimitError(f"a number of {len(literal):,} characters (at most {MAX_NUMBER_CHARS})")
        return int(literal) if kind == "int" else float(literal)

    return parse


def _constant(name: str):
    raise JsonLimitError(f"{name} is not JSON")


def loads(text: str | bytes, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """Parse ``text`` as strict JSON within the bounds, or raise ``JsonLimitError`` saying why."""
    if isinstance(text, bytes):
        if len(text) > max_bytes:
            raise JsonLimitError(f"{len(text):,} bytes of JSON (at most {max_bytes:,})")
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonLimitError(f"not UTF-8 at byte {exc.start}") from None
    elif len(text) > max_bytes:
        raise JsonLimitError(f"{len(text):,} characters of JSON (at most {max_bytes:,})")
    depth = nesting_depth(text)
    if depth > max_depth:
        raise JsonLimitError(f"JSON nested {depth:,} deep (at most {max_depth})")
    try:
        return json.loads(text, parse_int=_number("int"), parse_float=_number("float"), parse_constant=_constant)
    except JsonLimitError:
        raise
    except (json.JSONDecodeError, RecursionError) as exc:
        raise JsonLimitError(f"not valid JSON: {exc}") from None


def has_lone_surrogate(text: str) -> bool:
    """Whether ``text`` holds a surrogate code point that no UTF-8 file can store."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def storable(text: str) -> str:
    """``text`` with each lone surrogate written as its ``\\udXXX`` escape: storable as UTF-8 and recoverable
    (``recover`` gives the original back)."""
    if not has_lone_surrogate(text):
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def recover(text: str) -> str:
    """The inverse of ``storable`` for the escapes it wrote."""
    return re.sub(r"\\u(d[89a-f][0-9a-f]{2})", lambda m: chr(int(m.group(1), 16)), text)


def dumps(obj: Any, **kwargs: Any) -> str:
    """``json.dumps`` for every JSON text the toolkit writes or prints (``ensure_ascii=False`` keeps
    letters readable): characters that act when shown are written as ``\\uXXXX`` escapes, and no
    credential this process holds is written (``credentials.hide``; a server may echo a key)."""
    text = credentials.hide(json.dumps(obj, **kwargs))
    if kwargs.get("ensure_ascii", True):
        return text
    return _ACTIVE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def yaml_dumps(obj: Any, **kwargs: Any) -> str:
    """``yaml.safe_dump`` for every YAML text the toolkit writes: ASCII only (every other character
    escaped, so none acts when shown) and no credential this process holds."""
    import yaml  # here: only the commands that write YAML need PyYAML

    # hidden before dumping too: YAML spells a non-ASCII credential with its own escapes
    return credentials.hide(yaml.safe_dump(_hidden(obj), **{**kwargs, "allow_unicode": False}))


def _hidden(obj: Any) -> Any:
    if isinstance(obj, str):
        return credentials.hide(obj)
    if isinstance(obj, dict):
        return {_hidden(k): _hidden(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_hidden(v) for v in obj]
    return obj
