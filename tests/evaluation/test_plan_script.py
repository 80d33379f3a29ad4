"""The SLURM script of ``mvlsib-eval plan`` runs exactly the command it was planned for, whatever the
values in it: each script is run by bash with a ``mvlsib-eval`` on PATH that records its arguments,
for generated hostile values of every argument the script carries."""

from __future__ import annotations

import json
import os
import stat
import subprocess

import pytest

from mvlsib import terminal
from mvlsib.evaluation.scale.plan import Plan, slurm_script

PIECES = ["\n", "\r", "'", '"', "`", "$(", ")", ";", "&", "|", "\\", "#", "\x1b]0;t\x07", "\u202e", " ", "*", "~"]
INJECTED = "touch PWNED"


def _hostile(i: int) -> str:
    """A value built from the shell's and the terminal's special pieces, with a command after a line break."""
    pieces = [PIECES[(i + j * 5) % len(PIECES)] for j in range(4)]
    return f"run{i}{''.join(pieces)}\n{INJECTED}\n#{pieces[0]}x"


PLAN = Plan(languages=["eng_Latn"], pairs=[("i2s", 1)], per_language=2, n_prompts=2, shards=[1, 1])


@pytest.mark.parametrize("i", range(len(PIECES)))
@pytest.mark.parametrize("where", ["out", "model", "release", "selection"])
def test_the_script_runs_the_planned_command_and_nothing_else(tmp_path, i, where):
    value = _hostile(i)
    out = value if where == "out" else "runs/x"
    args = ["--release", value if where == "release" else "rel", "--model", value if where == "model" else "m"]
    args += ["--out", out] + (["--languages", value] if where == "selection" else [])
    script = tmp_path / "job.sh"
    script.write_text(slurm_script(PLAN, args, out), encoding="utf-8")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    recorder = bin_dir / "mvlsib-eval"
    recorder.write_text(
        '#!/usr/bin/env python3\nimport json, sys\nopen("argv.json", "a").write(json.dumps(sys.argv[1:]) + "\\n")\n'
    )
    recorder.chmod(recorder.stat().st_mode | stat.S_IEXEC)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(["bash", str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "PWNED").exists()
    calls = [json.loads(line) for line in (tmp_path / "argv.json").read_text().splitlines()]
    assert calls == [["run", *args, "--no-progress"]]
    # the comments hold no line break or control character of a value
    for line in script.read_text(encoding="utf-8").splitlines():
        assert terminal.is_visible(line), repr(line)
