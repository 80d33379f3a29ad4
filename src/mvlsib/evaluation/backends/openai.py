"""OpenAI-compatible chat-completions backend (vLLM, SGLang, hosted APIs).

Images are sent inline as base64 data URLs, once per image id, by default as the release's own
bytes with their mime type, so the server decodes exactly what the hf backend decodes
(``--image-encoding jpeg`` re-encodes them, for a server that refuses the release's format). Decoding is
deterministic (temperature 0). A response cut off inside a thinking block (``cut_in_thinking``:
a reasoning parser's ``reasoning_content`` with no answer, or an unclosed thinking marker in the
content) is asked for once more with ``--thinking-max-new-tokens``, as the hf backend does. Requests run with bounded concurrency; HTTP 429, 5xx,
timeouts and dropped connections are retried with exponential backoff (honouring
``Retry-After``). The API key comes from ``OPENAI_API_KEY`` and is only ever put in
the ``Authorization`` header: never logged, never written to config.json.
"""

from __future__ import annotations

import base64
import io
import json
import math
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .._compat import LOADER, MvlsibError, httpio, jsonio, params
from .base import (
    CHAT_TEMPLATE_KWARGS,
    FINGERPRINT_DEFAULTS,
    THINKING_MAX_NEW_TOKENS,
    Backend,
    BackendOption,
    BackendStats,
    Request,
    json_options_fingerprint,
    parse_json_option,
)
from .reasoning import REASONING_MARKERS, strip_reasoning

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
REQUEST_STYLES = ("chat", "reasoning")
# "source": each release image's own bytes; "jpeg": re-encoded as JPEG quality 95 (PNG where not opaque).
IMAGE_ENCODINGS = ("source", "jpeg")
IMAGE_ENCODING_DESCRIPTIONS = {
    "source": "the release's own image bytes and mime type (PNG, lossless, for an image without them), base64 data URL",
    "jpeg": "re-encoded: JPEG q95 (RGB/L) or PNG, base64 data URL",
}
# Greedy and unpenalised, whatever the server's or model's defaults (fields of the chat-completions protocol).
NEUTRAL_SAMPLING = {
    "temperature": 0,
    "top_p": 1,
    "presence_penalty": 0,
    "frequency_penalty": 0,
    "n": 1,
}


class Malformed(ValueError):
    """A 2xx response that is not a usable chat completion (retried like a dropped connection)."""


def _chat_json(body: bytes) -> dict[str, Any]:
    """A chat-completion body, decoded; anything a model's answer cannot be read from is ``Malformed``.

    Parsed within jsonio's bounds (size, nesting, number length, no NaN): a hostile server's
    answer nested 200,000 deep or holding a 6,000-digit number is a malformed answer, not a
    RecursionError or ValueError."""
    try:
        answer = jsonio.loads(body, max_bytes=httpio.MAX_RESPONSE_BYTES)
    except jsonio.JsonLimitError as exc:
        raise Malformed(str(exc)) from None
    check_answer(answer)
    return answer


def check_answer(answer: Any) -> None:
    """Refuse (``Malformed``) a decoded chat completion without ``choices[0].message`` or whose message
    content is not text (a gateway's ``{}`` or ``[]`` is retried like a dropped connection)."""
    try:
        content = answer["choices"][0]["message"].get("content")
    except (KeyError, IndexError, TypeError, AttributeError):
        raise Malformed(f"no choices[0].message in {json.dumps(answer)[:200]}") from None
    if content is not None and not isinstance(content, (str, list)):
        raise Malformed(f"choices[0].message.content is a {type(content).__name__}, not text")
    if isinstance(content, list) and any(
        isinstance(p, dict) and not isinstance(p.get("text", ""), str) for p in content
    ):
        raise Malformed("choices[0].message.content has a part whose text is not a string")
    reasoning = answer["choices"][0]["message"].get("reasoning_content")
    if reasoning is not None and not isinstance(reasoning, str):
        raise Malformed(f"choices[0].message.reasoning_content is a {type(reasoning).__name__}, not text")


def _message_parts(answer: Any, key: str, where: str) -> tuple[str, str, str | None]:
    """(content, reasoning, finish_reason) of a chat completion: content parts joined, a reasoning
    parser's separate reasoning ("" when none)."""
    try:
        choice = answer["choices"][0]
        message = choice["message"]
        content = message.get("content")
    except (KeyError, IndexError, TypeError, AttributeError):
        raise MvlsibError(f"{where} returned no choices[0].message for {key}: {json.dumps(answer)[:300]}") from None
    if isinstance(content, list):  # some servers answer with content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    content = content if isinstance(content, str) else ""
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    return content, reasoning if isinstance(reasoning, str) else "", choice.get("finish_reason")


