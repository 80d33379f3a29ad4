"""The click parameter types of every numeric and list-valued option of both CLIs, defined once.

An option given as ``type=int`` or ``type=float`` takes any value Python can parse: ``nan``,
``inf``, ``1e-320`` (a subnormal whose reciprocal overflows), a billion GPUs. Here every number has
both bounds and is finite, every comma list is split, stripped and de-duplicated in one place, and
every repeated option or argument refuses a value given twice, every free-text value (a name, a
revision, a device, a path given as text) is one bounded line (``Text``); a bad value is click's usage error
(exit 2, one line). ``tests/architecture/test_bounded_options.py`` walks both command trees and
fails on any option that goes around these types.

A leaf (it imports click and ``readers`` only): the release's evaluator ships it (``release/bundle.py``).
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from . import readers
from .errors import MvlsibError

# Counts and sizes beyond these are typing mistakes, not plans, and would exhaust memory first.
MAX_COUNT = 1_000_000_000
MAX_SECONDS = 7 * 24 * 3600.0
# The bound of every --seed, and of the seed the sample report records (which publish takes when no
# --seed is given); that report's schema says the same (tests/generated/test_recorded_seed.py holds them
# equal). Not read from the schema here: the loader's prompt renderer imports this module from a
# release's *.py files alone.
MAX_SEED = 2**63 - 1
MAX_TOKENS = 1 << 20  # new tokens per answer: far beyond any model's context
MAX_K = 5  # references per prompt; the task table's k values are checked where a task is known
MAX_SIDE = 1 << 16
MAX_PIXELS = 1 << 34
MAX_BYTES = 1 << 40
MAX_GPUS = 100_000  # shards of one plan: a SLURM array far larger than any cluster's limit
# A value longer than this is shown clipped in a refusal; click's own messages would repeat all of it.
SHOWN_CHARS = 60
MAX_TEXT_CHARS = 4096  # a free-text value: the longest path Linux takes
# What no option value holds: controls (a line break too), the bidi marks that reorder what is shown.
_NOT_IN_TEXT = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def clipped(value: object, limit: int = SHOWN_CHARS) -> str:
    """``value`` as a refusal shows it: its repr, and only the start of a long one (a 5,000-digit number
    is said once, in a line)."""
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(str(value)):,} characters)"


class Int(click.IntRange):
    """An integer within ``min..max`` (both bounds required, so no option is unbounded)."""

    def __init__(self, min: int, max: int) -> None:
        super().__init__(min=min, max=max)

    def convert(self, value: Any, param, ctx) -> Any:
        if isinstance(value, str) and len(value.strip()) > SHOWN_CHARS:
            self.fail(f"{clipped(value)} is not an integer in {self.min}..{self.max}.", param, ctx)
        return super().convert(value, param, ctx)


class Text(click.ParamType):
    """A free-text value (a name, a revision, a device, a path or id given as text), kept as given: not
    blank, one line with no control or bidi mark (it is shown in messages and written into files), at
    most ``MAX_TEXT_CHARS`` characters."""

    name = "text"

    def convert(self, value: Any, param, ctx) -> Any:
        if not isinstance(value, str):
            return value
        if not value.strip():
            self.fail(f"{value!r} is blank; give a value, or leave the option out", param, ctx)
        if len(value) > MAX_TEXT_CHARS:
            self.fail(f"{clipped(value)} is longer than {MAX_TEXT_CHARS:,} characters", param, ctx)
        if (bad := _NOT_IN_TEXT.search(value)) is not None:
            self.fail(
                f"{clipped(value)} holds U+{ord(bad.group()):04X} at position {bad.start()}, a control or "
                "bidi mark that would act where the value is shown; give it without",
                param,
                ctx,
            )
        return value


TEXT = Text()


class Box(click.ParamType):
    """``WIDTHxHEIGHT`` (``640x480``), each side in ``1..max_side``: the pair of ints, or click's usage
    error naming the option."""

    name = "WIDTHxHEIGHT"

    def __init__(self, max_side: int) -> None:
        self.max_side = max_side

    def convert(self, value: Any, param, ctx) -> Any:
        if isinstance(value, tuple):
            return value
        parts = str(value).strip().lower().split("x")
        if len(parts) != 2 or not all(p.isascii() and p.isdigit() for p in parts):
            self.fail(f"{clipped(value)}: write WIDTHxHEIGHT, e.g. 640x480", param, ctx)
        too_long = any(len(p.lstrip("0")) > len(str(self.max_side)) for p in parts)  # before int(): 5,000 digits
        width, height = (0, 0) if too_long else (int(p) for p in parts)
        if too_long or not (1 <= width <= self.max_side and 1 <= height <= self.max_side):
            self.fail(f"{clipped(value)}: each side must be in 1..{self.max_side}", param, ctx)
        return width, height


class Finite(click.FloatRange):
    """A finite number within ``min..max``: no NaN, no infinity, no subnormal (whose reciprocal overflows)."""

    name = "number"

    def __init__(self, min: float, max: float, *, min_open: bool = False, max_open: bool = False) -> None:
        super().__init__(min=min, max=max, min_open=min_open, max_open=max_open)

    def convert(self, value: Any, param, ctx) -> Any:
        if isinstance(value, str) and len(value.strip()) > SHOWN_CHARS:
            self.fail(f"{clipped(value)} is not a number in {self.min}..{self.max}.", param, ctx)
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        if number != 0 and abs(number) < sys.float_info.min:
            self.fail(f"{value!r} is too close to 0 to compute with.", param, ctx)
        return super().convert(number, param, ctx)


# Every number the toolkit reads from the environment, with its bounds: read only through
# ``env_number`` (``tests/architecture/test_environment_numbers.py`` fails on any other read). A value
# Python parses but nothing can use (``1e18`` seconds overflows a deadline, ``nan`` never compares) is
# refused as an option's would be, in one line naming the variable.
ENV_NUMBERS: dict[str, tuple[click.ParamType, str]] = {
    "MVLSIB_HUB_TIMEOUT": (Finite(0.1, MAX_SECONDS), "a number of seconds for one Hub request"),
    "OMP_NUM_THREADS": (Int(1, 1 << 16), "a number of CPU threads"),
    "LOCAL_RANK": (Int(0, MAX_GPUS), "this process's GPU rank"),
    "RANK": (Int(0, MAX_COUNT), "this process's rank"),
    "WORLD_SIZE": (Int(1, MAX_COUNT), "the number of processes"),
    "SLURM_ARRAY_TASK_ID": (Int(0, MAX_COUNT), "the SLURM array task"),
    "SLURM_ARRAY_TASK_COUNT": (Int(1, MAX_COUNT), "the SLURM array's task count"),
    "SLURM_ARRAY_TASK_MIN": (Int(0, MAX_COUNT), "the SLURM array's first task"),
    "SLURM_ARRAY_TASK_STEP": (Int(1, MAX_COUNT), "the SLURM array's step"),
}


def env_number(name: str, environ: Any = None) -> Any:
    """The number the environment variable ``name`` (one of ``ENV_NUMBERS``) holds, within its bounds;
    None when unset or empty. Anything else is ``MvlsibError``: one line naming the variable."""
    kind, meaning = ENV_NUMBERS[name]
    raw = (os.environ if environ is None else environ).get(name)
    if raw is None or not raw.strip():
        return None
    try:
        return kind.convert(raw, None, None)
    except click.BadParameter:
        assert isinstance(kind, click.IntRange | click.FloatRange)
        what = "an integer" if isinstance(kind, click.IntRange) else "a number"
        raise MvlsibError(
            f"the environment variable {name}={clipped(raw)} is not {what} in {kind.min}..{kind.max} "
            f"({meaning}); set it to one, or unset it"
        ) from None


class CommaList(click.ParamType):
    """Comma-separated values: stripped, empty items dropped, each converted by ``item`` and kept once,
    in the order first given (``eng_Latn,eng_Latn`` is ``eng_Latn``). A value among ``keywords``
    (``all``) is passed on as that string. The result is a tuple; a list that names nothing (``''``,
    ``' , '``) is refused: the option would select nothing, and leaving it out gives its default."""

    name = "list"

    def __init__(self, item: click.ParamType | None = None, *, keywords: tuple[str, ...] = ()) -> None:
        self.item = item
        self.keywords = keywords

    def convert(self, value: Any, param, ctx) -> Any:
        if isinstance(value, tuple) or value is None:
            return value
        if isinstance(value, list):
            value = ",".join(map(str, value))
        text = str(value).strip()
        if text in self.keywords:
            return text
        out: list[Any] = []
        for part in text.split(","):
            part = part.strip()
            if not part:
                continue
            try:
                converted = self.item.convert(part, param, ctx) if self.item is not None else part
            except click.BadParameter as exc:
                if isinstance(self.item, click.IntRange) and not part.lstrip("+-").isdigit():
                    self.fail(f"expected comma-separated integers such as 1,3,5, got {clipped(text)}", param, ctx)
                said = exc.message if len(part) <= SHOWN_CHARS else "not accepted"
                self.fail(f"{clipped(part)} in {clipped(text)}: {said}", param, ctx)
            if converted not in out:
                out.append(converted)
        if not out:
            self.fail(f"{clipped(text)} names nothing; give at least one value, or leave the option out", param, ctx)
        return tuple(out)


def distinct(*, drop: bool = False, then: Callable[..., Any] | None = None) -> Callable[..., Any]:
    """A callback for a repeated option or a variadic argument: a value given twice is refused (two runs
    that are one would be counted twice, names paired with runs would shift), or with ``drop`` kept
    once (a model or a license named twice). ``then`` is the option's own callback."""

    def callback(ctx, param, value):
        if value is not None and not isinstance(value, str):
            seen: dict[Any, Any] = {}
            # a path is one file or folder whatever the spelling: ./run, run/ and a symlink to it are one
            same = _real if isinstance(getattr(param, "type", None), click.Path) else (lambda item: item)
            for item in value:
                if (key := same(item)) in seen:
                    if drop:
                        continue
                    also = "" if str(seen[key]) == str(item) else f" (as {seen[key]}: the same file or folder)"
                    raise click.BadParameter(
                        f"{item} is given more than once{also}; give each once.", ctx=ctx, param=param
                    )
                seen[key] = item
            value = tuple(seen.values())
        return then(ctx, param, value) if then is not None else value

    callback.distinct = True  # type: ignore[attr-defined]  # what the architecture test looks for
    return callback


