"""Every answer of the Hugging Face Hub bounded and checked before huggingface_hub or datasets reads it.

huggingface_hub (2.x) sends every request through one shared httpx2 client (``get_session``;
``datasets`` uses the same one), whose default has no timeout at all, and reads answers with
``response.json()``: HTML where JSON belongs, ``[]`` where an object belongs, a body nested
200,000 deep or a 6,000-digit number end as a TypeError, AttributeError, RecursionError or
ValueError deep inside the library, and a Hub that drips bytes keeps a command alive for ever
(httpx2's timeouts bound each read, not the request). ``session(subject, timeout)`` installs,
for the duration of a command, a client whose

- transport ends each request at a deadline for the whole request (connect, headers, body): a
  watchdog shuts the socket down when it passes. A file download gets ``timeout`` plus one
  second per ``MIN_RATE`` bytes it announces (a large file on a slow link is not a drip);
- transport caps every body (API answers at ``MAX_API_BYTES``, files at ``max_file_bytes``);
- response hook parses every API answer with ``jsonio`` (size, depth, number length, no NaN,
  no lone surrogate) and checks its shape against the definition of ``schema/hub_answer.schema.json``
  that ``SHAPES`` names for the endpoint (through ``readers``), the answers of the endpoints the
  toolkit's commands call; an error answer (4xx/5xx) that is not bounded JSON reaches the
  library as a short note, so its error formatting cannot fail on it;

and turns what still goes wrong into one ``HubProblem`` naming ``subject`` (``--sib ORG/NAME``):
a bad answer, a deadline, a builtin exception raised inside huggingface_hub / datasets code by
an answer the checks let through. ``HF_TOKEN`` is checked first (``httpio.env_credential``).

Imports only leaves (relative, so the bundled evaluator's copy works); httpx2 and
huggingface_hub are imported when a session starts, never for ``--help``.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

from . import httpio, jsonio, params, readers
from .errors import MvlsibError

DEFAULT_TIMEOUT_S = 120.0
MAX_API_BYTES = 32 * 1024 * 1024  # a dataset's info with every file listed is a few MB
MAX_FILE_BYTES = 8 * 1024**3
MIN_RATE = 128 * 1024  # bytes per second a download may extend its deadline by
_ERROR_NOTE = b'{"error": "(the error answer was not bounded JSON; not shown)"}'
# A listing (a repo tree, its discussions) comes in pages the library follows as long as the Hub
# says there is more (`Link: next`, or `count` beyond what came): bounded per command and endpoint.
# The largest real listing the commands read (a release's tree) is a few pages of 1,000 entries.
MAX_PAGES = 200
MAX_ITEMS = 100_000

_REPO = r"/api/(?:datasets|models|spaces)/[^/]+/[^/]+"
# (method, path pattern, the definition of schema/hub_answer.schema.json its 2xx answer must match)
SHAPES: tuple[tuple[str, re.Pattern[str], str], ...] = tuple(
    (method, re.compile(pattern), definition)
    for method, pattern, definition in (
        ("GET", _REPO + r"(?:/revision/[^/]+)?", "repo_info"),
        ("GET", r"/api/agent-harnesses", "agent_harnesses"),
        ("GET", _REPO + r"/tree/.*", "tree"),
        ("POST", _REPO + r"/paths-info/.*", "tree"),
        ("GET", _REPO + r"/refs", "refs"),
        ("GET", _REPO + r"/discussions", "discussions"),
        ("POST", _REPO + r"/preupload/.*", "preupload"),
        ("POST", _REPO + r"/commit/.*", "commit"),
        ("POST", r"/api/repos/create", "repo_create"),
        ("POST", r".*\.git/info/lfs/objects/batch", "lfs_batch"),
    )
)


def hub_timeout(environ=None) -> float:
    """Seconds for one whole Hub request: ``MVLSIB_HUB_TIMEOUT`` when set (commands without a --timeout), else the default."""
    seconds = params.env_number("MVLSIB_HUB_TIMEOUT", environ)
    return DEFAULT_TIMEOUT_S if seconds is None else seconds


class HubAnswerError(Exception):
    """An answer of the Hub that the toolkit will not hand on (not an httpx2 error: nothing retries it)."""


class HubDeadline(HubAnswerError):
    pass


class HubProblem(MvlsibError, ValueError):
    """One line for the user: what about the Hub went wrong, for which ``subject``."""


def one_line(text: str, most: int = 400) -> str:
    """A message from a library or a server as one line (their texts hold line breaks), cut at ``most``."""
    text = " ".join(text.split())
    return text if len(text) <= most else text[: most - 1] + "…"


def _has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return jsonio.has_lone_surrogate(value)
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False


def check_answer(method: str, path: str, body: bytes) -> Any:
    """The answer parsed; ``HubAnswerError`` unless ``body`` is a bounded JSON answer of the shape
    ``SHAPES`` gives for the endpoint."""
    shapes = [shape for m, pattern, shape in SHAPES if m == method and pattern.fullmatch(path)]
    if not body.strip() and not shapes:
        return None  # an empty answer where none is read (a tag, a branch)
    try:
        answer = jsonio.loads(body, max_bytes=MAX_API_BYTES)
    except jsonio.JsonLimitError as exc:
        start = body[:40].decode("utf-8", "replace").strip()
        raise HubAnswerError(
            f"{method} {path} answered something that is not JSON ({exc}; it starts {start!r})"
        ) from None
    if _has_lone_surrogate(answer):
        raise HubAnswerError(f"{method} {path} answered text holding a lone surrogate, which no Hub answer has")
    problem = readers.definition_problem("hub_answer", shapes[0], answer) if shapes else None
    if problem:
        field, why = problem
        raise HubAnswerError(f"{method} {path}: the answer's {field} {why}")
    return answer


def _is_api(path: str) -> bool:
    return path.startswith("/api/") or path.endswith("/info/lfs/objects/batch")


class _Watchdog:
    """Shuts the request's sockets down at its deadline; ``extend`` moves the deadline later."""

    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._arm()

    def _arm(self) -> None:
        self._timer = threading.Timer(max(0.0, self.deadline - time.monotonic()), self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            if time.monotonic() < self.deadline:  # extended meanwhile
                self._arm()
                return
            self.expired = True
            for sock in self._sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
        if self.expired:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def extend(self, seconds: float) -> None:
        with self._lock:
            self.deadline += seconds

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()


@functools.cache
def _stream_class():
    import httpx2

    class BoundedStream(httpx2.SyncByteStream):
        def __init__(self, inner, watchdog: _Watchdog, cap: int, what: str, *, timeout: float, api: bool) -> None:
            self._inner, self._watchdog, self._cap, self._what, self._timeout = inner, watchdog, cap, what, timeout
            self._api = api

        def __iter__(self) -> Iterator[bytes]:
            total = 0
            try:
                for chunk in self._inner:
                    total += len(chunk)
                    if self._watchdog.expired:
                        break
                    if total > self._cap:
                        raise HubAnswerError(f"{self._what}: the answer is over the {self._cap:,}-byte limit")
                    yield chunk
            except httpx2.RemoteProtocolError as exc:
                if self._watchdog.expired:
                    pass
                elif self._api:  # an API answer cut short is not retried for ever: a message, re-run
                    raise HubAnswerError(f"{self._what}: the answer was cut short ({exc})") from None
                else:  # a file download: the library resumes it where it stopped
                    raise
            except httpx2.TransportError:
                if not self._watchdog.expired:
                    raise
            if self._watchdog.expired:
                raise HubDeadline(f"{self._what}: no complete answer within {self._timeout:g} s")

        def close(self) -> None:
            self._watchdog.cancel()
            self._inner.close()

    return BoundedStream


class BoundedTransport:
    """An httpx2 transport (duck-typed) around the default one: whole-request deadline, size caps."""

    def __init__(self, timeout: float, max_file_bytes: int) -> None:
        import httpx2

        self.timeout, self.max_file_bytes = timeout, max_file_bytes
        # No kept-alive connections: each request's socket is its own, so the watchdog can shut it.
        self._inner = httpx2.HTTPTransport(limits=httpx2.Limits(max_keepalive_connections=0))

    def handle_request(self, request):
        import httpx2

        watchdog = _Watchdog(self.timeout)
        what = f"{request.method} {request.url.copy_with(query=None)}"
        previous = request.extensions.get("trace")

        def trace(name: str, info: dict) -> None:
            if name.endswith((".connect_tcp.complete", ".start_tls.complete")):
                stream = info.get("return_value")
                sock = stream.get_extra_info("socket") if stream is not None else None
                if sock is not None:
                    watchdog.watch(sock)
            if previous is not None:
                previous(name, info)

        request.extensions = {**request.extensions, "trace": trace}
        api = _is_api(request.url.path)
        try:
            response = self._inner.handle_request(request)
        except httpx2.TransportError as exc:
            watchdog.cancel()
            if watchdog.expired:
                raise HubDeadline(f"{what}: no complete answer within {self.timeout:g} s") from None
            if api and isinstance(exc, httpx2.RemoteProtocolError):
                raise HubAnswerError(f"{what}: the server sent no valid answer ({exc})") from None
            raise
        length = httpio.content_length(response.headers.get("content-length"))
        if api:
            cap = MAX_API_BYTES
        else:
            cap = self.max_file_bytes
            watchdog.extend(min(length or 0, cap) / MIN_RATE)
        stream = _stream_class()(response.stream, watchdog, cap, what, timeout=self.timeout, api=api)
        return httpx2.Response(
            response.status_code, headers=response.headers, stream=stream, extensions=response.extensions
        )

    def close(self) -> None:
        self._inner.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Listings:
    """Pages and items answered per GET endpoint (its path, the query that pages it left out)."""

    def __init__(self) -> None:
        self.pages: dict[str, int] = {}
        self.items: dict[str, int] = {}

    def count(self, path: str, answer: Any) -> None:
        pages = self.pages[path] = self.pages.get(path, 0) + 1
        listed = answer if isinstance(answer, list) else answer.get("discussions") if isinstance(answer, dict) else None
        items = self.items[path] = self.items.get(path, 0) + (len(listed) if isinstance(listed, list) else 0)
        if pages > MAX_PAGES or items > MAX_ITEMS:
            raise HubAnswerError(
                f"GET {path}: the Hub kept answering more pages ({pages:,} pages, {items:,} items; the limit is "
                f"{MAX_PAGES:,} pages and {MAX_ITEMS:,} items), which no real listing needs; check the endpoint"
            )


def _check_response(response, listings: _Listings | None = None) -> None:
    """The response hook: read and check every API answer before the library sees it."""
    request = response.request
    if not _is_api(request.url.path) or request.method == "HEAD":
        return
    chunks, total = [], 0
    for chunk in response.iter_bytes():  # decoded: a compressed bomb stops at the cap too
        total += len(chunk)
        if total > MAX_API_BYTES:
            response.close()
            raise HubAnswerError(f"{request.method} {request.url.path}: over the {MAX_API_BYTES:,}-byte limit")
        chunks.append(chunk)
    body = b"".join(chunks)
    # As Response.read() does: the library's response.json() / .text then read this, not the socket.
    response._content = body
    if response.status_code >= 400:
        try:
            jsonio.loads(body, max_bytes=MAX_API_BYTES)
        except jsonio.JsonLimitError:
            if body.strip()[:1] in (b"{", b"["):  # JSON the library would choke on; plain text is fine
                response._content = _ERROR_NOTE
        return
    if 200 <= response.status_code < 300 and response.status_code != 204:
        answer = check_answer(request.method, request.url.path, body)
        if listings is not None and request.method == "GET":
            listings.count(request.url.path, answer)


def bounded_client(timeout: float, max_file_bytes: int = MAX_FILE_BYTES):
    """An httpx2 client like huggingface_hub's own (its request hook, redirects) with the bounds above."""
    import httpx2
    from huggingface_hub.utils._http import hf_request_event_hook

    listings = _Listings()  # one client per session: the budget is the command's
    return httpx2.Client(
        event_hooks={"request": [hf_request_event_hook], "response": [lambda r: _check_response(r, listings)]},
        follow_redirects=True,
        timeout=httpx2.Timeout(timeout),
        transport=BoundedTransport(timeout, max_file_bytes),  # type: ignore[arg-type]
    )


_LIBRARIES = ("huggingface_hub", "datasets", "fsspec", "httpx2", "httpcore2", "json")


def _raised_in_library(exc: BaseException) -> bool:
    """Whether the innermost frame of ``exc`` is library code reading an answer, not the toolkit's."""
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    module = tb.tb_frame.f_globals.get("__name__", "")
    return module.split(".")[0] in _LIBRARIES


def _read_by_library(exc: BaseException) -> bool:
    """Whether ``exc`` is a value error raised while huggingface_hub read an answer: a frame of the
    library is on its traceback and no toolkit frame comes after it (an answer it could not parse:
    a pull request's URL that is not one, an address in a Link header). Not a value the user gave."""
    if type(exc).__name__ in INPUT_ERRORS or not isinstance(exc, (RuntimeError, *_SHAPE_ERRORS)):
        return False
    tb, seen = exc.__traceback__, False
    while tb is not None:
        module = tb.tb_frame.f_globals.get("__name__", "")
        if module.split(".")[0] == "huggingface_hub":
            seen = True
        elif seen and module.split(".")[0] == "mvlsib":
            return False  # the library called back into the toolkit, whose error it is
        tb = tb.tb_next
    return seen


def _chain(exc: BaseException | None) -> Iterator[BaseException]:
    """``exc`` and its causes (a context the code suppressed with ``from None`` is not followed)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        yield exc
        seen.add(id(exc))
        exc = exc.__cause__ if exc.__cause__ is not None or exc.__suppress_context__ else exc.__context__


# What huggingface_hub, datasets, transformers and httpx2 raise when the Hub cannot be asked: the
# offline switch, a file neither reachable nor cached, a connection or read that failed.
_OFFLINE_NAMES = frozenset({"OfflineModeIsEnabled"})
_UNREACHED_NAMES = frozenset({"LocalEntryNotFoundError"})
_NETWORK_MODULES = ("httpx2", "httpcore2", "httpx", "httpcore", "requests", "urllib3")
_HUB_MODULES = ("huggingface_hub", "datasets", "transformers", "fsspec", *_NETWORK_MODULES)


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def endpoint() -> str:
    """The Hub's address as it may be printed (no ``user:password@``, no secret query values)."""
    return httpio.public_url(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")


def unreachable(exc: BaseException, subject: str = "") -> str | None:
    """The one sentence every command says when the Hub cannot be asked (offline, or not reached),
    if that is what ``exc`` stands for; None otherwise. Reads the exception chain only (class names
    and modules): no library is imported, so the error boundary can ask it about any error."""
    links = list(_chain(exc))
    # A library's own wording names the exception it replaced: datasets raises a bare ConnectionError
    # "Couldn't reach 'ORG/NAME' on the Hub (LocalEntryNotFoundError)".
    names = {type(e).__name__ for e in links} | {w for e in links for w in re.findall(r"\((\w+)\)", str(e)[:400])}
    in_library = [e for e in links if type(e).__module__.split(".")[0] in _HUB_MODULES or _raised_in_library(e)]
    where = f"{subject}: " if subject else ""
    if names & _OFFLINE_NAMES or (
        _offline() and any(isinstance(e, (ConnectionError, FileNotFoundError)) for e in in_library)
    ):
        return (
            f"{where}not in the local Hugging Face cache, and HF_HUB_OFFLINE is set; unset HF_HUB_OFFLINE to "
            "download it, or give a local folder"
        )
    cause = next(
        (
            e
            for e in reversed(links)
            if type(e).__module__.split(".")[0] in _NETWORK_MODULES
            or (isinstance(e, (ConnectionError, TimeoutError, socket.gaierror)) and e in in_library)
        ),
        None,
    )
    if cause is None and not names & _UNREACHED_NAMES:
        return None
    said = f" ({type(cause).__name__}: {one_line(httpio.redact(str(cause)), 160)})" if cause is not None else ""
    return (
        f"{where}cannot reach the Hugging Face Hub at {endpoint()}{said}; check the network or HF_ENDPOINT, or "
        "give a local folder (with HF_HUB_OFFLINE=1, what is cached is used)"
    )


def _unreadable(subject: str, exc: BaseException) -> HubProblem:
    # Said after a write may have started: the user must look before re-running.
    return HubProblem(
        f"{subject}: huggingface_hub could not read the Hub's answer ({type(exc).__name__}: "
        f"{one_line(str(exc), 160)}); is the endpoint a Hugging Face Hub? Check the repository on the Hub "
        "before re-running: a change may have landed"
    )


def translated(exc: BaseException, subject: str) -> HubProblem | None:
    """The one-line problem ``exc`` stands for, if a Hub answer (not the toolkit) caused it."""
    found = next((e for e in _chain(exc) if isinstance(e, HubAnswerError)), None)
    if found is not None:
        return HubProblem(f"{subject}: {found}")
    if (text := unreachable(exc, subject)) is not None:
        return HubProblem(text)
    if _read_by_library(exc):
        return _unreadable(subject, exc)
    if not _raised_in_library(exc):
        return None
    for link in _chain(exc):
        own = type(link).__module__.split(".")[0] == "huggingface_hub" and type(link).__name__ not in INPUT_ERRORS
        if own and isinstance(link, ValueError):  # its parse of an answer (HfUriError of a commit's URL, ...)
            return _unreadable(subject, link)
        if type(link).__module__ in ("builtins", "json.decoder") and isinstance(link, _SHAPE_ERRORS):
            if _raised_in_library(link):
                return HubProblem(
                    f"{subject}: the Hub answered something huggingface_hub cannot read ({type(link).__name__}: "
                    f"{one_line(str(link), 160)}); is the endpoint a Hugging Face Hub?"
                )
    if type(exc) is OSError and exc.errno is None:  # the library's own check (a file of the wrong size), no disk error
        return HubProblem(
            f"{subject}: a download from the Hub is not what the Hub announced ({one_line(str(exc), 200)}); "
            "re-run, and if it persists the Hub's copy is damaged"
        )
    network = next((e for e in _chain(exc.__cause__ or exc.__context__) if isinstance(e, OSError)), None)
    if network is not None:  # the library wrapped a failure of the machine (RuntimeError, ...)
        return HubProblem(
            f"{subject}: talking to the Hub failed ({type(network).__name__}: {one_line(str(network), 160)}); "
            "check the network or HF_ENDPOINT and re-run"
        )
    return None


# What the Hub libraries raise for a value the user gave (a repo id, a revision), not for an answer:
# the error boundary shows it as one line, like the toolkit's own refusals.
INPUT_ERRORS = frozenset({"HFValidationError"})
_SHAPE_ERRORS = (TypeError, KeyError, AttributeError, ValueError, IndexError, RecursionError, UnicodeError)


def session_for(source: str, flag: str):
    """``session`` for a Hub repo id; nothing for an existing local folder (a release read from disk)."""
    return contextlib.nullcontext() if os.path.isdir(source) else session(f"{flag} {source}")


@contextlib.contextmanager
def session(subject: str, timeout: float | None = None, max_file_bytes: int = MAX_FILE_BYTES):
    """Within the block, huggingface_hub talks to the Hub through ``bounded_client``; see the module docstring.

    ``timeout``: seconds for one whole request; None: ``hub_timeout()``."""
    timeout = hub_timeout() if timeout is None else timeout
    try:
        # the token huggingface_hub sends unasked (HF_TOKEN, else the stored login) is checked and held
        # (``credentials``) like one given, so what a Hub answer echoes of it is hidden
        resolve_token()
    except httpio.CredentialError as exc:
        raise HubProblem(str(exc)) from None
    from huggingface_hub import set_client_factory
    from huggingface_hub.utils import _http

    # The factory in force, put back when the command ends: huggingface_hub has no public getter for it
    # (tests/test_hub_contract.py names this and every other internal used here).
    previous = _http._GLOBAL_CLIENT_FACTORY
    set_client_factory(lambda: bounded_client(timeout, max_file_bytes))
    try:
        yield
    except HubProblem:
        raise
    except Exception as exc:
        problem = translated(exc, subject)
        if problem is not None:
            raise problem from None
        raise
    finally:
        set_client_factory(previous)


def resolve_token(token: str | None = None) -> str | None:
    """The Hub token: the one given, else HF_TOKEN, else the stored login (``hf auth login``, or the file
    HF_TOKEN_PATH names). Every source is checked the same way before any use (``httpio.check_credential``):
    a token with a line break or a quote in it is refused by where it came from, never shown."""
    if token:
        return httpio.check_credential(token, "the token given", "pass the bare token")
    env = httpio.env_credential("HF_TOKEN")
    if env:
        return env
    from huggingface_hub import get_token

    stored = get_token()
    if not stored:
        return None
    return httpio.check_credential(
        stored, "the stored Hub login (hf auth login, or the file HF_TOKEN_PATH names)", "log in again"
    )
