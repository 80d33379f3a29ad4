"""`images add` from files and from a real HTTP server on 127.0.0.1; atomic on failure."""

from __future__ import annotations

import hashlib
import http.server
import io
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from PIL import Image

from mvlsib.cli import build_cli
from mvlsib.errors import MvlsibError
from mvlsib.image_pool import add as add_mod
from mvlsib.image_pool.add import AddRequest, add_image
from mvlsib.image_pool.fetch import download
from mvlsib.workdir.pool_manifest import read_manifest


def _jpeg(im, **kw) -> bytes:
    buf = io.BytesIO()
    im.save(buf, format="JPEG", **kw)
    return buf.getvalue()


def rotated_gps_jpeg() -> bytes:
    im = Image.new("RGB", (900, 600), (40, 140, 60))
    im.paste((230, 30, 30), (0, 0, 900, 80))  # red band on the stored top edge
    exif = Image.Exif()
    exif[0x0112] = 8  # rotate 90 CCW to display
    exif[0x8825] = {1: "N", 2: (51.0, 30.0, 0.0), 3: "W", 4: (0.0, 7.0, 0.0)}
    return _jpeg(im, exif=exif, quality=90)


@pytest.fixture(scope="module")
def server(topic_photos_dir):
    photo = (topic_photos_dir / "sports" / "fitmatrix_cadet_soccer_stadium.jpg").read_bytes()
    routes = {
        "/photo.jpg": (200, "image/jpeg", photo),
        "/rotated.jpg": (200, "image/jpeg", rotated_gps_jpeg()),
        "/page.html": (200, "text/html; charset=utf-8", b"<html><img src=photo.jpg></html>"),
        "/big.jpg": (200, "image/jpeg", photo + b"\0" * 300_000),
        "/lying.jpg": (200, "image/jpeg", b"this is not a jpeg at all" * 100),
        "/nolength.jpg": (200, "image/jpeg", photo),
    }

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path == "/slow.jpg":
                time.sleep(2.0)
            if self.path == "/drip.jpg":  # a byte every 0.1 s: each read is quick, the whole is not
                body = routes["/photo.jpg"][2]
                self.send_response(200)
                self.send_header("Content-Type", "image/jpeg")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    for i in range(len(body)):
                        self.wfile.write(body[i : i + 1])
                        self.wfile.flush()
                        time.sleep(0.1)
                except OSError:
                    pass
                return
            if self.path == "/redirect":
                self.send_response(302)
                self.send_header("Location", "/photo.jpg")
                self.end_headers()
                return
            status, ctype, body = routes.get(self.path, (404, "text/plain", b"not found"))
            if self.path == "/slow.jpg":
                status, ctype, body = routes["/photo.jpg"]
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            if self.path != "/nolength.jpg":  # HTTP/1.0: without a length the body ends at close
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", photo
    httpd.shutdown()
    httpd.server_close()


def _req(source, **kw) -> AddRequest:
    base = dict(
        source=source,
        topic="sports",
        license="CC-BY-SA-4.0",
        author="Someone",
        source_url="https://commons.wikimedia.org/wiki/File:X.jpg",
    )
    base.update(kw)
    return AddRequest(**base)


def _snapshot(pool: Path) -> dict[str, bytes]:
    return {str(p.relative_to(pool)): p.read_bytes() for p in sorted(pool.rglob("*")) if p.is_file()}


def test_add_rotated_gps_jpeg_via_cli(tmp_path: Path, pool_copy: Path):
    src = tmp_path / "IMG_0001.jpg"
    src.write_bytes(rotated_gps_jpeg())
    before = read_manifest(pool_copy)
    res = CliRunner().invoke(
        build_cli,
        [
            "images",
            "add",
            str(src),
            "--pool",
            str(pool_copy),
            "--topic",
            "sports",
            "--license",
            "CC BY 4.0",
            "--author",
            "A. Photographer",
            "--source-url",
            "https://example.org/p/1",
            "--title",
            "Green field",
        ],
    )
    assert res.exit_code == 0, res.output
    after = read_manifest(pool_copy)
    assert len(after) == len(before) + 1
    new = [r for r in after if r.image_id not in {b.image_id for b in before}]
    assert len(new) == 1
    row = new[0]
    assert row.image_id == "sports_10" and row.file == "sports/sports_10.jpg"
    assert row.license == "CC-BY-4.0" and row.extra["title"] == "Green field"
    data = (pool_copy / row.file).read_bytes()
    assert hashlib.sha256(data).hexdigest() == row.sha256
    im = Image.open(io.BytesIO(data))
    assert im.size == (320, 480)  # upright portrait, fitted into 640x480
    assert not im.getexif() and "icc_profile" not in im.info and b"GPS" not in data
    r, g, b = im.convert("RGB").getpixel((5, 240))  # orientation 8: stored top edge ends up on the left
    assert r > 180 and g < 90
    assert f"added {row.image_id}" in res.output


