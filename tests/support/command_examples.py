"""Every command example of README.md, docs/**/*.md and the CLIs' --help texts, run as written.

Examples are found mechanically: each line of a Markdown code block (markdown-it-py) and of a
command's help text (the click tree of both CLIs) that starts with ``mvlsib-build``,
``mvlsib-eval`` or ``python evaluate.py``, after joining ``\\`` continuations, dropping a ``$ ``
prompt, splitting ``&&`` and ignoring ``# comments``. A new example is picked up without editing
this file; it must either run (exit 0, or its documented status in ``STATUS``) or be listed in
``NOT_RUN`` with a reason, or ``test_every_example_is_run_or_listed`` fails.

Placeholders are replaced through ``PLACEHOLDERS`` alone (the value after ``--out`` is an output
and stays relative to the example's own empty folder). Inputs are real: the SIB-200 copy in
../shared (199 languages), the two-language release and the full work folder built once per
session, a complete served run, the fake OpenAI-compatible server and the Hub stand-in on
127.0.0.1. Runs of the hf backend (torch) belong to the eval session and use the tiny LLaVA.
"""

from __future__ import annotations

import glob
import json
import re
import shlex
import shutil
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

import click
import pytest
from markdown_it import MarkdownIt

from mvlsib.cli import build_cli, eval_cli
from support import REPO, SIB_DIR, subprocess_env

PROGRAMS = ("mvlsib-build", "mvlsib-eval", "python evaluate.py")
START = re.compile(r"^(mvlsib-build|mvlsib-eval|python evaluate\.py)(\s|$)")
NON_SHELL_BLOCKS = {"python", "json", "yaml", "csv", "text"}

# token -> what replaces it: "sib:REST" a path in ../shared/sib-200; a resource name (see Example.resource).
PLACEHOLDERS = {
    "../shared/sib-200": "sib:",
    "../shared/sib-200/data/nko_flores": "sib:data/nko_flores",
    "../shared/sib-200/data/eng": "sib:data/eng",
    "release": "release",  # the two-language release (session)
    "/tmp/rel": "release",
    "RELEASE": "release",
    "DIR": "release",
    "work": "workdir",  # a copy of the full work folder (all 199 languages)
    "/tmp/w": "workdir",
    "WORK": "workdir",
    "W": "workdir",
    "/tmp/broken": "broken",  # the same, with one instance broken (validate's documented failure)
    "/tmp/n": "scratch",  # a fresh folder per example: never the machine's shared /tmp/n
    "RUN": "run",  # copies of a complete served run (t2s, k=1, both languages)
    "runs/A": "run",
    "runs/B": "run",
    "runs/llava": "run",
    "runs/qwen": "run",
    "runs/my-vlm": "run",
    "runs/tiny": "run",
    "tiers.csv": "tiers",  # a language,group CSV
    "http://localhost:8000/v1": "server",  # the fake OpenAI-compatible server
    "http://127.0.0.1:8000/v1": "server",
    "5503434d...": "sha",  # the dataset's commit on the Hub stand-in
    "SHA": "sha",
    "Qwen/Qwen2.5-VL-7B-Instruct": "hf-model",  # with the hf backend: the tiny LLaVA
    "MODEL": "hf-model",
    "llava-hf/llava-1.5-7b-hf": "hf-model",
    "tiny-llava": "hf-model",  # the README's tools/tiny_verify_models.py model: the same tiny LLaVA
    "ORG/NAME": "repo:my-org/mvl-sib",  # a Hub repo id: a repo on the Hub stand-in
}
# Hub repos the examples name, present on the stand-in: my-org/mvl-sib (the release, tag v1.0),
# Davlan/sib200 (three real languages in the Hub layout), some-org/my-vlm (a model repo).
HUB_LANGUAGES = ("eng_Latn", "fra_Latn", "zul_Latn")
# Runs as written evaluate the whole release (60,240 prompts for two languages): they run with
# these selections added, each only when the example does not choose it itself.
NARROW = (("--tasks", "t2s"), ("--k", "1"), ("--limit", "2"))
NARROWED = ("mvlsib-eval run", "python evaluate.py", "mvlsib-eval batch prepare")

