"""The options several commands share, each declared once, for both CLIs.

Every release's evaluate.py runs ``mvlsib-eval``'s commands, so this module ships in the release's
evaluator package too (``release/bundle.py``): it imports click, the evaluator and the leaves it
uses, relatively, and nothing of mvlsib-build's own commands.

One rule for names: ``--release`` is a release (folder or Hub repo), ``--data-revision`` and
``--model-revision`` pin the dataset and the model, ``--progress/--no-progress`` switches the bars,
``--json FILE`` writes a command's JSON report, ``--out`` is where a command writes, ``--pool`` an
image pool. An option renamed to fit keeps its old spelling as a hidden alias (``old=``): it still
parses, to the same parameter, but ``--help`` and error messages show only the new name.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import click

from .. import httpio, params
from ..atomic import refuse_nested
from ..errors import MvlsibError
from ..evaluation._compat import LOADER, TASK_TABLE, TASKS
from ..evaluation.backends import BACKENDS, backend_options, backends_help
from ..evaluation.run.schedule import MAX_PROMPTS, ORDERS

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


class HubRepoIdType(click.ParamType):
    """A Hub repo id ORG/NAME by the one rule (``mvl_sib.HUB_REPO_ID``), checked when the option is parsed."""

    name = "org/name"

    def convert(self, value, param, ctx):
        if (problem := LOADER.hub_id_problem(str(value))) is not None:
            self.fail(problem, param, ctx)
        return str(value)


HUB_REPO_ID = HubRepoIdType()


class LanguageCodeType(click.ParamType):
    """A language code by the release format's one rule (``mvl_sib.LANGUAGE_CODE``: ``eng_Latn``):
    a name is also a folder name, so ``eng_Latn/`` or ``../x`` would reach outside the release."""

    name = "code"

    def convert(self, value, param, ctx):
        if not LOADER.is_language_code(str(value)):
            self.fail(f"{str(value)!r} is not a language code like eng_Latn (ISO 639-3 _ ISO 15924 script)", param, ctx)
        return str(value)


LANGUAGE_CODE = LanguageCodeType()


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


def apart(out: str, *inputs: str, inside_ok: tuple[str, ...] = ()):
    """The output folder parameter ``out`` kept apart from the folders of the parameters ``inputs`` (each a
    path, a text naming a local path, or several of them): refused before the command does any work when
    it is one of them, lies inside one or holds one (``atomic.refuse_nested``). Put it below the command's
    options; ``tests/cli/test_folders_apart.py`` finds every command with an output folder and its inputs."""

    def decorate(fn):
        @functools.wraps(fn)
        def command(**values):
            ctx = click.get_current_context()
            by_name = {p.name: p for p in ctx.command.params}
            if values.get(out) is not None:
                named = [(_spelling(by_name[name]), v) for name in inputs for v in _paths(values.get(name))]
                refuse_nested(
                    (_spelling(by_name[out]), values[out]), named, inside_ok=[_spelling(by_name[n]) for n in inside_ok]
                )
            return fn(**values)

        command.kept_apart = (out, inputs, inside_ok)  # type: ignore[attr-defined]
        return command

    return decorate


def _paths(value: Any) -> list[Any]:
    """The paths a parameter's value holds: none, one, or those of a repeated option or argument."""
    if value is None:
        return []
    return [v for v in value if v is not None] if isinstance(value, (list, tuple)) else [value]


def _spelling(param: click.Parameter) -> str:
    """How the command line names ``param``: its first long option, or an argument's metavar."""
    if isinstance(param, click.Option):
        return next((o for o in param.opts if o.startswith("--")), param.opts[0])
    return param.human_readable_name


def out_option(help: str, *, file: bool = False, name: str = "out", **attrs):
    """``--out``: the folder (``file=True``: the file) a command writes; ``help`` says what goes there."""
    kind = params.OutputFile() if file else click.Path(file_okay=False, path_type=Path)
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
    if kind == "hub":
        attrs.setdefault("type", HUB_REPO_ID)
    attrs.setdefault("type", params.TEXT)
    metavar = {"folder-or-hub": "DIR|ORG/NAME", "folder": "DIR", "hub": "ORG/NAME"}[kind]
    help_text = SHARED_HELP["release"] + _RELEASE_KINDS[kind] + (f" {note}" if note else "")
    return option("--release", "release", metavar=metavar, old=old, shared="release", help=help_text, **attrs)


