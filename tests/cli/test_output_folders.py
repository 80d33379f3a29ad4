"""Never destroy what we did not write: every command's output folder, planted with the user's files.

For every writer of an output folder (generated: writer x kind of foreign file), the command
must refuse with exit 2 naming the file, and leave the folder byte-identical; re-running into
its own earlier output must work (the ledger, or for a release its manifest, says what is ours).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from fnmatch import fnmatch
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import REPO, subprocess_env
from support.cli_contract import changed, problems, refused, scene_state
from support.cli_tree import NOT_OUTPUTS, output_params
from support.planted import copy_run

from mvlsib.atomic import LEDGER, staged_folder
from mvlsib.cli import build_cli, eval_cli

# The user's files, as they may sit in a folder someone points --out at.
FOREIGN = {
    "top-level file": ("notes.txt", b"my notes\n"),
    "nested file": ("chapter/thesis.tex", b"\\section{Mine}\n"),
    "hidden file": (".git/config", b"[core]\n"),
    "same name as an output": ("report.md", b"# my own report\n"),
    "empty file": ("keep.me", b""),
}


@pytest.fixture(scope="module")
def scene(tmp_path_factory, release_dir, pool_dir):
    from support.fakes.openai_compat import content_server

    s = tmp_path_factory.mktemp("outs")
    with content_server() as srv:
        for name, extra in (("runA", []), ("shards", ["--shard", "0/2"]), ("shards", ["--shard", "1/2"])):
            res = CliRunner().invoke(
                eval_cli,
                ["run", "--data", str(release_dir), "--model", "m", "--backend", "openai", "--base-url", srv.base_url,
                 "--out", str(s / name), "--limit", "2", "--languages", "eng_Latn", "--tasks", "s2t", "--k", "1",
                 "--no-progress", *extra],
            )  # fmt: skip
            assert res.exit_code == 0, res.output
        _batch(s, release_dir)
        yield s, release_dir, pool_dir, srv.base_url


def _batch(s: Path, release: Path) -> None:
    """A prepared batch (s/batch) and a results file answering every request (s/results.jsonl)."""
    import json

    res = CliRunner().invoke(eval_cli, ["batch", "prepare", "--data", str(release), "--model", "m", "--out",
                                        str(s / "batch"), "--limit", "2", "--languages", "eng_Latn", "--tasks",
                                        "s2t", "--k", "1", "--no-progress"])  # fmt: skip
    assert res.exit_code == 0, res.output
    lines = []
    for path in sorted((s / "batch").glob("requests-*.jsonl")):
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            body = {
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "A"}, "finish_reason": "stop"}]
            }
            answer = {"status_code": 200, "request_id": f"r{i}", "body": body}
            lines.append(json.dumps({"id": f"b{i}", "custom_id": json.loads(line)["custom_id"], "error": None,
                                     "response": answer}))  # fmt: skip
    (s / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _writers(s: Path, release: Path, pool: Path, url: str) -> dict[str, tuple]:
    """writer -> (cli, args with {out})."""
    return {
        "report": (eval_cli, ["report", str(s / "runA"), "--out", "{out}"]),
        "items": (eval_cli, ["items", str(s / "runA"), "--out", "{out}"]),
        "run": (eval_cli, ["run", "--data", str(release), "--model", "m", "--backend", "openai", "--base-url", url,
                           "--out", "{out}", "--limit", "1", "--languages", "eng_Latn", "--tasks", "s2t", "--k", "1",
                           "--no-progress"]),
        "merge": (eval_cli, ["merge", str(s / "shards"), "--out", "{out}"]),
        "batch prepare": (eval_cli, ["batch", "prepare", "--data", str(release), "--model", "m", "--out", "{out}",
                                     "--limit", "1", "--languages", "eng_Latn", "--tasks", "s2t", "--k", "1",
                                     "--no-progress"]),
        "batch collect": (eval_cli, ["batch", "collect", str(s / "batch"), str(s / "results.jsonl"), "--out", "{out}",
                                     "--no-progress"]),
        "export lmms-eval": (build_cli, ["export", "lmms-eval", "--release", str(release), "--out", "{out}",
                                         "--languages", "eng_Latn", "--tasks", "s2t", "--k", "1"]),
        "export vlmevalkit": (build_cli, ["export", "vlmevalkit", "--release", str(release), "--out", "{out}",
                                          "--languages", "eng_Latn", "--tasks", "s2t", "--k", "1"]),
        "export inspect": (build_cli, ["export", "inspect", "--release", str(release), "--out", "{out}",
                                       "--languages", "eng_Latn", "--tasks", "s2t", "--k", "1"]),
        "export mteb": (build_cli, ["export", "mteb", "--release", str(release), "--out", "{out}",
                                    "--languages", "eng_Latn"]),
        "images gallery": (build_cli, ["images", "gallery", "--pool", str(pool), "--out", "{out}"]),
        "verify-images": (build_cli, ["verify-images", "--model", "m", "--backend", "openai", "--base-url", url,
                                      "--rotations", "1", "--out", "{out}", "--allow-fail", "--no-progress"]),
    }  # fmt: skip


def _state(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


WRITERS = list(_writers(Path("."), Path("."), Path("."), "").keys())


@pytest.mark.parametrize("writer", WRITERS)
def test_refuses_folders_holding_the_users_files_and_replaces_its_own(scene, writer, tmp_path):
    s, release, pool, url = scene
    cli, args = _writers(s, release, pool, url)[writer]

    def invoke(out: Path):
        return CliRunner().invoke(cli, [a.replace("{out}", str(out)) for a in args])

    own = tmp_path / "own"
    first = invoke(own)
    assert first.exit_code == 0, first.output
    again = invoke(own)  # its own earlier output: replaced or resumed, never refused
    assert again.exit_code == 0, again.output
    failures = []
    for variant, (rel, data) in FOREIGN.items():
        for where, base in (("a new folder", None), ("its own earlier output", own)):
            out = tmp_path / f"{variant.replace(' ', '-')}-{where.split()[-1]}"
            if base is not None:
                shutil.copytree(base, out, symlinks=True)
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            (out / rel).write_bytes(data)
            before = scene_state(out)
            res = invoke(out)
            found = problems(res, rel, moved=changed(before, scene_state(out)))
            if found:
                failures.append(f"{variant} in {where}: {found}: {res.output.strip()[-200:]}")
    # Another command's output (a run folder, listed in its own ledger) is not this writer's to replace.
    if writer not in ("run", "merge", "batch collect"):
        other = tmp_path / "another-commands-output"
        shutil.copytree(s / "runA", other, symlinks=True)
        before = scene_state(other)
        res = invoke(other)
        found = problems(res, moved=changed(before, scene_state(other)))
        if found:
            failures.append(f"a run folder: {found}: {res.output.strip()[-200:]}")
    # Generated from what the writer itself wrote: a user's file of each of its output names, alone
    # in a folder (a metrics.json of their own where a run is pointed) is refused and kept.
    names = sorted(p.relative_to(own).as_posix() for p in own.rglob("*") if p.is_file() and p.name != LEDGER)
    for rel in [n for n in names if not n.endswith(".lock")][:12]:
        out = tmp_path / "named" / rel.replace("/", "_")
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(b"the user's own file\n")
        before = scene_state(out)
        res = invoke(out)
        found = problems(res, rel, moved=changed(before, scene_state(out)))
        if found:
            failures.append(f"a user's {rel} alone: {found}: {res.output.strip()[-200:]}")
    assert not failures, "\n".join(failures)


def test_publish_refuses_the_users_files_in_an_old_release(full_workdir, pool_dir, tmp_path):
    out = tmp_path / "rel"
    args = ["publish", "--workdir", str(full_workdir), "--pool", str(pool_dir), "--out", str(out), "--no-validate"]
    assert CliRunner().invoke(build_cli, args).exit_code == 0
    for rel, data in FOREIGN.values():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(data)
        refused(CliRunner().invoke(build_cli, args), rel)
        assert (out / rel).read_bytes() == data
        (out / rel).unlink()
    assert CliRunner().invoke(build_cli, args).exit_code == 0  # its own release again: replaced


@pytest.mark.parametrize("edited", ["README.md", "eval.yaml", "evaluate.py", "mvl_sib.py"])
def test_publish_and_build_refuse_to_replace_an_edited_file_of_the_old_release(
    full_workdir, pool_dir, sib_dir, release_dir, tmp_path, edited
):
    """The user's notes appended to the card are theirs: the manifest's hashes tell them from ours."""
    out = tmp_path / "rel"
    shutil.copytree(release_dir, out)
    (out / edited).write_bytes((out / edited).read_bytes() + b"\nMY NOTES\n")
    before = (out / edited).read_bytes()
    publish = ["publish", "--workdir", str(full_workdir), "--pool", str(pool_dir), "--out", str(out), "--no-validate"]
    build = ["build", "--sib", str(sib_dir), "--languages", "eng_Latn", "--out", str(out), "--no-progress"]
    for args in (publish, build):
        line = refused(CliRunner().invoke(build_cli, args), edited)
        assert "changed since the release was written" in line, line
        assert (out / edited).read_bytes() == before


def test_demo_pool_refuses_a_curated_pool_and_redraws_a_demo_one(tmp_path, pool_dir):
    curated = tmp_path / "curated"
    shutil.copytree(pool_dir, curated)
    manifest = curated / "manifest.csv"
    text = manifest.read_text(encoding="utf-8")
    # the same files, but one row now credits a real photographer: a curated pool, not ours
    lines = text.splitlines()
    lines[1] = lines[1].replace("https://github.com/mvlsib/mvlsib-build/blob/main/src/mvlsib/image_pool/demo.py",
                                "https://commons.wikimedia.org/wiki/File:Mine.jpg")  # fmt: skip
    manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = _state(curated)
    tool = [sys.executable, str(REPO / "tools" / "demo_pool.py"), "--no-progress", "--out"]
    res = subprocess.run([*tool, str(curated)], env=subprocess_env(), capture_output=True, text=True, timeout=300)
    assert res.returncode == 2 and "did not write" in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert _state(curated) == before
    demo = tmp_path / "demo"
    shutil.copytree(pool_dir, demo)
    res = subprocess.run([*tool, str(demo)], env=subprocess_env(), capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert _state(demo) == _state(pool_dir)  # redrawn byte-identically, no ledger added to package data


def test_a_killed_import_leaves_a_stage_that_the_next_run_removes(tmp_path):
    """import-release builds its pool in ``staged_folder``: the stage carries its writer's pid, and
    once that process is gone the next run removes it (a live writer's stage is kept)."""
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stage = tmp_path / f".pool.partial-{int(dead.stdout)}"
    (stage / "sports").mkdir(parents=True)
    (stage / "sports" / "sports_0.jpg").write_bytes(b"half")
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = tmp_path / f".pool.partial-{other.pid}"
        live.mkdir()
        with staged_folder(tmp_path / "pool", check=lambda out: None) as new:
            (new / "manifest.csv").write_text("image_id\n")
        assert not stage.exists() and live.exists()
        assert [p.name for p in (tmp_path / "pool").iterdir()] == ["manifest.csv"]
    finally:
        other.kill()
        other.wait()


def test_output_ledger_is_hidden_and_lists_what_was_written(scene, tmp_path):
    s, *_ = scene
    out = tmp_path / "rep"
    assert CliRunner().invoke(eval_cli, ["report", str(s / "runA"), "--out", str(out)]).exit_code == 0
    import json

    listed = set(json.loads((out / LEDGER).read_text())["files"])  # names -> sha256
    assert listed == {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and p.name != LEDGER}


# A run folder's own state: a killed run resumes from it, so `run` and `merge` accept these whatever
# they hold (predictions are then checked line by line by the validated reader; metrics recomputed).
RUN_STATE = ("predictions*.jsonl", "config*.json", "metrics*.json", ".run*.lock")


def _ledger_files(folder: Path) -> list[str]:
    import json

    if not (folder / LEDGER).exists():  # a batch folder: its manifest lists what prepare wrote
        return sorted(f["name"] for f in json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["files"])
    return sorted(json.loads((folder / LEDGER).read_text(encoding="utf-8"))["files"])


@pytest.mark.parametrize("writer", WRITERS)
def test_an_edited_earlier_output_is_refused_and_kept(scene, writer, tmp_path):
    """The user opened one of the command's own outputs and changed it: the next run refuses, the edit stays."""
    s, release, pool, url = scene
    cli, args = _writers(s, release, pool, url)[writer]
    out = tmp_path / "own"
    first = CliRunner().invoke(cli, [a.replace("{out}", str(out)) for a in args])
    assert first.exit_code == 0, first.output
    # every file it wrote, edited in turn (appending keeps JSON Lines / CSV / Markdown files plausible)
    for rel in _ledger_files(out):
        path = out / rel
        if (
            path.is_symlink()
            or not path.is_file()
            or (writer in ("run", "merge", "batch collect") and any(fnmatch(rel, p) for p in RUN_STATE))
        ):
            continue
        original = path.read_bytes()
        path.write_bytes(original + b"\n% edited by hand\n")
        before = _state(out)
        res = CliRunner().invoke(cli, [a.replace("{out}", str(out)) for a in args])
        assert res.exit_code == 2 and rel in res.output and "Traceback" not in res.output, (rel, res.output)
        assert _state(out) == before, rel
        path.write_bytes(original)  # as it wrote it: accepted again
    again = CliRunner().invoke(cli, [a.replace("{out}", str(out)) for a in args])
    assert again.exit_code == 0, again.output


# Writers into folders others write in too (a work folder, a model repo's .eval_results/, the folder a
# script goes to): files of other names are never touched; a file of one of their names that the
# user placed, or one of their earlier outputs the user edited, is refused and kept.
def _shared_writers(sib: Path, pool: Path, runs: Path) -> dict[str, tuple]:
    """writer -> (how to run it into folder F, the names it writes there)."""
    from mvlsib.evaluation.hub import results as hub_results

    def cli(tool, *args):
        def run(folder: Path):
            res = CliRunner().invoke(tool, [str(a).replace("{F}", str(folder)) for a in args])
            return res.exit_code, res.output

        return run

    def hub(folder: Path):
        entries = {"mvl-sib_s2t_k1.yaml": [{"dataset": {"id": "org/mvl-sib", "task_id": "s2t_k1"}, "value": 0.5}]}
        try:
            hub_results.write(folder.parent, runs, entries, "org/mvl-sib")
        except Exception as exc:  # the command's boundary prints an MvlsibError and exits 2
            from mvlsib.errors import MvlsibError

            assert isinstance(exc, MvlsibError), repr(exc)
            return 2, str(exc)
        return 0, ""

    langs = "eng_Latn,fra_Latn"
    return {
        "ingest --workdir": (
            cli(build_cli, "ingest", "--sib", sib, "--languages", langs, "--workdir", "{F}", "--no-progress"),
            ["corpus.parquet", "ingest_report.json"],
        ),
        "build --workdir": (
            cli(build_cli, "build", "--sib", sib, "--languages", langs, "--workdir", "{F}", "--pool", pool,
                "--out", "{F}/../rel", "--no-progress"),
            ["corpus.parquet", "ingest_report.json", "instances.jsonl", "sample_report.json"],
        ),
        "plan --script": (
            cli(eval_cli, "plan", "--data", runs.parent / "release", "--model", "m", "--gpus", "2",
                "--script", "{F}/array.sh", "--no-progress"),
            ["array.sh"],
        ),
        "hub-results --out": (hub, ["mvl-sib_s2t_k1.yaml", "mvl-sib_run_config.json"]),
    }  # fmt: skip


SHARED = ["ingest --workdir", "build --workdir", "plan --script", "hub-results --out"]

# Folder options tested elsewhere, each with where and why.
ELSEWHERE = {
    "build --out": "a release folder: its manifest says what is ours (test_publish_refuses_the_users_files_*)",
    "publish --out": "a release folder: its manifest says what is ours (test_publish_refuses_the_users_files_*)",
    "publish --workdir": "read, not written: test_publish_work_inputs.py",
    "validate --workdir": "read, not written: test_validate_*",
    "sample --workdir": "a work folder, as ingest's (tests/workdir/test_work_folder_lock.py)",
    "plan --out": "names the run folder the script will write; plan writes nothing there",
}


def test_every_folder_a_command_writes_is_planted_here():
    """Walked from both command trees: a new command with an output folder is planted by the tests
    above, or says here where it is."""
    import click
    from support.cli_tree import commands

    from mvlsib import params

    covered = {f"{w} --out" for w in WRITERS} | {f"{w.split()[0]} --out" for w in WRITERS} | set(SHARED)
    covered |= set(ELSEWHERE)
    missing = []
    for where, cmd in commands():
        for p in cmd.params:
            if isinstance(p, click.Option) and p.opts[0] in ("--out", "--workdir"):
                if isinstance(p.type, params.OutputFile):
                    continue
                name = f"{where.split(' ', 1)[1]} {p.opts[0]}"
                if name not in covered:
                    missing.append(name)
    assert not missing, f"output folders no test plants: {missing}"


@pytest.mark.parametrize("writer", SHARED)
def test_writers_into_shared_folders_never_replace_the_users_files(writer, sib_dir, pool_dir, release_dir, tmp_path):
    from support.planted import planted_records, write_run

    shutil.copytree(release_dir, tmp_path / "release")
    run = write_run(tmp_path / "run", planted_records(0.5, n=4))
    invoke, names = _shared_writers(sib_dir, pool_dir, run)[writer]
    folder = tmp_path / "shared" / ".eval_results" if writer == "hub-results --out" else tmp_path / "shared"
    folder.mkdir(parents=True)
    (folder / "notes.txt").write_bytes(b"mine\n")  # another name: left alone, the command runs
    code, output = invoke(folder)
    assert code == 0, output
    assert (folder / "notes.txt").read_bytes() == b"mine\n"
    assert sorted(n for n in names if (folder / n).exists()) == sorted(names)
    code, output = invoke(folder)  # its own earlier output: replaced
    assert code == 0, output
    for name in names:
        for how in ("placed", "edited"):
            path = folder / name
            original = path.read_bytes()
            if how == "placed":
                path.unlink()
                path.write_bytes(b"the user's own file\n")
            else:
                path.write_bytes(original + b"\n")
            before = _state(folder)
            code, output = invoke(folder)
            assert code == 2 and name in output and "Traceback" not in output, (name, how, output)
            assert _state(folder) == before, (name, how)
            path.write_bytes(original)
    code, output = invoke(folder)
    assert code == 0, output


def _file_writers(s: Path, release: Path, pool: Path, workdir: Path) -> dict[tuple[str, str], tuple]:
    """(command, option) -> (cli, args with {file}): each command that writes a single file on request."""
    scores = s / "scores.csv"
    scores.write_text("model,benchmark,score\nrunA,mmmu,0.5\nrunB,mmmu,0.4\nrunC,mmmu,0.3\n", encoding="utf-8")
    for copy in ("runB", "runC"):
        if not (s / copy).exists():
            copy_run(s / "runA", s / copy, model=copy)
    runs = [str(s / name) for name in ("runA", "runB", "runC")]
    return {
        ("mvlsib-eval compare", "--json"): (eval_cli, ["compare", runs[0], runs[1], "--json", "{file}"]),
        ("mvlsib-eval correlate", "--out"): (eval_cli, ["correlate", *runs, "--scores", str(scores), "--out", "{file}"]),
        ("mvlsib-eval plan", "--script"): (eval_cli, ["plan", "--data", str(release), "--languages", "eng_Latn",
                                                      "--limit", "2", "--gpus", "2", "--no-progress", "--script", "{file}"]),
        ("mvlsib-build validate", "--json"): (build_cli, ["validate", "--workdir", str(workdir), "--pool", str(pool),
                                                          "--no-progress", "--json", "{file}"]),
        ("mvlsib-build images check", "--json"): (build_cli, ["images", "check", "--pool", str(pool), "--no-progress",
                                                              "--json", "{file}"]),
        ("mvlsib-build images credits", "--out"): (build_cli, ["images", "credits", "--pool", str(pool), "--out", "{file}"]),
    }  # fmt: skip


FILE_WRITERS = sorted((where, p.opts[0]) for where, p in output_params() if (where, p.opts[0]) not in NOT_OUTPUTS)


@pytest.mark.parametrize("writer", FILE_WRITERS, ids=" ".join)
def test_a_file_output_refuses_the_users_file_and_replaces_its_own(scene, full_workdir, writer, tmp_path):
    """Generated from the command trees: every option naming a file a command writes. The user's file
    of that name (beside other files of theirs) is refused, exit 2 naming it, before any work, and kept
    byte for byte; the command's own earlier file is replaced; an edited one is refused again."""
    s, release, pool, _url = scene
    table = _file_writers(s, release, pool, full_workdir)
    assert writer in table, f"{writer}: a new file output; add how to run it to _file_writers"
    cli, args = table[writer]
    target = tmp_path / "out.file"

    def invoke():
        return CliRunner().invoke(cli, [a.replace("{file}", str(target)) for a in args])

    for data in (b"the user's own file\n", b""):
        target.write_bytes(data)
        (tmp_path / "notes.txt").write_text("mine")
        before = scene_state(tmp_path)
        res = invoke()
        found = problems(res, target.name, one_line=False, moved=changed(before, scene_state(tmp_path)))
        assert not found, (found, res.output[-400:])
        target.unlink()
    first = invoke()
    assert first.exit_code in (0, 1) and target.is_file(), first.output  # validate/check: 1 = findings
    again = invoke()  # its own file: replaced
    assert again.exit_code == first.exit_code and target.is_file(), again.output
    # a file another command wrote (a run's metrics.json, in the run's ledger) is not this one's either
    theirs = tmp_path / "run"
    shutil.copytree(s / "runA", theirs, symlinks=True)
    kept = (theirs / "metrics.json").read_bytes()
    other = CliRunner().invoke(cli, [a.replace("{file}", str(theirs / "metrics.json")) for a in args])
    assert other.exit_code == 2 and (theirs / "metrics.json").read_bytes() == kept, other.output
    target.write_bytes(target.read_bytes() + b"\n# my edit\n")
    edited = target.read_bytes()
    res = invoke()
    assert res.exit_code == 2 and target.read_bytes() == edited, res.output
    assert (tmp_path / "notes.txt").read_text() == "mine"


# ---------------------------------------------------------------- a folder named through a symlinked parent


def _folder_options() -> list[tuple[str, str]]:
    """(command, option) of every folder a command may create, walked from both command trees."""
    import click
    from support.cli_tree import commands

    return sorted(
        (where, p.opts[0])
        for where, cmd in commands()
        for p in cmd.params
        if isinstance(p.type, click.Path) and p.type.dir_okay and not p.type.file_okay and not p.type.exists
    )


# (command, option) -> why the walk below does not run it
NOT_WALKED = {
    ("mvlsib-eval batch collect", "--out"): "needs a model's batch results; its lock is `replacing`, as export's is",
    ("mvlsib-eval plan", "--out"): "the run folder its script will write: named in the script, nothing made now",
}


def _through_link(scene, full_workdir, sib, photos: Path, base: Path) -> dict[tuple[str, str], tuple]:
    """(command, option) -> (cli, args with {F} for the folder, folders to copy into F first)."""
    s, release, pool, url = scene
    writers = _writers(s, release, pool, url)
    photo = next(p for p in sorted((photos / "sports").iterdir()) if p.suffix == ".jpg")
    up = base / "up" / "data" / "images" / "sib200"
    up.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(photo, up / "sports_1.jpg")
    (base / "lic.csv").write_text("file,license,author,source_url\nsports_1.jpg,CC0-1.0,A,https://example.org/a\n")
    langs = ["--languages", "eng_Latn,fra_Latn"]
    work = ["--workdir", "{F}"]
    done = {
        ("mvlsib-build build", "--out"): (build_cli, ["build", "--sib", sib, *langs, "--out", "{F}", "--no-progress"]),
        ("mvlsib-build build", "--workdir"): (
            build_cli, ["build", "--sib", sib, *langs, *work, "--pool", pool, "--out", f"{base}/rel", "--no-progress"]),
        ("mvlsib-build ingest", "--workdir"): (build_cli, ["ingest", "--sib", sib, *langs, *work, "--no-progress"]),
        ("mvlsib-build sample", "--workdir"): (build_cli, ["sample", *work, "--pool", pool, "--no-progress"],
                                                full_workdir),
        ("mvlsib-build validate", "--workdir"): (build_cli, ["validate", *work, "--pool", pool], full_workdir),
        ("mvlsib-build publish", "--workdir"): (
            build_cli, ["publish", *work, "--pool", pool, "--out", f"{base}/rel2", "--no-validate"], full_workdir),
        ("mvlsib-build publish", "--out"): (
            build_cli, ["publish", "--workdir", full_workdir, "--pool", pool, "--out", "{F}", "--no-validate"]),
        ("mvlsib-build export", "--out"): writers["export mteb"],
        ("mvlsib-build images add", "--pool"): (
            build_cli, ["images", "add", photo, "--pool", "{F}", "--topic", "sports", "--license", "CC0-1.0"]),
        ("mvlsib-build images import-release", "--pool"): (
            build_cli, ["images", "import-release", base / "up", "--licences", base / "lic.csv", "--pool", "{F}",
                        "--no-progress"]),
        ("mvlsib-build images gallery", "--out"): writers["images gallery"],
        ("mvlsib-build verify-images", "--out"): writers["verify-images"],
        ("mvlsib-eval batch prepare", "--out"): (
            eval_cli, ["batch", "prepare", "--model", "m", "--data", release, "--languages", "eng_Latn", "--tasks",
                       "s2t", "--k", "1", "--out", "{F}", "--no-progress"]),
        ("mvlsib-eval hub-results", "--out"): (
            eval_cli, ["hub-results", s / "runA", "--release", "org/mvl-sib", "--source-url", "https://example.org/run", "--force",
                       "--other-release", "--out", "{F}"]),
        **{("mvlsib-eval " + w, "--out"): writers[w] for w in ("items", "merge", "report", "run")},
    }  # fmt: skip
    return {k: (v[0], [str(a).replace("{out}", "{F}") for a in v[1]], *v[2:]) for k, v in done.items()}


FOLDER_OPTIONS = [k for k in _folder_options() if k not in NOT_WALKED]


def test_every_folder_option_is_walked(scene, sib_dir, topic_photos_dir, tmp_path):
    """A command given an output folder later is added to the walk below (or to NOT_WALKED, with why)."""
    walked = set(_through_link(scene, tmp_path, sib_dir, topic_photos_dir, tmp_path))
    assert set(FOLDER_OPTIONS) == walked, set(FOLDER_OPTIONS) ^ walked


@pytest.mark.parametrize("where", FOLDER_OPTIONS, ids=" ".join)
def test_a_folder_named_through_a_symlinked_parent_is_written(
    where, scene, full_workdir, sib_dir, topic_photos_dir, tmp_path
):
    """``linked/F`` with ``linked`` a link to ``real``: every lock is keyed by the real path, so the
    command never takes its own lock (taken by one spelling, asked for by another) for another's, and
    ``real/F`` is what it writes; no lock file is left behind."""
    (tmp_path / "real").mkdir()
    (tmp_path / "linked").symlink_to("real", target_is_directory=True)
    cli, args, *seed = _through_link(scene, full_workdir, sib_dir, topic_photos_dir, tmp_path)[where]
    if seed:
        shutil.copytree(seed[0], tmp_path / "real" / "F")
    res = CliRunner().invoke(cli, [a.replace("{F}", str(tmp_path / "linked" / "F")) for a in args])
    assert res.exit_code == 0, res.output[-2000:]
    assert (tmp_path / "real" / "F").is_dir() and any((tmp_path / "real" / "F").iterdir())
    locks_left = [p.name for folder in (tmp_path, tmp_path / "real") for p in folder.glob("*.lock")]
    assert not locks_left, locks_left
