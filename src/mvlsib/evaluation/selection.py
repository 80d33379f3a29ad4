"""The options that choose a run's prompts (release, tasks, k, languages, subset, order), written once
for every command that plans a run: ``run``, ``batch prepare`` and ``plan``; and ``run_options``,
which turns their values into the runner's ``RunOptions`` keywords."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ._compat import TASK_TABLE, TASKS, MvlsibError, params
from .options import data_revision_option, release_option
from .run.schedule import MAX_PROMPTS, ORDERS


def csv_list(value: str | tuple) -> list:
    """The items of a comma list (``params.CommaList`` gives a tuple already; a resumed config a string)."""
    if isinstance(value, (tuple, list)):
        return list(value)
    return [v.strip() for v in value.split(",") if v.strip()]


def read_groups(paths) -> dict[str, dict[str, str]]:
    """``--groups`` CSV files, by file stem."""
    from .run.scoring import read_groups_csv

    return {Path(p).stem: read_groups_csv(p) for p in paths}


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
        type=params.CommaList(keywords=("all",)),
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
