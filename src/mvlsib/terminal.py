"""What the commands print, and the one way values get into it.

A value in a command's output often comes from a file or a server someone else wrote: a run
folder's name, a ``custom_id`` of a batch result, a model id, a Hub's pull-request URL. Printed
raw, an ESC sequence in it moves the cursor, recolours or retitles the terminal, and a line break
or carriage return forges a line of its own (a ``complete`` that was never said). So commands
print only through ``echo`` and ``warn``, whose text is a fixed template: every value is a
separate argument and reaches the terminal through ``visible``, which shows each control,
line break, carriage return and bidirectional override as an escape instead of acting on it.
Multi-line text a formatter builds (tables) goes through ``block``: its own line breaks stay, any
other control is shown. ``tests/architecture/test_terminal.py`` keeps every other way of printing
out of the package.
"""

from __future__ import annotations

import re
import shlex

from . import credentials

# Unicode's bidirectional formatting characters (UAX #9, "Explicit Directional Embeddings",
# "Isolates" and "Marks"): they reorder what follows on the line, so a name could show as another.
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# C0 and C1 controls, DEL, bidi formatting, and the Unicode line and paragraph separators.
_INVISIBLE = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{_BIDI}\\u2028\\u2029]")
_INVISIBLE_BUT_NEWLINE = re.compile(f"[\\x00-\\x09\\x0b-\\x1f\\x7f-\\x9f{_BIDI}\\u2028\\u2029]")


def _shown(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(value: object) -> str:
    """``value`` as text that does nothing to a terminal: controls, line breaks and bidi marks escaped.

    Numbers and booleans pass as they are formatted; anything else is ``str()``-ed first. Unpaired
    surrogates (a name decoded with ``surrogateescape``) are shown escaped too, so writing never fails.
    """
    text = credentials.hide(value if isinstance(value, str) else str(value))
    text = _INVISIBLE.sub(_shown, text)
    if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        text = "".join(f"\\u{ord(c):04x}" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)
    return text


def block(text: str) -> str:
    """Multi-line text a formatter built (a table): its line breaks kept, every other control shown."""
    # hidden whole first: a credential wrapped across the lines is one value, not two short ones
    return "\n".join(visible(part) for part in credentials.hide(text).split("\n"))


def shell_word(value: object) -> str:
    """``value`` as one word of a bash script that also reads safely on a terminal.

    ``shlex.quote`` for printable text; bash's ANSI-C quoting (``$'...'``, which bash 4.2 and later
    read with ``\\xHH`` and ``\\uHHHH``) when the value holds a control, line break or bidi mark, so the
    script holds none of them raw and ``cat`` shows the same command the shell runs.
    """
    text = value if isinstance(value, str) else str(value)
    if not _INVISIBLE.search(text) and not any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        return shlex.quote(text)
    escaped = text.replace("\\", "\\\\").replace("'", "\\'")
    return "$'" + visible(escaped) + "'"


def shell_command(words: list[str]) -> str:
    """A command line of ``shell_word`` s."""
    return " ".join(shell_word(w) for w in words)


def _safe(value: object) -> object:
    # Numbers keep their type so the template's format specs ({:,}, {:.1%}) apply to them.
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return visible(value)


def line(template: str, *values: object) -> str:
    """``template.format(*values)`` with each value made ``visible`` (numbers formatted as numbers)."""
    return template.format(*(_safe(v) for v in values))


def echo(template: str, *values: object, err: bool = False, nl: bool = True) -> None:
    """Print one line (or a literal template) with its values made visible; stdout unless ``err``."""
    _write(line(template, *values), err=err, nl=nl)


def echo_block(text: str, *, err: bool = False, nl: bool = True) -> None:
    """Print multi-line text a formatter built (``block``)."""
    _write(block(text), err=err, nl=nl)


def warn(template: str, *values: object) -> None:
    """``warning: ...`` on stderr, values made visible."""
    _write("warning: " + line(template, *values), err=True, nl=True)


def note(template: str, *values: object) -> None:
    """A line for the log on stderr (progress notes, fallbacks), values made visible."""
    _write(line(template, *values), err=True, nl=True)


def _write(text: str, *, err: bool, nl: bool) -> None:
    import click  # here: the escaping above is stdlib alone (the sampler's leaves use it, on any Python)

    click.echo(credentials.hide(text), err=err, nl=nl)


def is_visible(text: str) -> bool:
    """Whether ``text`` holds nothing a terminal acts on besides line breaks (for tests and checks)."""
    return not _INVISIBLE_BUT_NEWLINE.search(text)
