"""The one place where errors become what the user sees, for both command-line tools.

A leaf (click and mvlsib's other leaves only): ``mvlsib-build``, ``mvlsib-eval`` and every release's
``evaluate.py`` (which carries this file) install the same boundary on their groups.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import sys
from collections.abc import Callable, Iterator

import click

from . import credentials, httpio, oserrors, terminal
from .errors import MvlsibError, missing_dependency_message


class InputError(click.ClickException):
    """Bad input the user can fix: a message on stderr, exit status 2.

    The message names what the user gave or a file held, so each of its lines is made
    ``terminal.visible``: one line whatever the value, and nothing in it acts on the terminal; and
    a library's text in it may hold a URL with its password or a token, so credentials are removed.
    """

    exit_code = 2

    def __init__(self, message: str, *more_lines: str) -> None:
        # a message's own lines (an MvlsibError's list) stay lines; nothing inside one can start another
        secrets = _secrets()
        super().__init__(
            "\n".join(terminal.visible(_redact(httpio.redact(line), secrets)) for line in (message, *more_lines))
        )


@contextlib.contextmanager
def error_boundary(
    explain_missing: Callable[[BaseException], str | None] = missing_dependency_message,
) -> Iterator[None]:
    """The one place where errors become what the user sees.

    ``MvlsibError`` (bad input) and every ``OSError`` (a refused permission, a missing path, a
    full disk, a dropped connection: the environment) become one line naming the path and what
    to do, exit status 2. Anything else is a bug and stays a traceback, with the values of
    credential-like environment variables removed from its messages first. ``explain_missing`` gives the
    one line for a missing optional module (a release's evaluator names its own install line).
    """
    try:
        yield
    except InputError:
        raise  # made safe line by line already (an inner group's boundary: `images`, `batch`)
    except click.exceptions.ClickException as exc:
        # click quotes the value given in its own messages
        exc.message = terminal.visible(exc.message)  # type: ignore[misc]
        raise
    except (click.exceptions.Exit, click.exceptions.Abort):
        raise
    except MvlsibError as exc:
        raise InputError(*exc.lines()) from None
    except OSError as exc:
        raise InputError(_hub_unreachable(exc) or oserrors.message(exc)) from None
    except Exception as exc:
        if getattr(exc, "input_error", False):
            # The release's own loader (mvl_sib.py, standalone: no MvlsibError there) marks its errors so.
            raise InputError(str(exc)) from None
        if (missing := explain_missing(exc)) is not None:
            raise InputError(missing) from None
        if (hub := _hub_unreachable(exc)) is not None:
            raise InputError(hub) from None
        if _library_input_error(exc):
            raise InputError(f"{type(exc).__name__}: {exc}") from None
        if (os_error := oserrors.as_oserror(exc)) is not None:
            raise InputError(oserrors.message(os_error)) from None
        withheld = _redact_chain(exc, _secrets())
        if withheld is not None:
            raise withheld from None
        raise


def friendly_errors(fn, explain_missing: Callable[[BaseException], str | None] = missing_dependency_message):
    """The error boundary around one function (the groups already apply it to every command)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with error_boundary(explain_missing):
            return fn(*args, **kwargs)

    return wrapper


class BoundaryGroup(click.Group):
    """A click group that runs every sub-command inside ``error_boundary``: no command can forget it."""

    explain_missing = staticmethod(missing_dependency_message)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if ctx.parent is None:  # the whole command line, once
            credentials.remember_environment()
            credentials.remember_all(httpio.credential_option_values(args))
            if not {"--help", "-h", "--version"} & set(args):  # help is shown whatever the environment
                _check_environment(ctx)
            for n, arg in enumerate(args, start=1):
                if any("\ud800" <= ch <= "\udfff" for ch in arg):
                    # Python hands undecodable bytes over as lone surrogates: no file, lock or record can hold them
                    raise click.UsageError(
                        f"argument {n} ({terminal.visible(arg.encode('utf-8', 'backslashreplace').decode()[:200])}) "
                        "is not valid UTF-8 text (a byte of another encoding); retype it, or rename the file it names",
                        ctx,
                    )
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context):
        guard_logs()
        with error_boundary(self.explain_missing):
            return super().invoke(ctx)


# Environment variables that hold an address, read by a library at import (huggingface_hub parses
# HF_ENDPOINT then): a bad one would be a traceback from whichever command imported it first.
URL_VARIABLES = ("HF_ENDPOINT",)


def _check_environment(ctx: click.Context) -> None:
    for name in URL_VARIABLES:
        if value := os.environ.get(name):
            try:
                httpio.check_url(value)
            except httpio.InvalidURL as exc:
                raise click.UsageError(
                    f"the environment variable {name}: {exc}; set it to the Hub's address "
                    "(https://huggingface.co) or unset it",
                    ctx,
                ) from None


def _library_input_error(exc: BaseException) -> bool:
    """Whether a Hub library refused a value the user gave (``hubio.INPUT_ERRORS``)."""
    if "huggingface_hub" not in sys.modules:
        return False
    from . import hubio

    return type(exc).__name__ in hubio.INPUT_ERRORS and type(exc).__module__.startswith("huggingface_hub")


def _hub_unreachable(exc: BaseException) -> str | None:
    """The one sentence for a Hub that cannot be asked (offline or not reached), whichever library
    or command met it; only when a Hub library is loaded at all."""
    if not any(name in sys.modules for name in ("huggingface_hub", "datasets", "transformers")):
        return None
    from . import hubio

    return hubio.unreachable(exc)


def guard_logs() -> None:
    """Every log record any library makes (huggingface_hub's retry warnings name the URL, with a
    ``user:password@`` if HF_ENDPOINT holds one) reaches the terminal as one safe line: credentials
    removed (token shapes, URL passwords, credential-like environment values) and every control
    shown (``terminal.visible``). A record factory, so no library's own handler can go around it."""
    previous = logging.getLogRecordFactory()
    if getattr(previous, "mvlsib_guard", False):
        return

    def factory(*args, **kwargs):
        record = previous(*args, **kwargs)
        try:
            text = record.getMessage()
        except Exception:  # a library's own formatting bug: show its template, not its arguments
            text = f"{record.msg} (arguments not shown)"
        record.msg, record.args = terminal.visible(_redact(httpio.redact(text), _secrets())), None
        return record

    factory.mvlsib_guard = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)


# Sub-groups made with ``@group.group(...)`` get the boundary too.
BoundaryGroup.group_class = BoundaryGroup


def _secrets() -> list[str]:
    """Every credential this process holds (``credentials``): the environment's, read anew."""
    credentials.remember_environment()
    return credentials.values()


def _redact_chain(exc: BaseException, secrets: list[str]) -> BaseException | None:
    """Remove ``secrets`` from the messages of ``exc`` and its causes, in place.

    Returns a replacement exception when a message cannot be cleaned (a custom ``__str__``).
    """
    if not secrets:
        return None
    seen: set[int] = set()
    node: BaseException | None = exc
    while node is not None and id(node) not in seen:
        seen.add(id(node))
        if any(s in str(node) for s in secrets):
            node.args = tuple(_redact(a, secrets) for a in node.args)
            if any(s in str(node) for s in secrets):
                return RuntimeError(f"{type(exc).__name__} (its message is withheld: it held a credential)")
        node = node.__cause__ or node.__context__
    return None


def _redact(value, secrets: list[str]):
    text = value if isinstance(value, str) else repr(value)
    if not any(s in text for s in secrets):
        return value
    for s in secrets:
        text = text.replace(s, "[redacted]")
    return text
