"""Read an image source: a local file or an http(s) URL (timeout, size cap, content-type check)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

from mvlsib import httpio, readers
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
    if not path.exists():
        raise MvlsibError(f"{source}: no such file")
    # bounded by the bytes read, not by what stat says (a device, a FIFO, a file that grows)
    return readers.read_limited(path, max_bytes, fix="give an image file (raise --max-bytes for a larger one)")


def download(url: str, *, timeout: float = DEFAULT_TIMEOUT_S, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """GET ``url`` within ``timeout`` seconds for the whole download (not per read), at most ``max_bytes``."""
    headers = {"User-Agent": USER_AGENT, "Accept": ", ".join(ACCEPTED_CONTENT_TYPES)}
    try:
        return _download(url, headers, timeout, max_bytes)
    except MvlsibError as exc:  # a URL may carry user:password@ or a token: never echo it
        raise MvlsibError(httpio.redact(str(exc))) from None


def _download(url: str, headers: dict, timeout: float, max_bytes: int) -> bytes:
    try:
        # File pages (e.g. Wikimedia's Special:FilePath) redirect to the file; nothing secret is sent.
        resp = httpio.request(url, headers=headers, timeout=timeout, max_bytes=max_bytes, max_redirects=5)
    except httpio.DeadlineExceeded:
        raise MvlsibError(f"{url}: no complete answer within {timeout:g} s (--timeout)") from None
    except httpio.BodyTooLarge as exc:
        raise MvlsibError(f"{exc} (--max-bytes)") from None
    except httpio.TruncatedBody as exc:
        raise MvlsibError(f"{exc}; try again") from None
    except httpio.TransportError as exc:
        raise MvlsibError(f"cannot download: {exc}") from None
    if resp.status >= 400:
        raise MvlsibError(f"{url}: HTTP {resp.status}")
    ctype = (resp.header("content-type") or "").split(";")[0].strip().lower()
    if ctype not in ACCEPTED_CONTENT_TYPES:
        raise MvlsibError(
            f"{url}: server sent Content-Type {ctype or '(none)'!r}, not an image "
            f"({', '.join(ACCEPTED_CONTENT_TYPES)}); link the image file itself, not its web page"
        )
    return resp.body
