"""Export a release as an Inspect AI task file (``inspect eval DIR/mvl_sib_inspect.py@i2s_k3``).

Layout: ``mvl_sib_inspect.py`` (``templates/inspect_task.py`` followed by one ``@task`` per
exported task and k, named like the Hub task ids of the release's ``eval.yaml``), ``mvl_sib.py``
(the loader), ``mvlsib_evaluate.zip`` (the evaluator's code, ``bundle.bundle_zip``) and
``export.json`` (what was exported, which the task file reads). The task file imports the
evaluator's prompts, parser, scorer and subset, so Inspect scores as ``mvlsib-eval run`` does.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from mvlsib.errors import MvlsibError
from mvlsib.release.bundle import BUNDLE_PACKAGE, bundle_zip
from mvlsib.release.eval_yaml import task_id
from mvlsib.release.exports.common import select, staging, write_info
from mvlsib.release_format import mvl_sib

FORMAT = "inspect"
TASK_TEMPLATE = Path(__file__).resolve().parent / "templates" / "inspect_task.py"
TASK_FILE = "mvl_sib_inspect.py"
# Greedy and short, as the reference evaluator decodes (evaluation RunOptions.max_new_tokens).
MAX_NEW_TOKENS = 8


def _task_functions(task_ks) -> str:
    # Each Inspect task is named by its Hub task id in eval.yaml (eval_yaml.task_id).
    out = []
    for task, k in task_ks:
        title = mvl_sib.TASK_BY_NAME[task].title
        out.append(
            f"\n\n@task\ndef {task_id(task, k)}():\n"
            f'    """MVL-SIB {task} ({title}), k={k}: macro over the exported languages."""\n'
            f'    return mvl_sib_task("{task}", {k})\n'
        )
    return "".join(out)


def export_inspect(release, out, *, languages=None, tasks=None, ks=None, revision=None, limit=None) -> dict:
    """Write the Inspect task folder ``out``; returns what ``export.json`` records."""
    if limit is not None and int(limit) < 1:
        raise MvlsibError(f"--limit must be at least 1, got {limit}")
    sel = select(release, languages=languages, tasks=tasks, ks=ks, revision=revision)
    if not TASK_TEMPLATE.is_file():
        raise MvlsibError(f"{TASK_TEMPLATE}: missing from the installation; reinstall mvlsib-build")
    info = sel.info(FORMAT)
    info["limit"] = None if limit is None else int(limit)
    info["max_new_tokens"] = MAX_NEW_TOKENS
    info["inspect_tasks"] = [task_id(task, k) for task, k in sel.task_ks]
    with staging(out) as stage:
        text = TASK_TEMPLATE.read_text(encoding="utf-8") + _task_functions(sel.task_ks)
        (stage / TASK_FILE).write_text(text, encoding="utf-8", newline="\n")
        shutil.copyfile(mvl_sib.__file__, stage / "mvl_sib.py")
        (stage / f"{BUNDLE_PACKAGE}.zip").write_bytes(bundle_zip())
        write_info(stage, info)
    return info
