"""Issue #11: every sub-command of both CLIs, walked with bad inputs.

Each case (its own test id) must keep the error contract of ``support.cli_contract``: exit 2 (a
user error; or 1, a failed check) with one readable message and no traceback, and leave the folder
it was pointed at exactly as it was. A new sub-command must add cases here
(``test_every_command_is_walked`` fails otherwise).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from support.cli_contract import changed, refused, scene_state

from mvlsib.cli import build_cli, eval_cli

SECRET = "sk-walk-secret-0123456789"


def _commands(group: click.Group, prefix=()) -> list[str]:
    out = []
    for name, cmd in group.commands.items():
        if isinstance(cmd, click.Group):
            out += _commands(cmd, (*prefix, name))
        else:
            out.append(" ".join((*prefix, name)))
    return out


@pytest.fixture(scope="module")
def scene(tmp_path_factory, release_dir) -> Path:
    """A folder with the things bad inputs point at: a file, an empty folder, a run with garbage."""
    root = tmp_path_factory.mktemp("walk")
    (root / "empty").mkdir()
    (root / "file.txt").write_text("not a folder\n")
    (root / "garbage_run").mkdir()
    (root / "garbage_run" / "config.json").write_text("{not json")
    (root / "garbage_run" / "predictions.jsonl").write_text('{"task": "i2s"}\n')
    (root / "loop.tsv").symlink_to(root / "loop.tsv")
    (root / "not_image.jpg").write_text("<html>")
    (root / "groups.csv").write_bytes(b"\xff\xfe\x00garbage")
    shutil.copytree(release_dir, root / "release")
    (root / "release" / "RUN").mkdir()
    (root / "release" / "RUN" / "notes.txt").write_text("mine\n")
    return root


def _cases(s: Path) -> list[tuple[str, list[str]]]:
    rel = str(s / "release")
    one = ["--limit", "1", "--languages", "eng_Latn", "--tasks", "s2t", "--k", "1", "--no-progress"]
    openai_args = ["--backend", "openai", "--base-url", "http://127.0.0.1:9/v1", *one]  # nothing listens on 9
    src = ["--source-url", "https://example.org/run"]
    sel = one[:-1]  # the selection without --no-progress
    return [
        # mvlsib-build
        ("ingest", ["ingest", "--sib", str(s / "missing"), "--workdir", str(s / "w1")]),
        ("ingest", ["ingest", "--sib", str(s / "file.txt"), "--workdir", str(s / "w1")]),
        ("ingest", ["ingest", "--sib", str(s / "empty"), "--workdir", str(s / "w1")]),
        ("ingest", ["ingest", "--sib", str(s / "empty"), "--languages", "fra_Latn copy", "--workdir", str(s / "w1")]),
        ("ingest", ["ingest", "--flores", str(s / "empty"), "--workdir", str(s / "w1")]),
        ("sample", ["sample", "--workdir", str(s / "empty")]),
        ("sample", ["sample", "--workdir", str(s / "file.txt")]),
        ("validate", ["validate", "--workdir", str(s / "empty")]),
        ("verify-images", ["verify-images", "--model", "x", "--pool", str(s / "missing"), "--out", str(s / "v1")]),
        ("verify-images", ["verify-images", "--model", "x", "--device", "tpu", "--out", str(s / "v1")]),
        ("publish", ["publish"]),
        ("publish", ["publish", "--workdir", str(s / "empty"), "--out", str(s / "r1")]),
        ("publish", ["publish", "--release", rel, "--repo-id", "org/x", "--dry-run"]),
        ("publish", ["publish", "--release", rel, "--repo-id", "not-a-repo-id"]),
        ("build", ["build", "--sib", str(s / "missing"), "--out", str(s / "r2")]),
        (
            "images add",
            [
                "images",
                "add",
                str(s / "missing.jpg"),
                "--pool",
                str(s / "p1"),
                "--topic",
                "sports",
                "--license",
                "CC0-1.0",
                "--author",
                "A",
                "--source-url",
                "https://e.org/x",
            ],
        ),
        (
            "images add",
            [
                "images",
                "add",
                str(s / "not_image.jpg"),
                "--pool",
                str(s / "p1"),
                "--topic",
                "sports",
                "--license",
                "CC0-1.0",
                "--author",
                "A",
                "--source-url",
                "https://e.org/x",
            ],
        ),
        (
            "images add",
            [
                "images",
                "add",
                "http://127.0.0.1:9/x.jpg",
                "--pool",
                str(s / "p1"),
                "--topic",
                "sports",
                "--license",
                "CC0-1.0",
                "--author",
                "A",
                "--source-url",
                "https://e.org/x",
                "--timeout",
                "2",
            ],
        ),
        (
            "images add",
            [
                "images",
                "add",
                str(s / "loop.tsv"),
                "--pool",
                str(s / "p1"),
                "--topic",
                "sport",
                "--license",
                "CC0-1.0",
                "--author",
                "A",
                "--source-url",
                "https://e.org/x",
            ],
        ),
        ("images check", ["images", "check", "--pool", str(s / "missing")]),
        ("images check", ["images", "check", "--pool", str(s / "empty")]),
        ("images gallery", ["images", "gallery", "--pool", str(s / "empty"), "--out", str(s / "g1")]),
        ("images credits", ["images", "credits", "--pool", str(s / "empty"), "--out", str(s / "c1.md")]),
        ("images import-release", ["images", "import-release", str(s / "empty"), "--pool", str(s / "p2")]),
        # mvlsib-eval
        ("run", ["run", "--data", str(s / "missing"), "--model", "m", "--out", str(s / "o1")]),
        ("run", ["run", "--data", rel, "--model", "m", "--out", str(s / "o1"), "--max-new-tokens", "0"]),
        ("run", ["run", "--data", rel, "--model", "m", "--out", str(s / "o1"), "--device", "tpu", "--limit", "1"]),
        ("run", ["run", "--data", rel, "--model", "m", "--out", str(s / "o1"), "--k", "9"]),
        ("run", ["run", "--data", rel, "--model", "m", "--out", str(s / "o1"), "--shard", "3/2"]),
        ("run", ["run", "--data", rel, "--model", "m", "--out", str(s / "o1"), "--limit", "-1"]),
        ("run", ["run", "--data", rel, "--model", "m", "--out", str(s / "o1"), "--languages", "xx"]),
        ("run", ["run", "--data", rel, "--model", "m", "--out", str(s / "o1"), "--backend", "openai"]),
        (
            "run",
            [
                "run",
                "--data",
                rel,
                "--model",
                "m",
                "--out",
                str(s / "file.txt"),
                "--backend",
                "openai",
                "--base-url",
                "http://127.0.0.1:9/v1",
            ],
        ),
        ("run", ["run", "--data", rel, "--model", "m", "--out", str(s / "o2"), *openai_args, "--request-timeout", "0"]),
        ("run", ["run", "--data", rel, "--model", "m", "--out", str(s / "o2"), *openai_args, "--retry-backoff", "-1"]),
        (
            "run",
            [
                "run",
                "--data",
                rel,
                "--model",
                "m",
                "--out",
                str(s / "o2"),
                "--backend",
                "openai",
                "--base-url",
                "http://[::1",
                *one,
            ],
        ),
        (
            "run",
            [
                "run",
                "--data",
                rel,
                "--model",
                "m",
                "--out",
                str(s / "o2"),
                "--backend",
                "openai",
                "--base-url",
                "http://127.0.0.1:99999/v1",
                *one,
            ],
        ),
        ("run", ["run", "--data", rel, "--model", "m", "--out", str(s / "o2"), *openai_args, "--max-retries", "0"]),
        (
            "batch prepare",
            ["batch", "prepare", "--data", rel, "--model", "m", "--out", str(s / "release" / "RUN"), *sel],
        ),
        ("batch prepare", ["batch", "prepare", "--data", rel, "--model", "m", "--out", str(s / "file.txt"), *sel]),
        ("batch prepare", ["batch", "prepare", "--data", str(s / "missing"), "--model", "m", "--out", str(s / "b1")]),
        ("batch prepare", ["batch", "prepare", "--data", rel, "--model", "m", "--out", str(s / "b1"), "--k", "x"]),
        ("batch collect", ["batch", "collect", str(s / "empty"), str(s / "file.txt"), "--out", str(s / "o3")]),
        ("batch collect", ["batch", "collect", str(s / "garbage_run"), str(s / "file.txt"), "--out", str(s / "o3")]),
        ("plan", ["plan", "--data", str(s / "missing"), "--gpus", "4"]),
        ("plan", ["plan", "--data", rel, "--gpus", "0"]),
        ("plan", ["plan", "--data", rel, "--gpus", "2", *sel, "--script", str(s / "empty")]),
        ("merge", ["merge", str(s / "empty"), "--out", str(s / "m1")]),
        ("report", ["report", str(s / "empty"), "--out", str(s / "rep1")]),
        ("report", ["report", str(s / "garbage_run"), "--out", str(s / "rep1")]),
        ("report", ["report", str(s / "garbage_run"), "--out", str(s / "rep1"), "--groups", str(s / "groups.csv")]),
        ("compare", ["compare", str(s / "empty"), str(s / "garbage_run")]),
        ("compare", ["compare", str(s / "garbage_run"), str(s / "garbage_run"), "--json", str(s / "cmp.json")]),
        ("items", ["items", str(s / "empty"), "--out", str(s / "it1")]),
        ("items", ["items", str(s / "garbage_run"), "--out", str(s / "it1")]),
        ("correlate", ["correlate", str(s / "garbage_run"), "--scores", str(s / "missing.csv")]),
        ("correlate", ["correlate", str(s / "garbage_run"), "--scores", str(s / "groups.csv")]),
        ("hub-results", ["hub-results", str(s / "empty"), "--dataset", "org/x", "--out", str(s / "h1"), *src]),
        ("hub-results", ["hub-results", str(s / "garbage_run"), "--dataset", "org/x", "--out", str(s / "h1"), *src]),
        ("hub-results", ["hub-results", str(s / "garbage_run"), "--dataset", "no-slash", "--out", str(s / "h1")]),
        ("hub-results", ["hub-results", str(s / "empty"), "--dataset", "org/x", "--out", str(s / "h1")]),
        ("hub-results", ["hub-results", str(s / "empty"), "--dataset", "org/x", "--out", str(s / "h1"), "--create-pr"]),
        # mvlsib-build export
        ("export", ["export", "nope", "--release", rel, "--out", str(s / "x1")]),
        ("export", ["export", "lmms-eval", "--release", str(s / "empty"), "--out", str(s / "x1")]),
        ("export", ["export", "mteb", "--release", rel, "--out", str(s / "x1"), "--languages", "xx_Yyyy"]),
        ("export", ["export", "vlmevalkit", "--release", rel, "--out", str(s / "file.txt")]),
    ]


def test_every_command_is_walked(tmp_path):
    walked = {name for name, _ in _cases(tmp_path)}
    assert set(_commands(build_cli)) | set(_commands(eval_cli)) <= walked


# The cases are written against this stand-in for the scene folder (ids are made before the scene).
SCENE = Path("/walk-scene")
EVAL_NAMES = set(_commands(eval_cli))


def _params():
    seen: dict[str, int] = {}
    for name, args in _cases(SCENE):
        seen[name] = seen.get(name, 0) + 1
        yield pytest.param(name, args, id=f"{name} {seen[name]}")


@pytest.mark.parametrize(("name", "args"), list(_params()))
def test_a_bad_input_gives_one_message_and_changes_nothing(scene, monkeypatch, name, args):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    args = [a.replace(str(SCENE), str(scene)) for a in args]
    before = scene_state(scene)
    result = CliRunner().invoke(eval_cli if name in EVAL_NAMES else build_cli, args)
    refused(result, exit_codes=(1, 2), secret=SECRET, moved=changed(before, scene_state(scene)))


def test_full_disk_while_writing_is_a_message(tmp_path, sib_dir):
    """EFBIG (a file-size limit stands in for a full disk): one line, exit 2, no corpus left behind."""
    import resource
    import signal
    import subprocess
    import sys

    from support import subprocess_env

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # get EFBIG from write() instead of a signal
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))

    work = tmp_path / "w"
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "mvlsib",
            "ingest",
            "--sib",
            str(sib_dir),
            "--languages",
            "eng_Latn,fra_Latn",
            "--workdir",
            str(work),
            "--no-progress",
        ],
        preexec_fn=limit,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert "file too large" in res.stderr and "corpus.parquet" in res.stderr
    assert not (work / "corpus.parquet").exists()
    assert [p.name for p in work.iterdir()] == [] if work.exists() else True
