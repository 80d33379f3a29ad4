"""One HTTP request with hard bounds: the transport of the openai backend and of ``images add URL``.

Why not plain ``urllib.request.urlopen``: its ``timeout`` bounds each socket read, so a
server sending a byte every half second keeps a request alive for ever; it follows
redirects to any host, turning a POST into a body-less GET and re-sending the
``Authorization`` header there; and it reads bodies of any size. Here:

- ``timeout`` is a deadline for the whole request (connect, headers, body): a watchdog
  shuts the socket down when it passes;
- redirects are refused (``RedirectRefused`` names the ``Location``) unless the caller
  allows some; followed redirects drop credentials when the origin changes and are only
  ever followed for GET;
- the body is capped at ``max_bytes``; a body cut short raises ``TruncatedBody``;
- ``redact`` removes credentials from any text built from what a server sent back;
- proxies come from the environment (``https_proxy``, ``http_proxy``, ``no_proxy``) as with urllib;
- ``retry_after`` reads a ``Retry-After`` header into a bounded delay (or None for garbage);
- ``env_credential`` reads a key or token from the environment and refuses one that a header
  cannot carry (a pasted newline, a control character), naming the variable, never the value.

This module imports only the leaf ``credentials`` from mvlsib: the bundled evaluator ships both.
"""

from __future__ import annotations

import os
import re
import socket
import threading
import time
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from urllib.parse import SplitResult, urljoin, urlsplit, urlunsplit

from . import credentials
from .credentials import CREDENTIAL_WORDS

# The largest response body read from an inference server (a chat completion is a few KB).
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
REDIRECT_STATUS = frozenset({301, 302, 303, 307, 308})
_CREDENTIAL_HEADERS = ("authorization", "proxy-authorization", "cookie", "x-api-key", "api-key")
# Token shapes worth hiding even when the caller did not name the secret (echoed headers).
_TOKEN_PATTERNS = (
    re.compile(r"(?i)(bearer|basic)\s+[A-Za-z0-9._~+/=-]{4,}"),
    # a URL's user-info, whatever it holds (user:password, a token as the user, a password with "@"):
    # all of the authority before its last "@"
    re.compile(r"(?<=://)[^/\s?#]*(?=@)"),
    re.compile(r"\bsk-[A-Za-z0-9_-]{8,}"),
    re.compile(r"\bhf_[A-Za-z0-9]{8,}"),
)


class CredentialError(ValueError):
    """A credential variable holds something no HTTP header can carry; the message names the variable only."""


class TransportError(Exception):
    """The request did not produce a complete response; ``retryable`` says whether to try again."""

    retryable = True


class DeadlineExceeded(TransportError):
    pass


class TruncatedBody(TransportError):
    pass


class BodyTooLarge(TransportError):
    retryable = False


class InvalidURL(TransportError):
    retryable = False


class RedirectRefused(TransportError):
    retryable = False

    def __init__(self, message: str, location: str) -> None:
        super().__init__(message)
        self.location = location


@dataclass
class Response:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    url: str = ""

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