def test_add_from_url(tmp_path: Path, server):
    base, photo = server
    row = add_image(tmp_path / "p", _req(f"{base}/photo.jpg"))
    assert row.image_id == "sports_0"
    again = add_image(tmp_path / "q", _req(f"{base}/redirect"))
    assert again.sha256 == row.sha256  # same input, same bytes, through a redirect as well
    assert Image.open(tmp_path / "p" / row.file).size == (640, 360)


@pytest.mark.parametrize(
    "path, kw, message",
    [
        ("/page.html", {}, "not an image"),
        ("/big.jpg", {"max_bytes": 200_000}, "limit"),
        ("/slow.jpg", {"timeout": 0.5}, "no complete answer within"),
        ("/missing.jpg", {}, "HTTP 404"),
        ("/lying.jpg", {}, "not a decodable image"),
    ],
)
def test_url_failures_leave_pool_unchanged(pool_copy: Path, server, path, kw, message):
    base, _ = server
    before = _snapshot(pool_copy)
    with pytest.raises(MvlsibError, match=message):
        add_image(pool_copy, _req(base + path, **kw))
    assert _snapshot(pool_copy) == before


def test_download_size_cap_without_content_length_is_enforced(server):
    base, photo = server
    with pytest.raises(MvlsibError, match="over the .*-byte limit.*--max-bytes"):
        download(f"{base}/nolength.jpg", max_bytes=len(photo) - 1)
    assert download(f"{base}/nolength.jpg", max_bytes=len(photo)) == photo


def test_timeout_is_a_deadline_for_the_whole_download(pool_copy: Path, server):
    """A server dripping a byte at a time must not outlive --timeout."""
    base, _ = server
    before = _snapshot(pool_copy)
    start = time.monotonic()
    with pytest.raises(MvlsibError, match="no complete answer within 1 s"):
        add_image(pool_copy, _req(f"{base}/drip.jpg", timeout=1.0))
    assert time.monotonic() - start < 3.0
    assert _snapshot(pool_copy) == before


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"license": "CC-BY-NC-4.0"}, "commercial"),
        ({"license": "CC-BY-4.0", "author": ""}, "--author"),
        ({"topic": "sport"}, "not one of the 7"),
        # the id is made from the topic: the topic's fault is said as --topic, never as --image-id
        ({"topic": "SPORTS", "image_id": ""}, "--topic: topic 'SPORTS' is not one of the 7"),
        ({"topic": "Science/Technology", "image_id": ""}, "--topic: topic 'Science/Technology'"),
        ({"image_id": "sports_3"}, "already in the pool"),
        # the pool manifest schema's rules, which validate applies to the same row
        ({"image_id": "My.Image-1"}, "--image-id: image_id: 'My.Image-1' does not match"),
        ({"source_url": "javascript:alert(1)"}, "--source-url: source_url"),
        ({"source_url": "https://example.org/a\tb"}, "--source-url: source_url"),
    ],
)
def test_bad_requests_change_nothing(pool_copy: Path, topic_photos_dir, kw, message):
    before = _snapshot(pool_copy)
    src = str(topic_photos_dir / "sports" / "placecal_04_sports.jpg")
    with pytest.raises(MvlsibError, match=message):
        add_image(pool_copy, _req(src, **kw))
    assert _snapshot(pool_copy) == before


def test_a_source_url_with_spaces_is_stored_as_the_schema_wants(pool_copy: Path, topic_photos_dir):
    from mvlsib.schema.validators import schema_errors

    src = str(topic_photos_dir / "sports" / "placecal_04_sports.jpg")
    row = add_image(pool_copy, _req(src, source_url=" https://commons.example.org/wiki/File:A photo.jpg "))
    assert row.source_url == "https://commons.example.org/wiki/File:A%20photo.jpg"
    assert list(schema_errors("manifest_row", row.as_dict())) == []