# Examples deliberately not run, by "FILE: command" (the command as extracted, comments dropped),
# so that an edit elsewhere in the file does not orphan an entry: reason.
NOT_RUN = {
    "docs/contributing/backend.md: mvlsib-eval run --backend mine --model M --release RELEASE --limit 5 --out /tmp/run":
        "the backend `mine` is the one the guide has you write",
    "docs/contributing/task.md: mvlsib-eval run --release RELEASE --model MODEL --tasks NEWTASK --k 1 --limit 5 "
    "--out /tmp/run": "the task NEWTASK is the one the guide has you add",
    "docs/evaluation/run.md: mvlsib-eval merge RUN [MORE_FOLDERS...] --out RUN":
        "needs a sharded run (predictions.shard-I-of-N.jsonl); no fixture stages one yet",
    "docs/evaluation/scale.md: mvlsib-eval merge runs/qwen --out runs/qwen":
        "merges the shards sbatch ran; needs a sharded run, no fixture stages one yet",
    "docs/release.md: mvlsib-build publish --release /tmp/rel --repo-id my-org/mvl-sib --tag v1.0":
        "an upload needs a non-demo pool; ../shared/topic-photos fails validation (source_url with spaces in 8 rows)",
    "docs/verify_images.md: mvlsib-build verify-images --pool src/mvlsib/data/image_pool --model "
    "llava-hf/llava-1.5-7b-hf --model google/siglip-so400m-patch14-384 --out mvlsib-work/verify-images":
        "needs a dual encoder (SigLIP) beside the generative model; the tiny-model version is below",
    "docs/verify_images.md: mvlsib-build verify-images --pool src/mvlsib/data/image_pool --model /tmp/tiny-llava "
    "--model /tmp/tiny-clip --device cpu --out /tmp/v --allow-fail":
        "needs tools/tiny_verify_models.py's tiny LLaVA and fitted CLIP first (tests/verify_images runs them)",
}  # fmt: skip
# Documented exit statuses other than 0, by the same key.
STATUS = {"docs/validation.md: mvlsib-build validate --workdir /tmp/broken": 1}  # "2 violation(s)": checks failed


