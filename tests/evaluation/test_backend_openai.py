"""The openai backend end to end against a local OpenAI-compatible server."""

from __future__ import annotations

import base64
import io
import json

import pytest
from click.testing import CliRunner
from support.fakes.openai_compat import ANSWERS, images_of, lettered_server, text_of

from mvlsib.cli import eval_cli
from mvlsib.errors import MvlsibError
from mvlsib.evaluation.backends import Request, make_backend
from mvlsib.evaluation.run.parsing import parse_letter
from mvlsib.evaluation.run.prompts import build_prompt

SECRET = "sk-test-5e5e5e-do-not-print"


def test_run_against_local_server(release_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    out = tmp_path / "run"
    with lettered_server(fail_every=3) as server:
        result = CliRunner().invoke(
            eval_cli,
            [
                "run",
                "--backend",
                "openai",
                "--base-url",
                server.base_url,
                "--model",
                "served-vlm",
                "--data",
                str(release_dir),
                "--tasks",
                "i2s,s2i",
                "--k",
                "3",
                "--languages",
                "eng_Latn",
                "--limit",
                "6",
                "--out",
                str(out),
                "--concurrency",
                "3",
                "--retry-backoff",
                "0.01",
                "--no-progress",
            ],
        )
        assert result.exit_code == 0, result.output
        assert server.failures >= 3, "the server must have refused some requests (429/503)"
    # every refused request was retried: 12 answered requests, one per prediction
    assert len(server.requests) == 12
    by_task = {"i2s": [], "s2i": []}
    for payload in server.requests:
        assert payload["model"] == "served-vlm" and payload["temperature"] == 0
        task = "s2i" if "Which image" in text_of(payload) else "i2s"
        by_task[task].append(payload)
    assert len(by_task["i2s"]) == len(by_task["s2i"]) == 6
    assert all(len(images_of(p)) == 3 for p in by_task["i2s"])  # k=3 reference images
    assert all(len(images_of(p)) == 4 for p in by_task["s2i"])  # 4 image options
    assert all(im.size[0] > 0 for p in by_task["s2i"] for im in images_of(p))
    assert set(server.auth_headers) == {f"Bearer {SECRET}"}

    preds = [json.loads(line) for line in (out / "predictions.jsonl").read_text("utf-8").splitlines()]
    assert len(preds) == 12
    expected = dict(ANSWERS)
    assert {p["response"] for p in preds} <= set(expected)
    for p in preds:
        assert p["letter"] == expected[p["response"]]
        assert p["correct"] == (p["letter"] == "ABCD"[p["label"]])
    metrics = json.loads((out / "metrics.json").read_text("utf-8"))
    n_fe = sum(p["letter"] is None for p in preds)
    fe = sum(c["format_error_rate"] * c["n"] for c in metrics["per_language"])
    assert fe == pytest.approx(n_fe)
    # the key never leaves the Authorization header
    for f in out.iterdir():
        assert SECRET not in f.read_text("utf-8"), f
    assert SECRET not in result.output


def test_gives_up_with_a_clear_message():
    with lettered_server(fail_every=1) as server:  # refuses everything
        backend = make_backend("openai", model="m", base_url=server.base_url, max_retries=2, backoff=0.001)
        backend.set_images({})
        p = build_prompt("s2t", ["A sentence."], ["sports", "travel", "health", "politics"])
        with pytest.raises(MvlsibError, match="giving up after 3 attempts; last error: HTTP (429|503)"):
            backend.generate([Request("k", tuple(p.messages()))])
        backend.close()


def test_client_errors_are_not_retried():
    with lettered_server(fail_every=0) as server:
        backend = make_backend("openai", model="m", base_url=server.base_url.replace("/v1", "/v2"), backoff=5)
        backend.set_images({})
        p = build_prompt("s2t", ["A sentence."], ["sports", "travel", "health", "politics"])
        with pytest.raises(MvlsibError, match="HTTP 404.*not retrying"):
            backend.generate([Request("k", tuple(p.messages()))])
        backend.close()


def test_answers_parse_as_documented():
    for text, letter in ANSWERS:
        assert parse_letter(text) == letter


def test_timeouts_are_retried():
    with lettered_server(fail_every=0, stall_first=1.5) as server:
        backend = make_backend("openai", model="m", base_url=server.base_url, timeout=0.3, backoff=0.01)
        backend.set_images({})
        p = build_prompt("s2t", ["A sentence."], ["sports", "travel", "health", "politics"])
        assert backend.generate([Request("k", tuple(p.messages()))]) == [ANSWERS[0][0]]
        assert backend.stats.retries == 1
        backend.close()


def _sent_images(payload: dict) -> list[tuple[str, bytes]]:
    """(mime type, bytes) of each data-URL image of one request, in order."""
    out = []
    for message in payload["messages"]:
        for part in message["content"]:
            if part["type"] == "image_url":
                header, b64 = part["image_url"]["url"].split(",", 1)
                out.append((header.removeprefix("data:").removesuffix(";base64"), base64.b64decode(b64)))
    return out


def test_release_images_are_sent_as_their_own_bytes(release_dir):
    """The server decodes the very bytes the release stores (the hf backend's pixels), with their
    mime type; --image-encoding jpeg re-encodes them, and config.json says which."""
    import pyarrow.parquet as pq

    from mvlsib.release_format import mvl_sib

    table = pq.read_table(mvl_sib._local_file(str(release_dir), mvl_sib.IMAGES_CONFIG), columns=["image_id", "image"])
    stored = dict(
        zip(table.column("image_id").to_pylist(), table.column("image").combine_chunks().field("bytes").to_pylist())
    )
    images = mvl_sib.load_images(str(release_dir))
    ids = sorted(images)[:4]
    p = build_prompt("s2i", ["A sentence."], ids)
    request = Request("k", tuple(p.messages()), p.image_ids)
    sent = {}
    for encoding in ("source", "jpeg"):
        with lettered_server(fail_every=0) as server:
            options = {} if encoding == "source" else {"image_encoding": encoding}
            backend = make_backend("openai", model="m", base_url=server.base_url, **options)
            backend.set_images(images)
            backend.generate([request])
            sent[encoding] = _sent_images(server.requests[0])
            described = backend.describe()["image_encoding"]
            backend.close()
        assert described.startswith("the release's own" if encoding == "source" else "re-encoded")
    mimes = {"PNG": "image/png", "JPEG": "image/jpeg"}
    assert sent["source"] == [(mimes[images[i].format], stored[i]) for i in p.image_ids]
    assert all(mime == "image/jpeg" for mime, _ in sent["jpeg"])  # the release's images are opaque
    assert all(data not in stored.values() for _, data in sent["jpeg"])


def test_an_image_changed_after_decoding_is_sent_losslessly(release_dir):
    """A copy whose pixels are no longer the file's (a thumbnail, a mode change) is not sent as the file:
    it goes out as PNG of its own pixels."""
    from PIL import Image

    from mvlsib.evaluation.backends.openai import image_file
    from mvlsib.release_format import mvl_sib

    image = next(iter(mvl_sib.load_images(str(release_dir)).values()))
    small = image.copy()
    small.thumbnail((64, 64))
    for changed in (small, image.convert("L")):
        data, mime = image_file(changed)
        assert mime == "image/png"
        assert Image.open(io.BytesIO(data)).tobytes() == changed.tobytes()
    with pytest.raises(MvlsibError, match="--image-encoding must be one of source, jpeg"):
        image_file(image, "webp")
