"""The options several commands share, each declared once, for both CLIs (``mvlsib-build``'s commands
import them from here; this package is bundled into every release, so it imports only click).

One rule for names: ``--release`` is a release (folder or Hub repo), ``--data-revision`` and
``--model-revision`` pin the dataset and the model, ``--progress/--no-progress`` switches the bars,
``--json FILE`` writes a command's JSON report, ``--out`` is where a command writes, ``--pool`` an
image pool. An option renamed to fit keeps its old spelling as a hidden alias (``old=``): it still
parses, to the same parameter, but ``--help`` and error messages show only the new name.
"""

from __future__ import annotations

from pathlib import Path

import click

from ._compat import httpio

# The help text of each shared option (a command may add a sentence of its own after it).
SHARED_HELP = {
    "out": "",  # every command says what it writes there
    "progress": "Draw progress bars on stderr (on a terminal only).",
    "pool": "Image-pool folder holding manifest.csv and the image files (or that manifest.csv).",
    "release": "The release: ",
    "data_revision": "Branch, tag or commit of the Hub dataset repo",
    "model_revision": "Branch, tag or commit of the Hub model repo",
    "json_out": "Also write the JSON report to FILE.",
}

_RELEASE_KINDS = {
    "folder-or-hub": "a release folder (with data/ and mvl_sib.py) or a Hub dataset repo id ORG/NAME.",
    "folder": "a release folder (with data/ and mvl_sib.py).",
    "hub": "a Hub dataset repo id ORG/NAME.",
}


class UrlType(click.ParamType):
    """An http(s) URL, checked when the option is parsed: no space or control character, a host, a valid port."""

    name = "url"

    def convert(self, value, param, ctx):
        try:
            return httpio.check_url(str(value))
        except httpio.InvalidURL as exc:
            self.fail(str(exc), param, ctx)


URL = UrlType()


class SharedOption(click.Option):
    """A click option whose old spellings (``old``) still parse but are never shown.

    ``--help`` and error messages name only the current spellings; ``shared`` records which shared
    definition made the option (tests/cli/test_option_names.py checks names and help texts by it).
    """

    def __init__(self, param_decls, *, old: tuple[str, ...] = (), shared: str | None = None, **attrs):
        self.old = tuple(old)
        self.shared = shared
        super().__init__([*param_decls, *self.old], **attrs)

    def _shown(self):
        saved = self.opts
        self.opts = [o for o in saved if o not in self.old]
        return saved

    def get_help_record(self, ctx):
        saved = self._shown()
        try:
            return super().get_help_record(ctx)
        finally:
            self.opts = saved

    def get_error_hint(self, ctx):
        saved = self._shown()
        try:
            return super().get_error_hint(ctx)
        finally:
            self.opts = saved


def option(*param_decls: str, old: tuple[str, ...] = (), shared: str | None = None, **attrs):
    """``click.option`` with hidden old spellings: the one way a command renames an option."""
    return click.option(*param_decls, cls=SharedOption, old=old, shared=shared, **attrs)


def _help(key: str, note: str | None) -> str:
    return " ".join(part for part in (SHARED_HELP[key], note) if part)


def out_option(help: str, *, file: bool = False, name: str = "out", **attrs):
    """``--out``: the folder (``file=True``: the file) a command writes; ``help`` says what goes there."""
    kind = click.Path(file_okay=file, dir_okay=not file, path_type=Path)
    return option("--out", name, type=kind, shared="out", help=help, **attrs)


progress_option = option(
    "--progress/--no-progress",
    "progress",
    default=True,
    show_default=True,
    shared="progress",
    help=SHARED_HELP["progress"],
)


def pool_option(
    note: str | None = None, *, default=None, show_default=None, required: bool = False, folder_only: bool = False
):
    """``--pool``: an image-pool folder or its manifest.csv (every stage reads the manifest);
    ``folder_only`` for the commands that make or fill a pool."""
    return option(
        "--pool",
        "pool",
        type=click.Path(file_okay=not folder_only, path_type=Path),
        metavar="DIR",
        default=default,
        show_default=show_default,
        required=required,
        shared="pool",
        help=_help("pool", note),
    )


def release_option(
    note: str | None = None,
    *,
    kind: str = "folder-or-hub",
    path: bool = False,
    old: tuple[str, ...] = ("--data",),
    **attrs,
):
    """``--release``: a release folder and/or Hub dataset repo id (``kind``); ``--data`` is its old spelling."""
    if path:
        attrs.setdefault("type", click.Path(file_okay=False, exists=True, path_type=Path))
    metavar = {"folder-or-hub": "DIR|ORG/NAME", "folder": "DIR", "hub": "ORG/NAME"}[kind]
    help_text = SHARED_HELP["release"] + _RELEASE_KINDS[kind] + (f" {note}" if note else "")
    return option("--release", "release", metavar=metavar, old=old, shared="release", help=help_text, **attrs)


def data_revision_option(note: str | None = None, *, old: tuple[str, ...] = (), param: str = "data_revision"):
    """``--data-revision``: pins the dataset read from the Hub (``--revision`` where that was its name)."""
    return option(
        "--data-revision",
        param,
        default=None,
        metavar="REV",
        old=old,
        shared="data_revision",
        help=SHARED_HELP["data_revision"] + (f" {note}" if note else "."),
    )


def model_revision_option(param: str = "model_revision", note: str | None = None):
    """``--model-revision``: pins the model read from the Hub (its old spelling ``--revision`` hidden)."""
    return option(
        "--model-revision",
        param,
        default=None,
        metavar="REV",
        old=("--revision",),
        shared="model_revision",
        help=SHARED_HELP["model_revision"] + (f" {note}" if note else "."),
    )


def _no_dash(ctx, param, value):
    # "-" means stdout elsewhere; here it would silently become a file named "-"
    if value is not None and str(value) == "-":
        raise click.BadParameter("this command writes its JSON report to a file only; give --json FILE", ctx, param)
    return value


def json_out_option(note: str | None = None, *, name: str = "json_out", stdout: bool = False, old=()):
    """``--json FILE``: also write the command's JSON report to FILE.

    ``stdout=True``: ``--json -`` (or ``--json`` alone, the old flag) prints the JSON instead.
    """
    extra = {"flag_value": "-", "is_flag": False} if stdout else {"callback": _no_dash}
    return option(
        "--json",
        name,
        type=click.Path(dir_okay=False, allow_dash=stdout, path_type=Path),
        default=None,
        metavar="FILE",
        old=old,
        shared="json_out",
        help=_help("json_out", note),
        **extra,
    )
