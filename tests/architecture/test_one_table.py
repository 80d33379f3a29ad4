"""Each fact in one table: task names, backends and their options."""

from __future__ import annotations

import ast

from support import REPO

from mvlsib.release_format import mvl_sib

SRC = REPO / "src" / "mvlsib"
TABLE_HOME = SRC / "release_format" / "mvl_sib.py"


def test_task_names_appear_only_in_the_task_table():
    """No module spells a task name as a string literal (or an upstream alias): they read the table."""
    names = set(mvl_sib.TASKS) | set(mvl_sib.TASK_ALIASES)
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if path == TABLE_HOME or "__pycache__" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
                found.append(f"{path.relative_to(SRC)}:{node.lineno}: {node.value!r}")
    assert found == []
    templates = [p for p in (SRC / "release" / "card" / "templates").iterdir() if p.suffix == ".tmpl"]
    for path in templates:
        text = path.read_text("utf-8")
        assert not [n for n in names if f"`{n}`" in text or f'"{n}"' in text], path.name


def test_task_table_is_consistent():
    for task in mvl_sib.TASK_TABLE:
        assert mvl_sib.TASK_BY_NAME[task.mirror].mirror == task.name
        assert task.cross_modal != mvl_sib.TASK_BY_NAME[task.mirror].cross_modal
        columns = {name for name, _ in mvl_sib.LANGUAGE_COLUMNS}
        assert {task.options, task.label} <= columns and (task.references in columns)
        assert (
            task.references in mvl_sib.IMAGE_COLUMNS_OF_ROWS or task.options in mvl_sib.IMAGE_COLUMNS_OF_ROWS
        ) == task.cross_modal
        one, many = task.question
        assert one and (many is None) == (task.k_values == (1,))


def test_every_backend_owns_its_options_and_both_commands_offer_them():
    from click.testing import CliRunner

    from mvlsib.cli import build_cli, eval_cli
    from mvlsib.evaluation.backends import BACKENDS, backend_class, backend_options, options_for

    # The model's revision is shown as --model-revision (mvlsib.cli.options; --revision hidden).
    flags = [f"--{'model-revision' if opt.flag == 'revision' else opt.flag}" for _, opt in backend_options()]
    assert len(flags) == len(set(flags))
    for args in (["run", "--help"], ["verify-images", "--help"]):
        cli = eval_cli if args[0] == "run" else build_cli
        text = CliRunner().invoke(cli, args, terminal_width=200).output
        assert all(flag in text for flag in ["--backend", *flags]), args
    values = {opt.param: opt.default for name in BACKENDS for opt in backend_class(name).OPTIONS}
    for name in BACKENDS:
        assert set(options_for(name, values)) == {o.param for o in backend_class(name).OPTIONS}
