"""A hostile Hub on 127.0.0.1 against every command that reads Hub answers: a table of answer shapes.

Each variant plants one fault in one endpoint the command calls (the Hub stand-in's hostile
modes, tests/support/fakes/hostile.py): whole answers that are no Hub answer (HTML, ``[]``, deep
nesting, 6,000-digit numbers, NaN, lone surrogates, ...), replies broken on the wire (cut short,
dripping bytes, silence, huge, redirects), and every path of the real answer given a value of
another JSON type (generated from the answers the stand-in really sends). The outcome must be
the command's normal result or one ``MvlsibError`` line naming the flag; never another
exception, never the token, never longer than the deadline.
"""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest
from support.fakes import hostile
from support.fakes.hub import HubStandIn, serve_folder

from mvlsib import hubio
from mvlsib.builder.ingest import ingest
from mvlsib.errors import MvlsibError
from mvlsib.workdir.corpus import save_corpus

TOKEN = "hf_HostileHubSecret_4d1c8e"
LANGS = ("eng_Latn", "fra_Latn")
REPO = "Davlan/sib200"
INFO = r"/api/datasets/[^/]+/[^/]+(?:/revision/[^/]+)?"
TREE = r"/api/datasets/[^/]+/[^/]+/tree/.*"
RESOLVE = r"/datasets/[^/]+/[^/]+/resolve/.*"
TIMEOUT = 1.5


@pytest.fixture(scope="module")
def hub_repo(tmp_path_factory, sib_dir):
    repo = tmp_path_factory.mktemp("hostile-hub") / "repo"
    for lang in LANGS:
        shutil.copytree(sib_dir / "data" / "annotated" / lang, repo / "data" / lang)
    return repo


@pytest.fixture(autouse=True)
def _short_deadline(monkeypatch):
    monkeypatch.setenv("MVLSIB_HUB_TIMEOUT", str(TIMEOUT))


def _ingest(hub, tmp: Path) -> bytes:
    """What `ingest --sib ORG/NAME` writes: the corpus file's bytes."""
    corpus = ingest(sib=REPO, endpoint=hub.endpoint, cache_dir=tmp / "cache", progress=False)
    save_corpus(tmp / "work", corpus)
    return (tmp / "work" / "corpus.parquet").read_bytes()


def _outcome(call, baseline, capsys) -> str:
    return hostile.outcome(call, baseline, capsys, TOKEN, 4 * TIMEOUT + 6)