def data_revision_option(note: str | None = None, *, old: tuple[str, ...] = (), param: str = "data_revision"):
    """``--data-revision``: pins the dataset read from the Hub (``--revision`` where that was its name)."""
    return option(
        "--data-revision",
        param,
        type=params.TEXT,
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
        type=params.TEXT,
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


different_releases_option = click.option(
    "--different-releases",
    is_flag=True,
    default=False,
    help="Analyse runs made on different releases (refused by default: the same keys may hold other "
    "instances or images); the output then says so at the top.",
)


def json_out_option(note: str | None = None, *, name: str = "json_out", stdout: bool = False, old=()):
    """``--json FILE``: also write the command's JSON report to FILE.

    ``stdout=True``: ``--json -`` (or ``--json`` alone, the old flag) prints the JSON instead.
    """
    extra = {"flag_value": "-", "is_flag": False} if stdout else {"callback": _no_dash}
    return option(
        "--json",
        name,
        type=params.OutputFile(allow_dash=stdout),
        default=None,
        metavar="FILE",
        old=old,
        shared="json_out",
        help=_help("json_out", note),
        **extra,
    )


def with_backend_options(fn):
    """``--backend`` and every registered backend's own options (one set for every command that runs models).

    The command receives ``backend`` and each option under its constructor name; ``options_for``
    picks the chosen backend's.
    """
    decorators = [
        click.option(
            "--backend",
            type=click.Choice(list(BACKENDS)),
            default=BACKENDS[0],
            show_default=True,
            help=backends_help("DESCRIPTION"),
        )
    ]
    for name, opt in backend_options():
        if opt.flag == "revision":  # the model's revision: one name wherever a model is run
            decorators.append(model_revision_option(opt.param, f"({name} backend)."))
        elif opt.kind is bool:
            decorators.append(
                click.option(f"--{opt.flag}", opt.param, is_flag=True, default=opt.default, help=opt.help)
            )
        else:
            decorators.append(backend_option(opt))
    for decorate in reversed(decorators):
        fn = decorate(fn)
    return fn


def backend_option(opt):
    """The click option of one valued ``BackendOption`` (a backend's own table declares it)."""
    return click.option(
        f"--{opt.flag}",
        opt.param,
        type=click.Choice(list(opt.choices)) if opt.choices else (params.TEXT if opt.kind is str else opt.kind),
        default=opt.default,
        show_default=opt.default is not None,
        help=opt.help,
    )


def runs_argument():
    """RUNS: one or more run folders, each once."""
    return click.argument(
        "runs",
        nargs=-1,
        required=True,
        callback=params.distinct(),
        type=click.Path(exists=True, file_okay=False, path_type=Path),
    )


def run_names_option(help_text: str = "Display name per run, in order (default: folder name)."):
    """``--name`` (repeatable): one display name per run of the command's RUNS, in order."""
    return click.option(
        "--name", "names", type=params.TEXT, multiple=True, callback=params.paired("RUNS"), help=help_text
    )


def csv_list(value: str | tuple) -> list:
    """The items of a comma list (``params.CommaList`` gives a tuple already; a resumed config a string)."""
    if isinstance(value, (tuple, list)):
        return list(value)
    return [v.strip() for v in value.split(",") if v.strip()]


def read_groups(paths) -> dict[str, dict[str, str]]:
    """``--groups`` CSV files, by file stem."""
    from ..evaluation.run.scoring import read_groups_csv

    return {Path(p).stem: read_groups_csv(p) for p in paths}


# The options that choose a run's prompts (release, tasks, k, languages, subset, order), for every
# command that plans a run: ``run``, ``batch prepare`` and ``plan``; ``run_options`` turns their
# values into the runner's ``RunOptions`` keywords.
_SELECTION = (
    release_option(default=".", show_default=True),
    data_revision_option("(a --release ORG/NAME)."),
    click.option(
        "--tasks",
        type=params.CommaList(),
        default=",".join(TASKS),
        show_default=True,
        help=f"Comma-separated tasks: {', '.join(TASKS)} (upstream names "
        f"{', '.join(t.upstream for t in TASK_TABLE)} also accepted).",
    ),
    click.option(
        "--k",
        "ks",
        type=params.CommaList(params.Int(1, params.MAX_K)),
        default="1,3,5",
        show_default=True,
        help="Comma-separated numbers of references (1-5); a task with a single reference (t2s) runs k=1 only.",
    ),
    click.option(
        "--languages",
        type=params.CommaList(LANGUAGE_CODE, keywords=("all",)),
        default="all",
        show_default=True,
        help="'all' (every language config of the release folder or Hub repo) or comma-separated codes, "
        "e.g. eng_Latn,arb_Arab.",
    ),
    click.option(
        "--limit",
        type=params.Int(1, params.MAX_COUNT),
        default=None,
        help="Only N instances of each language: a deterministic subset balanced over topics and gold "
        "letters (the same instances in every language).",
    ),
    click.option(
        "--limit-mode",
        type=click.Choice(["stratified", "first"]),
        default="stratified",
        show_default=True,
        help="How --limit picks: stratified (balanced) or first (the first N in release order).",
    ),
    click.option(
        "--order",
        type=click.Choice(list(ORDERS)),
        default=ORDERS[0],
        show_default=True,
        help="Processing order: 'prefix' sends prompts that share a prefix (instruction, reference "
        "images, across languages) together, so a server's prefix cache reuses it; 'canonical' "
        "goes language by language. Results and the predictions file are the same either way.",
    ),
    click.option(
        "--max-prompts",
        type=params.Int(1, params.MAX_COUNT),
        default=MAX_PROMPTS,
        show_default=True,
        help="Prompts held in memory at once (about 3.2 KB each, ~1.6 GB at the default). A run (or shard) "
        "with more is processed in waves, each a round-robin share of it with its own prefix order; "
        "results and files are the same.",
    ),
)

max_new_tokens_option = click.option(
    "--max-new-tokens",
    type=params.Int(1, params.MAX_TOKENS),
    default=8,
    show_default=True,
    help="Tokens generated per prompt (the answer is a letter; a few tokens leave room for '(C)' or '**C**').",
)


# parsing.MODES, with the default first as --help lists them.
PARSE_MODE_CHOICES = ("relaxed", "strict", "lenient")


def parse_mode_option(help: str):
    """``--parse-mode``: how letters are read from responses (the commands that score say how)."""
    return click.option(
        "--parse-mode", type=click.Choice(PARSE_MODE_CHOICES), default="relaxed", show_default=True, help=help
    )


def groups_option(help: str):
    """``--groups CSV`` (repeatable), received as ``groups_csv``; ``read_groups`` reads the files."""
    return click.option(
        "--groups",
        "groups_csv",
        multiple=True,
        callback=params.distinct(drop=True),
        type=click.Path(exists=True, dir_okay=False),
        help=help,
    )


def selection_options(fn):
    """The selection options; the command receives them as keywords (``run_options`` reads them)."""
    for decorate in reversed(_SELECTION):
        fn = decorate(fn)
    return fn


def run_options(selection: dict[str, Any]) -> dict[str, Any]:
    """The ``RunOptions`` keywords of the selection options' values (and ``--max-new-tokens`` when given)."""
    values = dict(selection)
    values["data"] = values.pop("release")
    raw_ks = values.pop("ks")
    try:
        ks = tuple(int(k) for k in csv_list(raw_ks))
    except (TypeError, ValueError):
        raise MvlsibError(f"--k must be comma-separated integers, got {raw_ks!r}") from None
    if values["limit"] is not None and values["limit"] < 1:
        raise MvlsibError(f"--limit must be at least 1, got {values['limit']}")
    languages, tasks = values.pop("languages"), values.pop("tasks")
    return {
        **values,
        "tasks": tuple(csv_list(tasks)),
        "ks": ks,
        "languages": "all" if isinstance(languages, str) and languages.strip() == "all" else tuple(csv_list(languages)),
    }
