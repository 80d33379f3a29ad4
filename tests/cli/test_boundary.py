"""The error boundary itself: every errno in words, secrets kept out of tracebacks, the bundled
evaluate.py under the same boundary (run as root without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH)."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import traceback
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from support import DROP_CAPS
from support.cli_contract import problems

from mvlsib import oserrors
from mvlsib.boundary import BoundaryGroup
from mvlsib.errors import MvlsibError

ERRNOS = sorted(errno.errorcode)


def _group(raise_it) -> click.Group:
    @click.group(cls=BoundaryGroup)
    def g():
        pass

    @g.group("sub")
    def sub():
        pass

    @sub.command("go")
    def go():
        raise_it()

    return g


@given(code=st.sampled_from(ERRNOS), path=st.text(min_size=1, max_size=40), with_name=st.booleans())
def test_every_oserror_is_one_line_exit_2_naming_the_path(code, path, with_name):
    exc = OSError(code, os.strerror(code), path) if with_name else OSError(code, os.strerror(code))

    def boom():
        raise exc

    res = CliRunner().invoke(_group(boom), ["sub", "go"])
    assert res.exit_code == 2 and res.exception is None or isinstance(res.exception, SystemExit)
    text = res.output.strip()
    assert text.startswith("Error: ") and len(text.splitlines()) == 1, text
    assert errno.errorcode[code] in text
    if with_name:
        assert oserrors._path_text(path) in text


@given(st.sampled_from([PermissionError, FileNotFoundError, IsADirectoryError, NotADirectoryError, OSError]))
def test_library_oserrors_without_a_filename_still_name_the_file(cls):
    # pyarrow puts the path into strerror and leaves filename empty
    exc = cls(errno.EACCES, "Failed to open local file '/data/x.parquet'. Detail: [errno 13] Permission denied")
    assert "/data/x.parquet" in oserrors.describe(exc) and "EACCES" in oserrors.describe(exc)


def test_symlink_loop_runtime_error_is_eloop():
    def boom():
        Path("/tmp").joinpath("x").resolve()  # cannot loop; plant the real message instead
        raise RuntimeError("Symlink loop from '/some/where'")

    res = CliRunner().invoke(_group(boom), ["sub", "go"])
    assert res.exit_code == 2 and "/some/where" in res.output and "ELOOP" in res.output


def test_mvlsib_error_keeps_its_message():
    def boom():
        raise MvlsibError("corpus.parquet: wrong schema; re-run ingest")

    res = CliRunner().invoke(_group(boom), ["sub", "go"])
    assert res.exit_code == 2 and res.output == "Error: corpus.parquet: wrong schema; re-run ingest\n"


SECRET_SHAPES = ["sk-live-{r}", "sk-live-{r}\n", "\tsk-live-{r}", "hf_{r}", "sk-{r}\r\n"]
LEAKS = [
    lambda s: ValueError(f"Invalid header value {('Bearer ' + s).encode()!r}"),
    lambda s: KeyError(s),
    lambda s: RuntimeError(f"token {s} refused"),
]


@given(
    shape=st.sampled_from(SECRET_SHAPES),
    r=st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=12, max_size=30),
    leak=st.sampled_from(LEAKS),
    chained=st.booleans(),
    var=st.sampled_from(["OPENAI_API_KEY", "HF_TOKEN", "MY_SERVICE_SECRET"]),
)
def test_a_bug_stays_a_traceback_but_never_shows_a_credential(shape, r, leak, chained, var):
    secret = shape.format(r=r)

    def boom():
        if chained:
            try:
                raise leak(secret)
            except Exception as exc:
                raise TypeError("while sending the request") from exc
        raise leak(secret)

    old = os.environ.get(var)
    os.environ[var] = secret
    try:
        res = CliRunner().invoke(_group(boom), ["sub", "go"])
    finally:
        os.environ.pop(var) if old is None else os.environ.__setitem__(var, old)
    assert res.exit_code == 1 and res.exception is not None  # a bug: not turned into a user error
    shown = "".join(traceback.format_exception(res.exception)) + res.output
    assert r not in shown, shown


@pytest.fixture(scope="module")
def bundled_release(tmp_path_factory, release_dir):
    root = tmp_path_factory.mktemp("bundled") / "rel"
    shutil.copytree(release_dir, root)
    for dirpath, _dirs, files in os.walk(root):
        os.chmod(dirpath, 0o755)
        for f in files:
            os.chmod(Path(dirpath) / f, 0o644)
    return root


def _evaluate(rel: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the release alone
    return subprocess.run(
        [*DROP_CAPS, sys.executable, "evaluate.py", *args], cwd=rel, env=env, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip


def _chmod_case(path: Path, mode: int):
    old = path.stat().st_mode & 0o7777
    os.chmod(path, mode)
    return lambda: os.chmod(path, old)


def test_bundled_evaluate_py_has_the_same_boundary(bundled_release, tmp_path):
    from support.fakes.openai_compat import content_server

    rel = bundled_release
    (tmp_path / "plain.txt").write_text("x")
    ro = tmp_path / "ro"
    ro.mkdir()
    run_args = ["--backend", "openai", "--model", "m", "--limit", "1", "--languages", "eng_Latn", "--tasks", "s2t",
                "--k", "1", "--no-progress"]  # fmt: skip
    with content_server() as srv:
        base = [*run_args, "--base-url", srv.base_url, "--data", "."]
        good = _evaluate(rel, *base, "--out", str(tmp_path / "good"))  # the control: the same run succeeds
        assert good.returncode == 0, good.stderr
        cases = [
            ("unreadable language file", rel / "data/eng_Latn/test.parquet", 0, [*base, "--out", str(tmp_path / "r1")]),
            ("unreadable images file", rel / "data/images/test.parquet", 0, [*base, "--out", str(tmp_path / "r2")]),
            ("unreadable manifest", rel / "manifest.json", 0, [*base, "--out", str(tmp_path / "r3")]),
            ("unreadable loader", rel / "mvl_sib.py", 0, [*base, "--out", str(tmp_path / "r4")]),
            ("unreadable evaluator module", rel / "mvlsib_evaluate/cli/eval/__init__.py", 0, ["--help"]),
            ("unreadable shared leaf", rel / "mvlsib_evaluate/oserrors.py", 0, ["--help"]),
            ("out in a read-only folder", ro, 0o555, [*base, "--out", str(ro / "run")]),
            ("out under a file", None, None, [*base, "--out", str(tmp_path / "plain.txt" / "run")]),
            ("out name too long", None, None, [*base, "--out", str(tmp_path / ("n" * 300))]),
            (
                "report out in a read-only folder",
                ro,
                0o555,
                ["report", str(tmp_path / "good"), "--out", str(ro / "rep")],
            ),
        ]
        failures = []
        for label, path, mode, args in cases:
            undo = _chmod_case(path, mode) if path is not None else (lambda: None)
            try:
                res = _evaluate(rel, *args)
            finally:
                undo()
            err = res.stderr.strip().splitlines()
            # --data . : a path inside the release may be named relative to it, as the user gave it
            named = {str(path), os.path.relpath(path, rel)} if path is not None else {str(tmp_path)}
            # the launcher's own line (an unreadable file of the package) comes before the boundary: no "Error:"
            found = problems(res, prefixed=False)
            if found or not any(n in err[-1] for n in named):
                failures.append(f"{label}: {found or 'path not named'}: {res.stderr.strip()[-300:]}")
    assert not failures, "\n".join(failures)
    # nothing left behind: no run folder, nothing in the read-only folder
    assert not [p for p in tmp_path.iterdir() if p.name in ("r1", "r2", "r3", "r4")] and not list(ro.iterdir())


GUARDED = r"""
import logging, sys
import click
from mvlsib.boundary import BoundaryGroup