def cut_in_thinking(answer: Any, key: str = "", where: str = "the server") -> bool:
    """Did the budget run out while the model was still thinking? The completion stopped for its length
    and has no answer beside its thinking: a reasoning parser's ``reasoning_content`` (vLLM, SGLang)
    and empty content, or a thinking block opened in the content (``<think>``, Gemma 4's
    ``<|channel>``, Kimi's ``◁think▷``: ``parsing.REASONING_MARKERS``) and nothing after it.

    A response whose thinking carries no marker at all (the template opened the block in the prompt
    and the server has no reasoning parser) cannot be told from an answer that rambles: not recognised."""
    content, reasoning, finish = _message_parts(answer, key, where)
    return (
        finish == "length"
        and strip_reasoning(content) == ""
        and bool(reasoning or any(opener in content for opener, _ in REASONING_MARKERS))
    )


def answer_text(
    answer: Any, key: str, max_new_tokens: int, where: str = "the server", unfinished_ok: bool = False
) -> str:
    """The response text of a chat completion, as a run stores it: content parts joined, a reasoning
    parser's separate reasoning put back as a thinking block (which parsing removes again).
    A completion without ``choices[0].message`` is an ``MvlsibError``; so is one cut off while still
    thinking, unless ``unfinished_ok``: then its thinking is kept unclosed (``<think>`` + reasoning),
    which parsing reads as no answer (a format error)."""
    content, reasoning, _ = _message_parts(answer, key, where)
    unfinished = cut_in_thinking(answer, key, where)
    if unfinished and not unfinished_ok:
        raise MvlsibError(
            f"{key}: the model was still thinking when its {max_new_tokens} new tokens ran "
            "out, so it never answered; give a reasoning model room with --max-new-tokens (e.g. 4096) or "
            "--thinking-max-new-tokens, or switch thinking off (--chat-template-kwargs "
            "'{\"enable_thinking\": false}')"
        )
    if reasoning:
        content = f"<think>{reasoning}{'' if unfinished and not content else '</think>'}{content}"
    # A lone surrogate (a server cutting an emoji in half) kept recoverably: the predictions line can hold it.
    return jsonio.storable(content)


def check_body_options(max_new_tokens: int, request_style: str, chat_template_kwargs: Any) -> dict[str, Any]:
    """The options that shape a request body, checked: the keywords of ``chat_body`` after ``data_url``."""
    if max_new_tokens < 1:
        raise MvlsibError(f"--max-new-tokens must be at least 1, got {max_new_tokens}")
    if request_style not in REQUEST_STYLES:
        raise MvlsibError(f"--request-style must be one of {', '.join(REQUEST_STYLES)}, got {request_style!r}")
    return {
        "max_new_tokens": max_new_tokens,
        "request_style": request_style,
        "template_kwargs": parse_json_option("chat-template-kwargs", chat_template_kwargs),
    }