def _real(item: Any) -> Any:
    try:
        return os.path.realpath(item)
    except (OSError, ValueError):  # a path the system cannot resolve is compared as given
        return item


def paired(of: str) -> Callable[..., Any]:
    """A callback for a repeated option whose values pair in order with the items of ``of`` (a display
    name per run): a repeat is a value of its own, not a duplicate, so nothing is dropped or refused."""

    def callback(_ctx, _param, value):
        return value

    callback.distinct = f"paired with {of}"  # type: ignore[attr-defined]  # what the architecture test looks for
    return callback


class OutputFile(click.Path):
    """A file the command writes (``--json FILE``, ``--script FILE``, ``--out FILE``): a file of that
    name the command did not write (its folder's ledger does not record it with that content) is
    refused as the option is parsed, before any work; the write goes through ``atomic.output_file``,
    which checks again. ``-`` (stdout) where ``allow_dash``."""

    def __init__(self, *, allow_dash: bool = False) -> None:
        super().__init__(dir_okay=False, allow_dash=allow_dash, path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip():
            self.fail(f"{value!r} is blank; give a file name", param, ctx)
        path = super().convert(value, param, ctx)
        if str(path) != "-":
            from .atomic import refuse_theirs

            where = Path(os.fsdecode(path))
            if where.is_symlink() or (where.exists() and not where.is_file()):
                self.fail(
                    f"{clipped(str(where))} is not a regular file (a link, device or pipe); give a file path",
                    param,
                    ctx,
                )
            try:
                refuse_theirs(
                    where.parent,
                    [where.name],
                    option=param.opts[0] if param else "--out",
                    writer=ctx.command_path if ctx is not None else None,
                )
            except MvlsibError as exc:
                self.fail(str(exc), param, ctx)
        return path


class JsonObject(click.ParamType):
    """A JSON object as text, checked through the reader (``json_option``: depth, number length, NaN,
    its schema) when the command line is read; the text itself is passed on."""

    name = "json"

    def convert(self, value: Any, param, ctx) -> Any:
        if value is None or isinstance(value, dict) or value == "":
            return value
        flag = param.opts[0] if param is not None and param.opts else "the option"
        try:
            readers.parse_option("json_option", str(value), flag)
        except MvlsibError as exc:
            self.fail(str(exc).removeprefix(f"{flag}: "), param, ctx)
        return value