def listing_key(where: str, command: str) -> str:
    """How NOT_RUN and STATUS name an example: its file and its command, spaces folded, comment dropped."""
    text = " ".join(command.split("#")[0].split()) if "#" in command else " ".join(command.split())
    return f"{where.rsplit(':', 1)[0]}: {text}"


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(offset of the first physical line, line) with backslash continuations joined."""
    out, buf, start = [], "", 0
    for n, line in enumerate(text.splitlines()):
        if not buf:
            start = n
        if line.rstrip().endswith("\\"):
            buf += line.rstrip()[:-1] + " "
            continue
        out.append((start, buf + line))
        buf = ""
    if buf:
        out.append((start, buf))
    return out


def _commands(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("$ "):
        line = line[2:]
    return [part.strip() for part in line.split("&&") if START.match(part.strip())]


def markdown_examples() -> list[tuple[str, str]]:
    md = MarkdownIt("commonmark")
    found = []
    for path in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        rel = path.relative_to(REPO).as_posix()
        for token in md.parse(path.read_text("utf-8")):
            if token.type not in ("fence", "code_block") or token.info.strip() in NON_SHELL_BLOCKS:
                continue
            for offset, line in _logical_lines(token.content):
                for n, command in enumerate(_commands(line)):
                    # the block's content starts on the line after the fence
                    where = f"{rel}:{token.map[0] + 2 + offset}" + (f"+{n}" if n else "")
                    found.append((where, command))
    return found


def _walk(cmd: click.Command, path: list[str]):
    yield path, cmd
    if isinstance(cmd, click.Group):
        ctx = click.Context(cmd, info_name=path[-1])
        for name in cmd.list_commands(ctx):
            yield from _walk(cmd.get_command(ctx, name), [*path, name])


def help_examples() -> list[tuple[str, str]]:
    found = []
    for root, name in ((build_cli, "mvlsib-build"), (eval_cli, "mvlsib-eval")):
        for path, cmd in _walk(root, [name]):
            text = (cmd.help or "").replace("\b\n", "")
            for n, (_, line) in enumerate(_logical_lines(text)):
                for command in _commands(line):
                    found.append((f"help:{' '.join(path)}:{n}", command))
    return found


EXAMPLES = markdown_examples() + help_examples()


def _needs_torch(argv: list[str]) -> bool:
    """The hf backend (the default) of a run or verify-images needs the [eval] extra."""
    head = " ".join(argv[:2])
    uses_hf = (
        "openai" not in argv[argv.index("--backend") + 1 : argv.index("--backend") + 2] if "--backend" in argv else True
    )
    return uses_hf and (argv[0] == "python evaluate.py" or head in ("mvlsib-eval run", "mvlsib-build verify-images"))


def params(session: str) -> list:
    """The examples run in ``session`` (core or eval), one parameter each."""
    return [
        pytest.param(where, command, id=where)
        for where, command in EXAMPLES
        if listing_key(where, command) not in NOT_RUN
        and ("eval" if _needs_torch(_split(command)) else "core") == session
    ]


def _split(command: str) -> list[str]:
    # [optional parts]: kept when concrete, dropped when they hold a placeholder ("...", "N")
    def optional(m: re.Match) -> str:
        inner = m.group(1)
        return "" if re.search(r"\.\.\.|\bN\b|_FOLDERS", inner) else inner

    argv = shlex.split(re.sub(r"\[([^\]\[]*)\]", optional, command), comments=True)
    if argv[:2] == ["python", "evaluate.py"]:
        return ["python evaluate.py", *argv[2:]]
    return argv


def check_examples_are_found():
    wheres = [w for w, _ in EXAMPLES]
    assert len(wheres) == len(set(wheres)), wheres
    assert any(w.startswith("README.md") for w in wheres) and any(w.startswith("help:") for w in wheres)


def check_every_example_is_run_or_listed():
    """A listed example that no longer exists is a stale entry; every other example is collected."""
    keys = {listing_key(w, c): w for w, c in EXAMPLES}
    stale = sorted(set(NOT_RUN) - set(keys)) + sorted(set(STATUS) - set(keys))
    assert not stale, f"NOT_RUN/STATUS name examples that are gone: {stale}"
    ids = {p.id for session in ("core", "eval") for p in params(session)}
    assert ids | {keys[k] for k in NOT_RUN} == set(keys.values())


def _exe(name: str) -> str:
    return str(Path(sys.executable).parent / name)


class Example:
    """One example's folder, servers and resources, made on demand."""

    def __init__(self, request, tmp_path: Path, stack: ExitStack):
        self.request, self.tmp, self.stack = request, tmp_path, stack
        self.cwd = tmp_path / "cwd"
        self.cwd.mkdir()
        self.env = subprocess_env(OPENAI_API_KEY="sk-unused", HF_HOME=str(tmp_path / "hf-home"),
                                  HF_HUB_DISABLE_TELEMETRY="1", HF_HUB_DISABLE_XET="1", HF_TOKEN="hf_unused")  # fmt: skip
        self._cache: dict[str, str] = {}
        self.hf_backend = self.topics = self.uploads = self.hub_results = False

    def fixture(self, name: str):
        return self.request.getfixturevalue(name)

    def hub(self, publishing: bool = False):
        if "hub" not in self._cache:
            from support.fakes.hub import HubStandIn

            hub = self.stack.enter_context(HubStandIn("hf_unused"))
            commit = ""
            if not publishing:  # publish makes my-org/mvl-sib itself
                commit = hub.seed("my-org/mvl-sib", self.fixture("release_dir"))
                hub.state.repos["my-org/mvl-sib"].tags["v1.0"] = commit
            sib = self.tmp / "hub-sib"
            for lang in HUB_LANGUAGES:
                shutil.copytree(SIB_DIR / "data" / "annotated" / lang, sib / "data" / lang)
            hub.seed("Davlan/sib200", sib)
            hub.seed_model("some-org/my-vlm", {"README.md": b"# my-vlm\n"})
            self.env["HF_ENDPOINT"] = hub.endpoint
            self._cache["hub"] = commit
        return self._cache["hub"]

    def server(self) -> str:
        if "server" not in self._cache:
            from support.fakes.openai_compat import content_server, topic_server

            if self.topics:  # verify-images passes only on a server that looks at the images
                from mvlsib.verify_images.inputs import load_pool_images

                pool = {row.image_id: (row.topic, im) for row, im in load_pool_images(self.fixture("pool_dir"))}
                self._cache["server"] = self.stack.enter_context(topic_server(pool)).base_url
            else:
                self._cache["server"] = self.stack.enter_context(content_server()).base_url
        return self._cache["server"]

    def resource(self, kind: str, token: str) -> str:
        if kind.startswith("sib:"):
            return str(SIB_DIR / kind[4:]) if kind[4:] else str(SIB_DIR)
        if kind.startswith("repo:"):
            return kind[5:]
        if kind == "release":
            # an upload is refused for a demo-pool release: uploads get the one built on the photographs
            return str(self.fixture("photo_release" if self.uploads else "release_dir"))
        if kind in ("workdir", "broken"):
            dest = self.tmp / kind
            if not dest.exists():
                shutil.copytree(self.fixture("full_workdir"), dest)
                if kind == "broken":
                    _break_one_instance(dest / "instances.jsonl")
            return str(dest)
        if kind == "scratch":
            return str(self.tmp / "scratch" / token.strip("/").replace("/", "_"))
        if kind == "run":
            dest = self.cwd / token.strip("/")
            if not dest.exists():
                shutil.copytree(self.fixture("complete_run"), dest)
                if self.hub_results:  # the documented run was made on the Hub's my-org/mvl-sib (the same files)
                    config = json.loads((dest / "config.json").read_text("utf-8"))
                    config["fingerprint"]["data"] = "my-org/mvl-sib"
                    (dest / "config.json").write_text(json.dumps(config), encoding="utf-8")
            return token
        if kind == "tiers":
            (self.cwd / token).write_text("language,group\neng_Latn,high\narb_Arab,high\n", "utf-8")
            return token
        if kind == "server":
            return self.server()
        if kind == "sha":
            return self.hub()
        if kind == "hf-model":
            return str(self.fixture("tiny_llava")) if self.hf_backend else token
        raise AssertionError(kind)

    def argv(self, argv: list[str]) -> list[str]:
        self.hf_backend = _needs_torch(argv)
        self.topics = argv[1] == "verify-images"
        self.hub_results = argv[1] == "hub-results"
        publishing = argv[1] == "publish"
        self.uploads = publishing and "--repo-id" in argv and "--dry-run" not in argv
        self.hub(publishing)
        out = []
        for n, token in enumerate(argv):
            if n and argv[n - 1] == "--out":  # an output: inside this example's folder
                out.append(token.lstrip("/"))
                continue
            kind = PLACEHOLDERS.get(token)
            out.append(token if kind is None else self.resource(kind, token))
        head = argv[0] if argv[0] == "python evaluate.py" else " ".join(argv[:2])
        if head in NARROWED or argv[:3] == ["mvlsib-eval", "batch", "prepare"]:
            for option, value in NARROW:
                if option not in out:
                    out += [option, value]
        return out