@pytest.fixture(scope="module")
def ingest_baseline(hub_repo, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("baseline")
    with serve_folder(REPO, hub_repo) as hub:
        corpus = _ingest(hub, tmp)
        answers = dict(hub.state.answers)
    return corpus, answers


def _answer(answers: dict, pattern: str):
    return next(v for (m, p), v in answers.items() if m == "GET" and re.fullmatch(pattern, p))


@pytest.mark.parametrize("where", [INFO, TREE], ids=["info", "tree"])
@pytest.mark.parametrize("name", sorted(hostile.BODIES))
def test_ingest_against_hostile_bodies(where, name, hub_repo, ingest_baseline, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    with serve_folder(REPO, hub_repo, token=TOKEN) as hub:
        hub.state.hostile = [("GET", re.compile(where), hostile.body_fault(name))]
        outcome = _outcome(lambda: _ingest(hub, tmp_path), ingest_baseline[0], capsys)
        assert hub.state.hostile_hits >= 1
    assert outcome == "message", "a body that is no Hub answer was accepted"


@pytest.mark.parametrize("where", [INFO, TREE, RESOLVE], ids=["info", "tree", "resolve"])
@pytest.mark.parametrize(
    "name", ["truncated", "close-without-answer", "huge-content-length", "redirect-non-http", "redirect-elsewhere"]
)
def test_ingest_against_broken_replies(where, name, hub_repo, ingest_baseline, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    with serve_folder(REPO, hub_repo, token=TOKEN) as hub, HubStandIn("other") as elsewhere:
        fault = hostile.TRANSPORT(f"{elsewhere.endpoint}/steal")[name]
        hub.state.hostile = [("GET", re.compile(where), fault)]
        _outcome(lambda: _ingest(hub, tmp_path), ingest_baseline[0], capsys)
        assert hub.state.hostile_hits >= 1
        # a redirect to another origin never carries the token there
        assert all(TOKEN not in auth for auth in elsewhere.state.auth_seen)


@pytest.mark.parametrize("where", [INFO, TREE, RESOLVE], ids=["info", "tree", "resolve"])
@pytest.mark.parametrize("name", ["drip", "drip-headers", "silence"])
def test_ingest_deadline_is_per_request_not_per_read(
    where, name, hub_repo, ingest_baseline, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("MVLSIB_HUB_TIMEOUT", "1.0")
    faults = {"drip": hostile.drip(), "drip-headers": hostile.drip_headers(), "silence": hostile.silence()}
    with serve_folder(REPO, hub_repo) as hub:
        hub.state.hostile = [("GET", re.compile(where), faults[name])]
        start = time.monotonic()
        outcome = _outcome(lambda: _ingest(hub, tmp_path), ingest_baseline[0], capsys)
        elapsed = time.monotonic() - start
    assert outcome == "message"
    # one request's deadline (1 s) and the client's own retry of a dropped request, not 8 s of drip
    assert elapsed < 5.0, elapsed


@pytest.mark.usefixtures("ingest_baseline")
def test_ingest_huge_api_answer_is_cut(hub_repo, tmp_path, monkeypatch):
    monkeypatch.setattr(hubio, "MAX_API_BYTES", 200_000)
    with serve_folder(REPO, hub_repo) as hub:
        hub.state.hostile = [("GET", re.compile(INFO), hostile.huge(5_000_000))]
        with pytest.raises(MvlsibError, match="over the 200,000-byte limit"):
            _ingest(hub, tmp_path)


def _generated(answers, pattern):
    return list(hostile.wrong_types(_answer(answers, pattern)))


@pytest.mark.parametrize("where", [INFO, TREE], ids=["info", "tree"])
def test_ingest_against_every_wrong_type_at_every_level(where, hub_repo, ingest_baseline, tmp_path, capsys):
    baseline, answers = ingest_baseline
    variants = _generated(answers, where)
    assert len(variants) >= 25
    seen = {"ok": 0, "message": 0}
    with serve_folder(REPO, hub_repo) as hub:
        for i, (label, value) in enumerate(variants):
            hub.state.hostile = [("GET", re.compile(where), hostile.mutate(value))]
            folder = tmp_path / str(i)
            try:
                seen[_outcome(lambda folder=folder: _ingest(hub, folder), baseline, capsys)] += 1
            except AssertionError as exc:
                raise AssertionError(f"{where} {label}: {exc}") from None
    assert seen["message"] >= len(variants) // 2, seen


# ---------------------------------------------------------------- listings that never end


def test_ingest_against_a_tree_listing_that_pages_forever(hub_repo, tmp_path, capsys, monkeypatch):
    """`Link: next` on every page of the repo tree: the listing stops at hubio.MAX_PAGES, one line."""
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    with serve_folder(REPO, hub_repo, token=TOKEN) as hub:
        hub.state.hostile = [("GET", re.compile(TREE), hostile.endless_tree_pages())]
        outcome = _outcome(lambda: _ingest(hub, tmp_path), None, capsys)
        assert outcome == "message"
        assert hub.state.hostile_hits == hubio.MAX_PAGES + 1  # bounded, and not stopped early


def _open_pr(hub, tmp_path: Path) -> str:
    from mvlsib.evaluation.hub import results as hub_results

    entry = tmp_path / "mvl-sib_t2s_k1.yaml"
    entry.write_text("- value: 0.5\n", encoding="utf-8")
    return hub_results.open_pr("org/model", [entry], "org/mvl-sib", token=TOKEN, endpoint=hub.endpoint)


@pytest.mark.parametrize("per_page", [0, 50], ids=["empty-pages", "full-pages"])
def test_hub_results_against_discussions_that_page_forever(per_page, tmp_path, capsys):
    """`count` always beyond what came: huggingface_hub would ask for the next page forever."""
    with HubStandIn(TOKEN) as hub:
        hub.seed_model("org/model", {"README.md": b"# m\n"})
        hub.state.hostile = [
            ("GET", re.compile(r"/api/models/org/model/discussions"), hostile.endless_discussions(per_page))
        ]
        with pytest.raises(MvlsibError) as err:
            _open_pr(hub, tmp_path)
        assert hub.state.hostile_hits == hubio.MAX_PAGES + 1
    message = str(err.value)
    assert "\n" not in message and "--model-repo org/model" in message and "pages" in message, message
    assert TOKEN not in message + capsys.readouterr().err


def test_hub_results_against_too_many_discussion_items(tmp_path, monkeypatch):
    """The item bound too: pages of 100 items stop once MAX_ITEMS are listed, before MAX_PAGES."""
    monkeypatch.setattr(hubio, "MAX_ITEMS", 500)
    with HubStandIn(TOKEN) as hub:
        hub.seed_model("org/model", {"README.md": b"# m\n"})
        hub.state.hostile = [
            ("GET", re.compile(r"/api/models/org/model/discussions"), hostile.endless_discussions(100))
        ]
        with pytest.raises(MvlsibError, match="items"):
            _open_pr(hub, tmp_path)
        assert hub.state.hostile_hits == 6


def test_a_wrongly_typed_discussion_listing_is_one_line(tmp_path):
    with HubStandIn(TOKEN) as hub:
        hub.seed_model("org/model", {"README.md": b"# m\n"})
        bad = {"count": "many", "start": 0, "discussions": [{"num": 1}]}
        hub.state.hostile = [("GET", re.compile(r"/api/models/org/model/discussions"), hostile.mutate(bad))]
        with pytest.raises(MvlsibError, match="count") as err:
            _open_pr(hub, tmp_path)
    assert "\n" not in str(err.value)