def chat_body(
    request: Request,
    model: str,
    data_url: Callable[[str], str],
    *,
    max_new_tokens: int,
    request_style: str,
    template_kwargs: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The chat-completions request body of one prompt: the one builder, used by the backend for each
    request it sends and by ``batch prepare`` for each line it writes. ``data_url`` gives an image's data URL."""
    messages = []
    for message in request.messages:
        content = []
        for part in message["content"]:
            if part["type"] == "image":
                content.append(
                    {
                        "type": "image_url",
                        "image_url": {"url": data_url(part["image_id"])},
                    }
                )
            else:
                content.append({"type": "text", "text": part["text"]})
        messages.append({"role": message["role"], "content": content})
    body: dict[str, Any] = {"model": model, "messages": messages}
    if request_style == "reasoning":
        body["max_completion_tokens"] = max_new_tokens
    else:
        body.update(NEUTRAL_SAMPLING)
        body["max_tokens"] = max_new_tokens
    if template_kwargs:
        body["chat_template_kwargs"] = dict(template_kwargs)
    return body


def settings_description(
    model: str, request_style: str, chat_template_kwargs: Any, max_new_tokens: int, image_encoding: str = "source"
) -> dict[str, Any]:
    """What a run's config.json records about the requests (the backend adds its connection)."""
    return {
        "backend": "openai",
        "model": model,
        "model_revision": None,
        "request_style": request_style,
        "sampling": NEUTRAL_SAMPLING if request_style == "chat" else "server defaults (reasoning API)",
        "chat_template_kwargs": parse_json_option("chat-template-kwargs", chat_template_kwargs),
        "max_new_tokens": max_new_tokens,
        "image_encoding": IMAGE_ENCODING_DESCRIPTIONS[image_encoding],
    }


def image_file(image, encoding: str = "source") -> tuple[bytes, str]:
    """``(bytes, mime type)`` to send for a PIL image.

    ``"source"``: the bytes the release stores for it (the loader's ``source_bytes``), which the server
    decodes to the very pixels the hf backend gets; an image without them (made in memory, or changed
    since it was decoded) as lossless PNG, the same pixels again. ``"jpeg"``: re-encoded, JPEG quality
    95 for opaque images and PNG otherwise: smaller, but the server sees other pixels than the hf backend."""
    if encoding not in IMAGE_ENCODINGS:
        raise MvlsibError(f"--image-encoding must be one of {', '.join(IMAGE_ENCODINGS)}, got {encoding!r}")
    from PIL import Image

    if encoding == "source":
        found = LOADER.source_bytes(image) if hasattr(LOADER, "source_bytes") else None
        if found is not None and found[1] in Image.MIME:
            return found[0], Image.MIME[found[1]]
    buf = io.BytesIO()
    if encoding == "jpeg" and image.mode in ("RGB", "L"):
        image.save(buf, format="JPEG", quality=95)
        return buf.getvalue(), "image/jpeg"
    image.save(buf, format="PNG")
    return buf.getvalue(), "image/png"


def encode_image(image, encoding: str = "source") -> str:
    """A base64 data URL for a PIL image (``image_file``)."""
    data, mime = image_file(image, encoding)
    return f"data:{mime};base64," + base64.b64encode(data).decode("ascii")


class OpenAIBackend(Backend):
    name = "openai"
    DESCRIPTION = "an OpenAI-compatible chat-completions server (vLLM, SGLang, hosted APIs)"
    MODEL_HELP = "the served model name"
    OPTIONS = (
        BackendOption(
            "base-url",
            "base_url",
            str,
            None,
            "openai: server base URL, e.g. http://127.0.0.1:8000/v1 (vLLM, SGLang) or "
            "https://api.openai.com/v1; no default, so prompts go only where you say. Key: OPENAI_API_KEY.",
        ),
        BackendOption("concurrency", "concurrency", params.Int(1, 4096), 8, "openai: requests in flight at once."),
        BackendOption(
            "max-retries",
            "max_retries",
            params.Int(0, 100),
            6,
            "openai: retries per request on HTTP 429/5xx, timeouts and dropped connections.",
        ),
        BackendOption(
            "retry-backoff",
            "backoff",
            params.Finite(0.0, 3600.0),
            1.0,
            "openai: first retry delay in seconds, doubled per retry (Retry-After wins).",
        ),
        BackendOption(
            "request-timeout",
            "timeout",
            params.Finite(0.001, params.MAX_SECONDS),
            120.0,
            "openai: seconds to wait for one response.",
        ),
        BackendOption(
            "request-style",
            "request_style",
            str,
            "chat",
            "openai: 'chat' sends max_tokens with neutral sampling (temperature 0, top_p 1, no "
            "penalties: vLLM, SGLang, most APIs); 'reasoning' sends max_completion_tokens and no "
            "sampling fields (hosted reasoning models, which fix them).",
            choices=REQUEST_STYLES,
        ),
        BackendOption(
            "image-encoding",
            "image_encoding",
            str,
            "source",
            "openai: 'source' sends each release image's own bytes (the pixels the hf backend sees); "
            "'jpeg' re-encodes them as JPEG quality 95, for a server or API that refuses the release's format.",
            choices=IMAGE_ENCODINGS,
        ),
        CHAT_TEMPLATE_KWARGS,
        THINKING_MAX_NEW_TOKENS,
    )

    @classmethod
    def check_options(cls, options: Mapping[str, Any]) -> None:
        defaults = {opt.param: opt.default for opt in cls.OPTIONS}
        values: dict[str, Any] = {
            **defaults,
            **{k: v for k, v in options.items() if v is not None},
        }
        base_url = values["base_url"]
        if not base_url:
            raise MvlsibError(
                "the openai backend needs --base-url (e.g. http://127.0.0.1:8000/v1 for vLLM, "
                "https://api.openai.com/v1 for OpenAI)"
            )
        if not base_url.rstrip("/").startswith(("http://", "https://")):
            raise MvlsibError(f"--base-url must start with http:// or https://, got {base_url!r}")
        try:
            httpio.check_url(base_url.rstrip("/"))
        except httpio.InvalidURL as exc:
            raise MvlsibError(f"--base-url: {exc}") from None
        if "?" in base_url or "#" in base_url:  # the request path goes after it: /v1?x becomes /v1?x/chat/...
            raise MvlsibError(
                f"--base-url: {httpio.public_url(base_url)} holds a ?query or #fragment; give the address up to "
                "its path (e.g. http://127.0.0.1:8000/v1): /chat/completions is added after it"
            )
        if values["image_encoding"] not in IMAGE_ENCODINGS:
            raise MvlsibError(
                f"--image-encoding must be one of {', '.join(IMAGE_ENCODINGS)}, got {values['image_encoding']!r}"
            )
        if values["concurrency"] < 1:
            raise MvlsibError(f"--concurrency must be at least 1, got {values['concurrency']}")
        timeout, max_retries, backoff = (
            values["timeout"],
            values["max_retries"],
            values["backoff"],
        )
        if values["thinking_max_new_tokens"] < 0:
            raise MvlsibError(
                f"--thinking-max-new-tokens must be 0 (refuse) or more, got {values['thinking_max_new_tokens']}"
            )
        if not timeout > 0 or max_retries < 0 or not backoff >= 0:
            raise MvlsibError(
                f"--request-timeout must be > 0, --max-retries >= 0 and --retry-backoff >= 0; got "
                f"{timeout:g}, {max_retries} and {backoff:g}"
            )
        check_body_options(
            values.get("max_new_tokens", 1),
            values["request_style"],
            values.get("chat_template_kwargs"),
        )

    @classmethod
    def fingerprint(cls, options: Mapping[str, Any]) -> dict[str, Any]:
        return {
            **FINGERPRINT_DEFAULTS,
            **json_options_fingerprint(options, ("chat_template_kwargs",)),
        }

    def __init__(  # noqa: PLR0913 - one keyword per --backend openai option; the redesign makes them a value
        self,
        model: str,
        *,
        base_url: str | None = None,
        concurrency: int = 8,
        max_new_tokens: int = 8,
        timeout: float = 120.0,
        max_retries: int = 6,
        backoff: float = 1.0,
        api_key_env: str = "OPENAI_API_KEY",
        request_style: str = "chat",
        chat_template_kwargs: Any = None,
        thinking_max_new_tokens: int = 2048,
        image_encoding: str = "source",
    ) -> None:
        self.check_options(
            {
                "image_encoding": image_encoding,
                "thinking_max_new_tokens": thinking_max_new_tokens,
                "max_new_tokens": max_new_tokens,
                "base_url": base_url,
                "concurrency": concurrency,
                "timeout": timeout,
                "max_retries": max_retries,
                "backoff": backoff,
                "request_style": request_style,
                "chat_template_kwargs": chat_template_kwargs,
            }
        )
        assert base_url is not None  # check_options refuses a missing one
        self.request_style = request_style
        self.image_encoding = image_encoding
        self.template_kwargs = parse_json_option("chat-template-kwargs", chat_template_kwargs)
        self.model_id = model
        self.base_url = base_url.rstrip("/")
        self.concurrency = concurrency
        self.preferred_chunk = concurrency * 4
        self.max_new_tokens = max_new_tokens
        self.thinking_max_new_tokens = thinking_max_new_tokens
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        try:  # checked before any use: a pasted newline must not reach a header (nor a traceback)
            self._api_key = httpio.env_credential(api_key_env)
        except httpio.CredentialError as exc:
            raise MvlsibError(str(exc)) from None
        self._encoded: dict[str, str] = {}
        self.images: dict[str, Any] = {}
        self.stats = BackendStats()
        self._stats_lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="mvlsib-openai")

    def _data_url(self, image_id: str) -> str:
        url = self._encoded.get(image_id)
        if url is None:
            try:
                image = self.images[image_id]
            except KeyError:
                raise MvlsibError(f"image {image_id!r} is not in the image table of this release") from None
            url = self._encoded[image_id] = encode_image(image, self.image_encoding)
        return url

    def payload(self, request: Request, max_new_tokens: int | None = None) -> dict[str, Any]:
        return chat_body(
            request,
            self.model_id,
            self._data_url,
            max_new_tokens=max_new_tokens or self.max_new_tokens,
            request_style=self.request_style,
            template_kwargs=self.template_kwargs,
        )

    def _post(self, body: bytes) -> dict[str, Any]:
        """POST one request; transport faults and malformed answers are retried, then a clear error."""
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        url = f"{self.base_url}/chat/completions"
        last = ""
        for attempt in range(self.max_retries + 1):
            delay = self.backoff * (2**attempt)
            try:
                # The transport refuses redirects (the key must never follow one) and caps time and size.
                resp = httpio.request(url, method="POST", body=body, headers=headers, timeout=self.timeout)
                if resp.status >= 400:
                    detail = resp.body[:300].decode("utf-8", "replace")
                    last = f"HTTP {resp.status}: {detail}"
                    if resp.status not in RETRY_STATUS:
                        raise MvlsibError(
                            self._redact(f"{url} answered {last}; not retrying (check --model and --base-url)")
                        )
                    # The server knows best when to come back, if it says so readably (nan, -1, garbage: ours).
                    wait = httpio.retry_after(resp.header("retry-after"), cap=math.inf)
                    if wait is not None and wait > httpio.MAX_RETRY_AFTER_S:
                        # Waiting less than asked would only be refused again, and waiting that long stalls
                        # every request behind this one: stop now; the run resumes where it stopped.
                        raise MvlsibError(
                            f"{url} answered HTTP {resp.status} and asks to come back in {wait:,.0f} s (over the "
                            f"{httpio.MAX_RETRY_AFTER_S:g} s a request waits); run the same command again later "
                            "to resume"
                        )
                    delay = delay if wait is None else wait
                else:
                    return _chat_json(resp.body)
            except httpio.TransportError as exc:
                if not exc.retryable:
                    raise MvlsibError(self._redact(str(exc))) from None
                last = str(exc)
            except Malformed as exc:
                last = f"a malformed response ({exc})"
            if attempt < self.max_retries:
                self.stats.retries += 1
                time.sleep(delay)
        raise MvlsibError(self._redact(f"{url}: giving up after {self.max_retries + 1} attempts; last error: {last}"))

    def _redact(self, text: str) -> str:
        return httpio.redact(text, (self._api_key,))

    def _ask(self, request: Request, max_new_tokens: int) -> dict[str, Any]:
        answer = self._post(json.dumps(self.payload(request, max_new_tokens), ensure_ascii=False).encode("utf-8"))
        with self._stats_lock:  # requests run in the pool's threads
            self.stats.requests += 1
        return answer

    def _one(self, request: Request) -> str:
        """One prompt's response. Cut off inside a thinking block, it is asked for once more with the
        thinking budget: at temperature 0 the model repeats its start and goes on (the first tokens are
        generated twice, at most --max-new-tokens + --thinking-max-new-tokens in all). Prefilling the
        cut-off thinking as an assistant message (vLLM's ``continue_final_message``) is not used: hosted
        APIs do not accept it, and chat templates re-render a thinking block in an assistant message
        (Qwen3.5-9B's writes a closed empty block before an unclosed one, Gemma 4's drops an unclosed
        thought channel), so the model would not continue its own block."""
        where = f"{self.base_url}/chat/completions"
        budget = self.max_new_tokens
        try:
            answer = self._ask(request, budget)
            if self.thinking_max_new_tokens > budget and cut_in_thinking(answer, request.key, where):
                budget = self.thinking_max_new_tokens
                answer = self._ask(request, budget)
                with self._stats_lock:
                    self.stats.thinking_continued += 1
            if self.thinking_max_new_tokens and cut_in_thinking(answer, request.key, where):
                with self._stats_lock:  # stored unclosed: a format error, the run goes on
                    self.stats.thinking_unfinished += 1
            return answer_text(answer, request.key, budget, where, unfinished_ok=self.thinking_max_new_tokens > 0)
        except MvlsibError as exc:
            raise MvlsibError(self._redact(str(exc))) from None

    def generate(self, requests: list[Request]) -> list[str]:
        for r in requests:  # encode in this thread, once per image
            for image_id in r.image_ids:
                self._data_url(image_id)
        return list(self._pool.map(self._one, requests))

    def describe(self) -> dict[str, Any]:
        return {
            **settings_description(
                self.model_id,
                self.request_style,
                self.template_kwargs,
                self.max_new_tokens,
                self.image_encoding,
            ),
            "base_url": httpio.public_url(self.base_url),
            "concurrency": self.concurrency,
            "thinking_max_new_tokens": self.thinking_max_new_tokens,
            "thinking_continuation": (
                f"a response cut off inside a thinking block is asked for again with max tokens "
                f"{self.thinking_max_new_tokens}; still unfinished, a format error"
                if self.thinking_max_new_tokens > self.max_new_tokens
                else "none (a response cut off inside a thinking block is "
                + ("a format error)" if self.thinking_max_new_tokens else "refused with an error)")
            ),
        }

    def close(self) -> None:
        self._pool.shutdown(wait=True)