def test_truncated_source_changes_nothing(tmp_path: Path, pool_copy: Path, topic_photos_dir):
    data = (topic_photos_dir / "geography" / "akc_Moraine_Lake.jpg").read_bytes()
    src = tmp_path / "cut.jpg"
    src.write_bytes(data[: len(data) // 2])
    before = _snapshot(pool_copy)
    res = CliRunner().invoke(
        build_cli, ["images", "add", str(src), "--pool", str(pool_copy), "--topic", "geography", "--license", "CC0-1.0"]
    )
    assert res.exit_code != 0 and "truncated" in res.output
    assert "Traceback" not in res.output
    assert _snapshot(pool_copy) == before


def test_manifest_write_failure_removes_the_new_image(pool_copy: Path, topic_photos_dir, monkeypatch):
    def boom(*_a, **_k):
        raise OSError("disk full")

    monkeypatch.setattr(add_mod, "write_manifest", boom)
    before = _snapshot(pool_copy)
    with pytest.raises(OSError):
        add_image(pool_copy, _req(str(topic_photos_dir / "sports" / "placecal_04_sports.jpg")))
    assert _snapshot(pool_copy) == before


def test_exact_duplicate_refused(pool_copy: Path):
    with pytest.raises(MvlsibError, match="identical to sports_0"):
        add_image(pool_copy, _req(str(pool_copy / "sports" / "sports_0.png"), license="CC0-1.0"))


def test_too_small_refused(tmp_path: Path):
    src = tmp_path / "tiny.png"
    Image.new("RGB", (200, 150), (9, 9, 9)).save(src)
    with pytest.raises(MvlsibError, match="shorter side"):
        add_image(tmp_path / "p", _req(str(src)))


def test_add_is_byte_identical_across_processes(tmp_path: Path, repo_root: Path, topic_photos_dir):
    import os
    import subprocess
    import sys

    src = topic_photos_dir / "geography" / "qubes_garrett-parker-DlkF4-dbCOU.jpg"  # has EXIF and an ICC profile
    outputs = []
    for seed in ("1", "2"):
        pool = tmp_path / f"pool{seed}"
        env = dict(
            os.environ,
            PYTHONHASHSEED=seed,
            PYTHONPATH=str(repo_root / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""),
        )
        res = subprocess.run(
            [
                sys.executable,
                "-m",
                "mvlsib",
                "images",
                "add",
                str(src),
                "--pool",
                str(pool),
                "--topic",
                "geography",
                "--license",
                "LicenseRef-Unsplash",
                "--author",
                "Garrett Parker",
                "--source-url",
                "https://example.org/x",
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert res.returncode == 0, res.stderr
        outputs.append(((pool / "manifest.csv").read_bytes(), (pool / "geography" / "geography_0.jpg").read_bytes()))
    assert outputs[0] == outputs[1]


def test_two_adds_at_once_keep_both_rows(pool_copy: Path, topic_photos_dir, monkeypatch):
    """Two adds that both read the manifest before either writes it must not lose a row."""
    real_write = add_mod.write_manifest

    def slow_write(pool, rows):  # widen the read-modify-write window so the race always happens
        time.sleep(0.4)
        real_write(pool, rows)

    monkeypatch.setattr(add_mod, "write_manifest", slow_write)
    sources = [
        topic_photos_dir / "sports" / "placecal_04_sports.jpg",
        topic_photos_dir / "sports" / "fitmatrix_cadet_soccer_stadium.jpg",
    ]
    before = {r.image_id for r in read_manifest(pool_copy)}
    results, errors = [], []

    def add(src):
        try:
            results.append(add_image(pool_copy, _req(str(src))))
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=add, args=(s,)) for s in sources]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []
    after = read_manifest(pool_copy)
    new = {r.image_id for r in after} - before
    assert len(new) == 2 and new == {r.image_id for r in results}
    assert all((pool_copy / r.file).is_file() for r in after if r.image_id in new)


def test_oversized_icc_profile_is_a_message(tmp_path: Path, pool_copy: Path):
    """An 8 MB ICC profile in a PNG made Pillow raise ValueError (a traceback)."""
    import os

    src = tmp_path / "icc.png"
    Image.new("RGB", (800, 600), (10, 200, 30)).save(src, icc_profile=os.urandom(8 * 1024 * 1024))
    before = _snapshot(pool_copy)
    result = CliRunner().invoke(
        build_cli,
        [
            "images",
            "add",
            str(src),
            "--pool",
            str(pool_copy),
            "--topic",
            "sports",
            "--license",
            "CC0-1.0",
            "--author",
            "A",
            "--source-url",
            "https://e.org/x",
        ],
    )
    assert result.exit_code == 2, result.output
    assert "cannot be read as an image" in result.output and "ICC profile" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert _snapshot(pool_copy) == before


def test_credentials_in_a_url_are_not_echoed(server):
    base, _ = server
    url = base.replace("http://", "http://someone:s3cretpw@") + "/missing.jpg"
    with pytest.raises(MvlsibError, match="HTTP 404") as info:
        download(url)
    assert "s3cretpw" not in str(info.value)
