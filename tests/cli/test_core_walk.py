"""Every command of both CLIs in the core install: no optional dependency is imported.

The core session (noxfile.py) has none of ``OPTIONAL_DEPENDENCIES``; there a command that
imports one fails outright. Each case also runs in a fresh interpreter and reports which
optional modules it loaded, so the walk fails in a full environment too. ``--help`` of every
command is generated from the click groups (a new command is walked without editing this
file); the runs on real inputs are the fault matrix's control cases (tests/cli/test_fault_matrix.py,
a core module: every command with a successful base invocation), and the commands that need a
model say which extra to install, in one line, exit 2.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import click
import pytest
from support import selected_env, subprocess_env
from support.cli_contract import Outcome, refused

from mvlsib.cli import build_cli, eval_cli
from mvlsib.errors import EVAL_EXTRA, OPTIONAL_DEPENDENCIES

# What ``--help`` must not import either, whatever is installed: it answers at once.
HEAVY = ("pyarrow", "numpy", "pandas", "datasets", "PIL", "jsonschema", "huggingface_hub")
# Runs one command in this interpreter and prints, last, the optional and heavy packages it imported.
DRIVER = (
    f"OPTIONAL = {sorted(OPTIONAL_DEPENDENCIES) + list(HEAVY)!r}\n"
    + """
import json, sys
from mvlsib.cli import build_cli, eval_cli
cli = {"mvlsib-build": build_cli, "mvlsib-eval": eval_cli}[sys.argv[1]]
try:
    cli.main(sys.argv[2:], prog_name=sys.argv[1])
    code = 0
except SystemExit as exc:
    code = exc.code if isinstance(exc.code, int) else 1
loaded = sorted({name.split(".")[0] for name in sys.modules} & set(OPTIONAL))
print("\\nOPTIONAL-LOADED " + json.dumps(loaded), file=sys.stderr)
sys.exit(code)
"""
)


def _commands(group: click.Group, prefix: tuple[str, ...]) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for name, cmd in group.commands.items():
        if isinstance(cmd, click.Group):
            out.append((*prefix, name))
            out += _commands(cmd, (*prefix, name))
        else:
            out.append((*prefix, name))
    return out


COMMANDS = (
    [("mvlsib-build",), ("mvlsib-eval",)]
    + _commands(build_cli, ("mvlsib-build",))
    + _commands(eval_cli, ("mvlsib-eval",))
)


def _run(argv: list[str], env: dict[str, str] | None = None) -> tuple[int, str, str, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, *argv],
        env={**subprocess_env(), **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )
    body, _, tail = done.stderr.rpartition("\nOPTIONAL-LOADED ")
    assert tail, f"{argv}: the driver did not finish\n{done.stderr[-3000:]}"
    return done.returncode, done.stdout, body, json.loads(tail)


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_imports_no_optional_dependency(command):
    code, out, err, loaded = _run([*command, "--help"])
    assert code == 0, err[-2000:]
    assert "Usage:" in out and "Traceback" not in err
    assert loaded == [], f"{' '.join(command)} --help imported {loaded}"


def test_a_run_reports_the_heavy_libraries_it_loads(release_dir, tmp_path):
    """The driver's report is real: a command that reads parquet is seen loading pyarrow."""
    code, _, err, loaded = _run(["mvlsib-build", "export", "vlmevalkit", "--release", str(release_dir),
                                 "--out", str(tmp_path / "vlm")])  # fmt: skip
    assert code == 0, err[-2000:]
    assert "pyarrow" in loaded and not set(loaded) & set(OPTIONAL_DEPENDENCIES)


def test_this_is_the_core_environment(request):
    """Under ``--env core`` (the core session) nothing optional is installed: the walk means something."""
    if selected_env(request.config) != "core":
        pytest.skip("checks the core session's environment; this run is not --env core")
    present = [name for name in OPTIONAL_DEPENDENCIES if importlib.util.find_spec(name) is not None]
    assert present == [], f"the core session has optional dependencies installed: {present}"


def _tiny_model_folder(tmp_path):
    """A model folder as far as the command line can tell (the model is never loaded in the core)."""
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "llava"}\n')
    return folder


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["mvlsib-eval", "run", "--data", "{release}", "--model", "{model}", "--out", "{out}",
                      "--limit", "1", "--languages", "eng_Latn", "--no-progress"], id="run --backend hf"),
        pytest.param(["mvlsib-build", "verify-images", "--model", "{model}", "--out", "{out}", "--no-progress"],
                     id="verify-images --backend hf"),
    ],
)  # fmt: skip
def test_a_command_that_needs_the_eval_extra_says_so_in_one_line(argv, tmp_path, release_dir, request):
    """In the core install (the only place where this path is reachable) a model command names the extra."""
    if any(importlib.util.find_spec(name) is not None for name in ("torch", "transformers")):
        if selected_env(request.config) == "core":
            pytest.fail("the core session has torch or transformers installed", pytrace=False)
        pytest.skip("torch and transformers are installed here: the model loads instead (eval session)")
    values = {"release": str(release_dir), "model": str(_tiny_model_folder(tmp_path)), "out": str(tmp_path / "out")}
    code, out, err, _ = _run([a.format(**values) for a in argv], env={"HF_HUB_OFFLINE": "1"})
    refused(Outcome(code, err), EVAL_EXTRA, prefixed=False)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
