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

import json
import os
import re
from collections.abc import Iterable, Mapping

# The words that name a credential, the one list for option names, environment variables and URL queries.
CREDENTIAL_WORDS = ("token", "key", "apikey", "secret", "password", "passwd", "credential", "credentials", "auth")
# Environment variables that hold one (``HF_TOKEN``, ``OPENAI_API_KEY``): any of the words inside the name.
SECRET_ENV_NAME = re.compile("|".join(CREDENTIAL_WORDS), re.IGNORECASE)
# Shorter values are not credentials (TOKENIZERS_PARALLELISM=false) and would mask ordinary words.
MIN_CHARS = 8

_VALUES: set[str] = set()
_PATTERN: list[re.Pattern[str] | None] = [None]


def _spellings(value: str) -> set[str]:
    # as given, trimmed, each part (a key pasted with a line break), and as JSON and repr() escape it
    parts = {value, value.strip(), *value.split(), repr(value)[1:-1]}
    parts |= {json.dumps(p, ensure_ascii=ascii)[1:-1] for p in list(parts) for ascii in (False, True)}
    return {p for p in parts if len(p) >= MIN_CHARS}


def remember(value: str | None) -> None:
    """Hide ``value`` from every text written or printed from now on."""
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
    return pattern.sub("***", text)


def forget_all() -> None:
    """Forget every remembered value (a test's clean slate)."""
    _VALUES.clear()
    _PATTERN[0] = None
