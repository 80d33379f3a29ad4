"""Read an image source: a local file or an http(s) URL (timeout, size cap, content-type check)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

from mvlsib.errors import MvlsibError
from mvlsib.limits import DOWNLOAD_TIMEOUT_S, MAX_DOWNLOAD_BYTES

DEFAULT_TIMEOUT_S = DOWNLOAD_TIMEOUT_S
DEFAULT_MAX_BYTES = MAX_DOWNLOAD_BYTES
ACCEPTED_CONTENT_TYPES = ("image/jpeg", "image/png", "image/webp", "image/gif", "image/tiff", "image/bmp")
USER_AGENT = "mvlsib-build image-pool (+https://github.com/mvlsib/mvlsib-build)"


def is_url(source: str) -> bool:
    return urlparse(source).scheme.lower() in ("http", "https")


def read_source(source: str, *, timeout: float = DEFAULT_TIMEOUT_S, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """Return the bytes of ``source`` (path or http(s) URL), refusing anything over ``max_bytes``."""
    if is_url(source):
        return download(source, timeout=timeout, max_bytes=max_bytes)
    scheme = urlparse(source).scheme.lower()
    if scheme and len(scheme) > 1:  # "C:" style drive letters are paths, "ftp:" is not supported
        raise MvlsibError(f"{source}: only local files and http(s) URLs are supported, not {scheme}:")
    path = Path(source)
    if not path.is_file():
        raise MvlsibError(f"{source}: no such file")
    size = path.stat().st_size
    if size > max_bytes:
        raise MvlsibError(f"{source}: {size:,} bytes is over the {max_bytes:,}-byte limit (--max-bytes)")
    return path.read_bytes()


def download(url: str, *, timeout: float = DEFAULT_TIMEOUT_S, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    import http.client
    import socket
    import urllib.error
    import urllib.request

    req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, "Accept": ", ".join(ACCEPTED_CONTENT_TYPES)})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - scheme checked by is_url
            final = resp.geturl()
            if urlparse(final).scheme.lower() not in ("http", "https"):
                raise MvlsibError(f"{url}: redirected to a non-http(s) location {final}")
            ctype = (resp.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            if ctype not in ACCEPTED_CONTENT_TYPES:
                raise MvlsibError(
                    f"{url}: server sent Content-Type {ctype or '(none)'!r}, not an image "
                    f"({', '.join(ACCEPTED_CONTENT_TYPES)}); link the image file itself, not its web page"
                )
            length = resp.headers.get("Content-Length")
            if length and length.isdigit() and int(length) > max_bytes:
                raise MvlsibError(f"{url}: {int(length):,} bytes is over the {max_bytes:,}-byte limit (--max-bytes)")
            chunks, total = [], 0
            while True:
                block = resp.read(1 << 16)
                if not block:
                    break
                total += len(block)
                if total > max_bytes:
                    raise MvlsibError(f"{url}: more than {max_bytes:,} bytes (--max-bytes); download stopped")
                chunks.append(block)
            if length and length.isdigit() and total < int(length):
                raise MvlsibError(f"{url}: connection closed after {total:,} of {int(length):,} bytes; try again")
            return b"".join(chunks)
    except urllib.error.HTTPError as exc:
        raise MvlsibError(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except (socket.timeout, TimeoutError):
        raise MvlsibError(f"{url}: no answer within {timeout:g} s (--timeout)") from None
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, (socket.timeout, TimeoutError)):
            raise MvlsibError(f"{url}: no answer within {timeout:g} s (--timeout)") from None
        raise MvlsibError(f"{url}: cannot download ({exc.reason})") from None
    except (OSError, http.client.HTTPException) as exc:
        raise MvlsibError(f"{url}: download failed ({exc!r})") from None