def redact(text: str, secrets: tuple[str | None, ...] = ()) -> str:
    """``text`` with every given secret, every token-shaped string and the value of every
    credential-like query parameter of a URL in it (``?access_token=``, ``X-Amz-Signature=``)
    replaced by ``***``; and every credential this process holds (``credentials.hide``)."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    text = credentials.hide(text)
    for pattern in _TOKEN_PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) + " ***") if m.lastindex else "***", text)
    return _QUERY_VALUE.sub(lambda m: m.group(1) + "***" if _SECRET_QUERY.search(m.group(2)) else m.group(0), text)


# A query parameter of a URL in running text: its separator and name (group 1, name alone group 2), its value.
# A fragment (``#access_token=``) and a path parameter (``;token=``) count as one: both are sent or shown.
_QUERY_VALUE = re.compile(r"([?&#;]([^=&\s?#;]+)=)[^&\s#;'\"]*")
# Options whose value is a credential (``--api-key``, ``--hf-token``): one of those words between hyphens,
# so ``--max-new-tokens`` and ``--author`` keep their values in the record.
_CREDENTIAL_OPTIONS = re.compile(rf"(?i)^--?(?:[\w]+-)*(?:{'|'.join(CREDENTIAL_WORDS)})(?:-[\w]+)*\Z")


def public_argv(argv: list[str]) -> list[str]:
    """A command line as it may be recorded (a run's config.json, a lock file): URLs without
    ``user:password@`` or secret query values, token shapes and the values of credential options
    (``--api-key X``, ``--token=X``) as ``***``. The program is named by its file name alone."""
    out = [os.path.basename(argv[0])] if argv else []
    for word, secret in _credential_words(argv[1:]):
        if secret is None:
            out.append(redact(word))
        else:
            out.append(word[: len(word) - len(secret)] + "***")
    return out


def credential_option_values(args: list[str]) -> list[str]:
    """The values given to credential options (``--api-key X``, ``--token=X``) in ``args``."""
    return [secret for _, secret in _credential_words(args) if secret]


def _credential_words(args: list[str]) -> Iterator[tuple[str, str | None]]:
    # each word, with the credential it carries: the value after ``--api-key`` or after ``--token=``
    take_next = False
    for word in args:
        if take_next:
            take_next = False
            yield word, word
            continue
        name, eq, value = word.partition("=")
        if _CREDENTIAL_OPTIONS.match(name):
            take_next = not eq
            yield word, (value if eq else None)
            continue
        yield word, None


def env_credential(name: str, environ=None) -> str | None:
    """The value of the environment variable ``name`` (None when unset or empty), checked before any use
    (``check_credential``)."""
    value = (os.environ if environ is None else environ).get(name)
    if not value:
        return None
    return check_credential(value, f"the environment variable {name}", f"set {name} again to the bare key")


def check_credential(value: str, where: str, fix: str) -> str:
    """``value`` if a header can carry it; ``CredentialError`` naming ``where`` (never the value) otherwise.

    A key is sent in a header: a newline or any other character outside printable ASCII either
    splits the header or makes the HTTP library fail with a message (and a traceback) quoting
    the header, key included. Refused here instead, by where it came from.
    """
    bad = next((ch for ch in value if not "\x21" <= ch <= "\x7e"), None)
    if bad is not None:
        what = unicodedata.name(bad, "") or ("a control character" if unicodedata.category(bad) == "Cc" else "")
        kind = "a space" if bad == " " else f"U+{ord(bad):04X}{f' ({what})' if what else ''}"
        raise CredentialError(
            f"{where} holds {kind}, which no key or token contains (a paste that took a line break or quote "
            f"with it?); {fix}"
        )
    credentials.remember(value)  # whatever a peer echoes of it is hidden from every output
    return value


# The longest wait a server may ask for; a longer (or unreadable) Retry-After falls back to our own backoff.
MAX_RETRY_AFTER_S = 60.0


def retry_after(value: str | None, *, cap: float | None = None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (RFC 9110: delay-seconds or an HTTP-date), within [0, cap].

    None when the header is absent or unreadable (``nan``, ``inf``, ``-5``, a date that is not
    one): the caller keeps its own backoff. A wait over ``cap`` (default ``MAX_RETRY_AFTER_S``) is cut to ``cap``.
    """
    cap = MAX_RETRY_AFTER_S if cap is None else cap
    if value is None:
        return None
    text = value.strip()
    if not text or len(text) > 64:
        return None
    if re.fullmatch(r"[0-9]+(\.[0-9]+)?", text):  # digits only: no nan, inf, sign or exponent
        return min(float(text), cap)  # at most 64 digits: always finite
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None or when.tzinfo is None:
        return None
    try:
        delta = when.timestamp() - (time.time() if now is None else now)
    except (OverflowError, OSError, ValueError):
        return None
    return min(max(delta, 0.0), cap)


def content_length(value: str | None) -> int | None:
    """A ``Content-Length`` header as a number, or None when absent or not a plain decimal number."""
    if value is None:
        return None
    text = value.strip()
    if not (0 < len(text) <= 19 and text.isascii() and text.isdigit()):
        return None  # never int() a header of thousands of digits
    return int(text)


# A URL holds no whitespace or control character (RFC 3986 section 2): one would end a header line or a log line.
_NOT_IN_URL = re.compile(r"[\s\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# Query parameters that carry a credential (presigned URLs, API keys in links).
_SECRET_QUERY = re.compile("|".join((*CREDENTIAL_WORDS, "sig", "signature", "session")), re.IGNORECASE)


def check_url(url: str) -> str:
    """``url`` if it is an http(s) URL with a host and a valid port; ``InvalidURL`` otherwise, whose
    message shows the URL without its credentials (``redact``)."""
    if (bad := _NOT_IN_URL.search(url)) is not None:
        raise InvalidURL(
            f"{redact(url[: bad.start()])!r}...: not a valid URL (a space or control character at position {bad.start()}; "
            "write a space as %20)"
        )
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is not a number in 0..65535
    except ValueError as exc:
        raise InvalidURL(f"{redact(url)}: not a valid URL ({redact(str(exc))})") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise InvalidURL(f"{redact(url)}: only http(s) URLs are supported")
    if not parts.hostname:
        raise InvalidURL(f"{redact(url)}: not a valid URL (no host)")
    return url


def holds_credential(url: str) -> bool:
    """Whether ``url`` carries a ``user:password@`` or a credential-like query value (``public_url`` hides them)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    userinfo = parts.netloc.rpartition("@")[0]
    return bool(userinfo.strip(":")) or any(_SECRET_QUERY.search(name) for name in _parameter_names(parts))


def _parameter_names(parts: SplitResult) -> Iterator[str]:
    """The names of the ``name=value`` items of a URL's query, fragment and path parameters."""
    for text, sep in ((parts.query, "&"), (parts.fragment, "&"), *((seg, ";") for seg in parts.path.split("/"))):
        items = text.split(sep)[1:] if sep == ";" else text.split(sep)
        yield from (item.partition("=")[0] for item in items if "=" in item)


def _masked(text: str, sep: str) -> str:
    """``text`` (a query, a fragment or a path segment) with the value of every credential-like item hidden."""
    items = text.split(sep)
    keep = items[:1] if sep == ";" else []  # a path segment's own name is not a parameter
    return sep.join(
        keep
        + [
            f"{name}=***" if eq and _SECRET_QUERY.search(name) else item
            for item in items[len(keep) :]
            for name, eq, _ in (item.partition("="),)
        ]
    )


def public_url(url: str) -> str:
    """``url`` as it may be written or printed: no ``user:password@``, no credential-like query values.
    Never raises: an address urllib cannot split (a bracketed host that is no IP address) is masked
    as running text (``redact``)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact(url)
    netloc = parts.netloc.rpartition("@")[2]
    path = "/".join(_masked(segment, ";") for segment in parts.path.split("/"))
    return urlunsplit((parts.scheme, netloc, path, _masked(parts.query, "&"), _masked(parts.fragment, "&")))


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or (443 if scheme == "https" else 80)


def request(
    url: str,
    *,
    method: str = "GET",
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    timeout: float,
    max_bytes: int | None = None,
    max_redirects: int = 0,
) -> Response:
    """Send one request and return the whole response (any status), within ``timeout`` seconds in total."""
    deadline = time.monotonic() + timeout
    max_bytes = MAX_RESPONSE_BYTES if max_bytes is None else max_bytes
    headers = dict(headers or {})
    for _ in range(max_redirects + 1):
        response = _once(url, method, body, headers, deadline=deadline, timeout=timeout, max_bytes=max_bytes)
        if response.status not in REDIRECT_STATUS:
            return response
        location = response.header("location") or "(no Location header)"
        target = urljoin(url, location) if response.header("location") else location
        if max_redirects == 0 or method != "GET":
            raise RedirectRefused(
                f"{url}: the server answered HTTP {response.status} redirecting to {target}; redirects are "
                f"not followed (use the final URL directly)",
                target,
            )
        if urlsplit(target).scheme.lower() not in ("http", "https"):
            raise RedirectRefused(f"{url}: redirected to a non-http(s) location {target}", target)
        if _origin(target) != _origin(url):  # never hand credentials to another origin
            headers = {k: v for k, v in headers.items() if k.lower() not in _CREDENTIAL_HEADERS}
        url = target
    raise RedirectRefused(f"{url}: more than {max_redirects} redirects", url)


def _proxy_for(url: str) -> tuple[str, int, dict[str, str]] | None:
    """(host, port, Proxy-Authorization header) of the proxy the environment names for ``url``, if any."""
    # here, not at the top: urllib.request imports http.client (see _once)
    import base64
    import urllib.parse
    import urllib.request

    parts = urlsplit(url)
    proxy = urllib.request.getproxies().get(parts.scheme.lower())
    if not proxy or urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    p = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    headers = {}
    if p.username:
        creds = f"{urllib.parse.unquote(p.username)}:{urllib.parse.unquote(p.password or '')}"
        headers["Proxy-Authorization"] = "Basic " + base64.b64encode(creds.encode()).decode("ascii")
    return p.hostname or "", p.port or 8080, headers


def _once(url, method, body, headers, *, deadline, timeout, max_bytes) -> Response:
    import http.client  # here, not at the top: ssl and email cost every command 20 ms, most never fetch

    parts = urlsplit(check_url(url))
    scheme = parts.scheme.lower()
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise DeadlineExceeded(f"{url}: no complete answer within {timeout:g} s")
    cls = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    proxy = _proxy_for(url)
    if proxy is None:
        conn = cls(parts.hostname or "", parts.port, timeout=remaining)
    else:  # as urllib would: the *_proxy / no_proxy environment
        proxy_host, proxy_port, proxy_headers = proxy
        if scheme == "https":  # a CONNECT tunnel: the proxy never sees the request or its headers
            conn = cls(proxy_host, proxy_port, timeout=remaining)
            conn.set_tunnel(parts.hostname or "", parts.port or 443, headers=proxy_headers)
        else:
            conn = http.client.HTTPConnection(proxy_host, proxy_port, timeout=remaining)
            path = url
            headers = {**headers, **proxy_headers}
    expired = threading.Event()

    def abort() -> None:
        expired.set()
        sock = conn.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    watchdog = threading.Timer(remaining, abort)
    watchdog.daemon = True
    watchdog.start()
    try:
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        length = content_length(resp.getheader("Content-Length"))
        if length is not None and length > max_bytes:
            raise BodyTooLarge(f"{url}: the response is {length:,} bytes, over the {max_bytes:,}-byte limit")
        chunks, total = [], 0
        while True:
            # read1 returns after one socket read, so the size cap and the deadline are checked often.
            block = resp.read1(1 << 16)
            if not block:
                break
            total += len(block)
            if total > max_bytes:
                raise BodyTooLarge(f"{url}: the response is over the {max_bytes:,}-byte limit; reading stopped")
            chunks.append(block)
            if expired.is_set():
                break
        if expired.is_set():
            raise DeadlineExceeded(f"{url}: no complete answer within {timeout:g} s")
        if length is not None and total < length:
            raise TruncatedBody(f"{url}: connection closed after {total:,} of {length:,} bytes")
        return Response(resp.status, {k.lower(): v for k, v in resp.getheaders()}, b"".join(chunks), url)
    except TransportError:
        raise
    except http.client.IncompleteRead as exc:
        if expired.is_set():
            raise DeadlineExceeded(f"{url}: no complete answer within {timeout:g} s") from None
        raise TruncatedBody(f"{url}: connection closed after {len(exc.partial):,} bytes of the body") from None
    except (OSError, http.client.HTTPException) as exc:
        if expired.is_set() or isinstance(exc, (socket.timeout, TimeoutError)):
            raise DeadlineExceeded(f"{url}: no complete answer within {timeout:g} s") from None
        reason = getattr(exc, "strerror", None) or type(exc).__name__
        raise TransportError(f"{url}: {reason}") from None
    finally:
        watchdog.cancel()
        conn.close()