log = logging.getLogger("huggingface_hub.utils._http")
log.addHandler(logging.StreamHandler(sys.stderr))  # a library's own handler, as huggingface_hub installs one
log.propagate = False

@click.group(cls=BoundaryGroup)
def g():
    pass

@g.command("go")
def go():
    log.warning("%r thrown while requesting HEAD %s", sys.argv[1], sys.argv[2])
    log.warning("token %s", sys.argv[3])

g(["go"])
"""


@pytest.mark.parametrize(
    "said",
    ["[Errno 111] Connection refused", "\x1b]0;owned\x07title", "line one\ncomplete: 100%", "\u202eevil\r\x9b2J"],
)
def test_library_log_records_reach_the_terminal_as_one_safe_line_without_credentials(said):
    """huggingface_hub's retry warnings name the URL (with HF_ENDPOINT's user:password@): every log
    record, through any library handler, is one line, controls shown, credentials removed."""
    url = "http://user:hunter2hunter2@127.0.0.1:9/datasets/o/n/resolve/main/README.md"
    res = subprocess.run(
        [sys.executable, "-c", GUARDED, said, url, "hf_abcdefghijklmnop"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "MY_API_KEY": "sk-proj-0123456789abcdef"},
    )
    assert res.returncode == 0, res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 2, lines
    assert "hunter2" not in res.stderr and "hf_abcdefghijklmnop" not in res.stderr
    assert "http://***@127.0.0.1:9/datasets/o/n/resolve/main/README.md" in lines[0]
    assert not any(c in res.stderr for c in "\x1b\x07\r\x9b\u202e"), res.stderr


def _chain(*links: BaseException) -> BaseException:
    """``links[0]`` raised while handling ``links[1]``, ... (the way libraries wrap a failure)."""
    for outer, inner in zip(links, links[1:]):
        outer.__cause__ = inner
    return links[0]


def _named(name: str, module: str, base: type = Exception) -> type:
    return type(name, (base,), {"__module__": module})


@pytest.mark.parametrize(
    ("make", "offline", "said"),
    [
        (lambda: _chain(OSError("We couldn't connect"), _named("ConnectError", "httpx2")("[Errno 111]")), "0", "reach"),
        (lambda: _chain(RuntimeError("x"), _named("ReadTimeout", "httpcore2._exceptions")("timed out")), "0", "reach"),
        (lambda: ConnectionError("Couldn't reach 'o/n' on the Hub (LocalEntryNotFoundError)"), "0", "reach"),
        (lambda: _named("LocalEntryNotFoundError", "huggingface_hub.errors", OSError)("not cached"), "0", "reach"),
        (lambda: _named("OfflineModeIsEnabled", "huggingface_hub.errors", ConnectionError)("offline"), "1", "offline"),
        (lambda: ConnectionError("Couldn't reach 'o/n' on the Hub (OfflineModeIsEnabled)"), "1", "offline"),
        (lambda: OSError(errno.ENOENT, "No such file or directory", "/x"), "0", None),
        (lambda: ValueError("bad"), "1", None),
        (lambda: _chain(KeyError("k"), TypeError("t")), "0", None),
    ],
)
def test_every_command_says_one_thing_when_the_hub_cannot_be_asked(make, offline, said, monkeypatch):
    """Whichever library met it (huggingface_hub, datasets, transformers, httpx2), a Hub that is
    offline or out of reach is one sentence: the endpoint without its password, what to do."""
    from mvlsib import hubio

    monkeypatch.setenv("HF_ENDPOINT", "http://user:hunter2hunter2@127.0.0.1:9")
    monkeypatch.setenv("HF_HUB_OFFLINE", offline)
    text = hubio.unreachable(make(), "--release o/n")
    if said is None:
        assert text is None
    elif said == "offline":
        assert text is not None and text.startswith("--release o/n: not in the local Hugging Face cache"), text
    else:
        assert text is not None and "cannot reach the Hugging Face Hub at http://127.0.0.1:9" in text, text
    assert "hunter2" not in (text or "")


def test_a_listed_error_keeps_its_lines_under_a_sub_group():
    """The boundary of ``images`` or ``batch`` and that of the top group meet: the list under an error
    stays one item a line (each made visible once), not one line of ``\\x0a``."""

    def boom():
        raise MvlsibError("relx: does not match its manifest", items=["README.md: changed", "evil\x1b]0;t\x07: gone"])

    res = CliRunner().invoke(_group(boom), ["sub", "go"])
    assert res.exit_code == 2, res.output
    lines = res.output.splitlines()
    assert lines[0] == "Error: relx: does not match its manifest" and len(lines) >= 3, lines
    assert "\\x0a" not in res.output and "\x1b" not in res.output and "\\x1b" in res.output


def test_the_release_loaders_own_errors_are_one_line():
    """mvl_sib.py ships alone (no MvlsibError there): its LoaderError still meets the boundary as bad input."""
    from mvlsib.release_format.mvl_sib import LoaderError

    def boom():
        raise LoaderError("rel/data/eng_Latn/test.parquet: not a readable parquet file; re-download it")

    res = CliRunner().invoke(_group(boom), ["sub", "go"])
    assert res.exit_code == 2 and res.output == (
        "Error: rel/data/eng_Latn/test.parquet: not a readable parquet file; re-download it\n"
    ), res.output