def _break_one_instance(path: Path) -> None:
    """Put the instance's own topic among its negatives (what docs/validation.md shows failing)."""
    lines = path.read_text("utf-8").splitlines(keepends=True)
    first = json.loads(lines[0])
    first["neg_topics"][0] = first["topic"]
    lines[0] = json.dumps(first, ensure_ascii=False) + "\n"
    path.write_text("".join(lines), "utf-8")


def _setup_batch(ex: Example, argv: list[str]) -> None:
    """`batch collect batch/ results/*.jsonl`: the prepared folder and what a batch runner returned."""
    from support.fakes.batch_runner import run_batch

    server = ex.server()
    prep = subprocess.run(
        [_exe("mvlsib-eval"), "batch", "prepare", "--release", str(ex.fixture("release_dir")), "--model", "served",
         "--out", "batch", *[a for pair in NARROW for a in pair]],
        cwd=ex.cwd, env=ex.env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert prep.returncode == 0, prep.stderr[-3000:]
    for pattern in argv[argv.index("collect") + 2 : argv.index("--out")]:
        folder = ex.cwd / Path(pattern).parent
        folder.mkdir(parents=True, exist_ok=True)
        run_batch(sorted((ex.cwd / "batch").glob("requests-*.jsonl")), folder / "00001.jsonl", server)


def run_example(where: str, command: str, request, tmp_path: Path) -> None:
    """Run one example as written (placeholders substituted) and check its exit status."""
    argv = _split(command)
    with ExitStack() as stack:
        ex = Example(request, tmp_path, stack)
        if argv[:3] == ["mvlsib-eval", "batch", "collect"]:
            _setup_batch(ex, argv)
        argv = ex.argv(argv)
        expanded = []
        for token in argv:  # the shell's globbing, in the example's folder
            matches = sorted(glob.glob(token, root_dir=ex.cwd)) if any(c in token for c in "*?") else []
            expanded += matches or [token]
        cwd = ex.cwd
        if expanded[0] == "python evaluate.py":
            cwd = ex.cwd / "release"
            shutil.copytree(ex.fixture("release_dir"), cwd)
            expanded = [sys.executable, "evaluate.py", *expanded[1:]]
        else:
            expanded = [_exe(expanded[0]), *expanded[1:]]
        res = subprocess.run(expanded, cwd=cwd, env=ex.env, capture_output=True, text=True, timeout=600)
    expected = STATUS.get(listing_key(where, command), 0)
    assert res.returncode == expected, f"{where}: {shlex.join(expanded)}\n{res.stdout[-2000:]}\n{res.stderr[-4000:]}"
    assert "Traceback" not in res.stderr, res.stderr[-4000:]
