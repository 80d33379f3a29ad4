"""The backend interface: what the runner needs from a model, and nothing more.

A backend receives the image table once (``set_images``: image id -> PIL image, all
images of the release) and then lists of requests; it returns one response string
per request, in request order. Requests carry the chat messages with image parts
that name image ids, never pixels, so a backend can decode/preprocess/encode each
image once and reuse it for every prompt that shows it.
"""

from __future__ import annotations

import abc
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._compat import MvlsibError, params, readers


@dataclass(frozen=True)
class BackendOption:
    """A command-line option a backend owns: ``--{flag}``, passed to the constructor as ``param``.

    ``choices`` restricts the value; ``kind`` is ``str``, ``bool`` (a flag) or a click type of ``params``
    (numbers bounded there: ``tests/architecture/test_bounded_options.py``).
    """

    flag: str
    param: str
    kind: Any
    default: Any
    help: str
    choices: tuple[str, ...] | None = None


# Options more than one backend owns (one flag, one meaning, wherever it is used).
CHAT_TEMPLATE_KWARGS = BackendOption(
    "chat-template-kwargs",
    "chat_template_kwargs",
    params.JsonObject(),
    None,
    "JSON object for the model's chat template (hf: passed to apply_chat_template; openai: sent as "
    "chat_template_kwargs, which vLLM and SGLang pass on), e.g. '{\"enable_thinking\": false}'.",
)

THINKING_MAX_NEW_TOKENS = BackendOption(
    "thinking-max-new-tokens",
    "thinking_max_new_tokens",
    params.Int(0, params.MAX_TOKENS),
    2048,
    "new-token budget when thinking is on. hf: used when the chat template opens a thinking block, writes a "
    "marker that lets the model open one (Gemma 4's <|think|>), or --chat-template-kwargs asks for it "
    "(enable_thinking: true). hf and openai: a response cut off inside a thinking block (its markers, or a "
    "reasoning parser's reasoning_content with no answer) is generated again with this budget (greedy, it "
    "repeats its start and goes on); still unfinished, it is a format error. 0 refuses thinking models instead.",
)


# Every run config has recorded the model revision and the weights dtype; a backend without
# either records these values, so configs written before backends owned their options resume.
FINGERPRINT_DEFAULTS: dict[str, Any] = {"model_revision": None, "dtype": "auto"}


def parse_json_option(flag: str, value: Any) -> dict[str, Any]:
    """A ``--flag JSON`` value (a JSON object) as a dict; ``None``/empty gives ``{}``."""
    if value is None or value == "" or value == {}:
        return {}
    if isinstance(value, dict):
        return dict(value)
    if not isinstance(value, str):
        raise MvlsibError(f"--{flag} must be a JSON object, e.g. '{{\"key\": 1}}', got {type(value).__name__}")
    return readers.parse_option("json_option", value, f"--{flag}")


def json_options_fingerprint(options: Mapping[str, Any], params: tuple[str, ...]) -> dict[str, Any]:
    """The JSON-object options among ``params`` that are set, parsed (unset ones stay out of the
    fingerprint, so runs made before an option existed keep theirs)."""
    out: dict[str, Any] = {}
    for param in params:
        value = parse_json_option(param.replace("_", "-"), options.get(param))
        if value:
            out[param] = value
    return out


def file_sha256(flag: str, path: str) -> str:
    """The sha256 of a file an option names (a chat template), or a message saying it cannot be read."""
    try:
        data = readers.read_limited(path, 1 << 20, fix=f"--{flag} names a small text file (at most 1 MiB)")
    except readers.ReadError as exc:
        raise MvlsibError(f"--{flag} {exc}") from None
    return hashlib.sha256(data).hexdigest()


def one_line(exc: BaseException) -> str:
    """The first line of an exception's message (libraries' messages run over many lines)."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


@dataclass
class BackendStats:
    """What a backend counted while it ran: read by tests and benchmarks (how often a mechanism was used),
    never by results. One typed field per counter, so a misspelt counter is an error, not a new key."""

    # both backends
    thinking_continued: int = 0  # responses cut off while thinking, asked again with the thinking budget
    thinking_unfinished: int = 0  # ... and still thinking then (stored as they are: format errors)
    # openai
    requests: int = 0
    retries: int = 0
    # hf
    generate_calls: int = 0
    prompt_tokens: int = 0
    unbatched_prompts: int = 0  # prompts a guard sent through alone instead of in a batch
    images_preprocessed: int = 0  # images through the image processor (its memo missed)
    image_cache_hits: int = 0  # image tuples the processor memo served
    image_features_computed: int = 0  # feature-cache units encoded by the tower
    image_features_reused: int = 0  # ... taken from the cache
    image_features_plain: int = 0  # ... on the plain path (cache off, refused or self-checking)
    prefix_tokens_computed: int = 0  # KV-prefix tokens computed once
    prefix_tokens_reused: int = 0  # ... and reused, times the rows that reused them
    kv_prefix_batches: int = 0
    kv_prefix_image_batches: int = 0


@dataclass(frozen=True)
class Request:
    """One prompt. ``messages``: chat messages whose content parts are
    ``{"type": "text", "text": ...}`` or ``{"type": "image", "image_id": ...}``."""

    key: str
    messages: tuple[dict[str, Any], ...]
    image_ids: tuple[str, ...] = field(default=())


class Backend(abc.ABC):
    """Subclass and implement ``generate``; ``describe`` goes into config.json."""

    name: str = "backend"
    #: what the backend runs, for --backend's help
    DESCRIPTION: str = ""
    #: what --model names for this backend, for --model's help
    MODEL_HELP: str = ""
    #: the command-line options this backend owns (see BackendOption)
    OPTIONS: tuple[BackendOption, ...] = ()
    #: how many requests the runner should hand over at once (results are saved per call)
    preferred_chunk: int = 32

    @classmethod
    def check_options(cls, _options: Mapping[str, Any], /) -> None:
        """Refuse missing or malformed options (keyed by ``param``) with an ``MvlsibError``, in a
        moment and before any prompt is built. The default checks nothing."""
        return None

    @classmethod
    def fingerprint(cls, _options: Mapping[str, Any], /) -> dict[str, Any]:
        """The options that change what the model answers, as they go into the run's fingerprint
        (config.json): two runs, or shards, with different ones are not parts of one evaluation."""
        return dict(FINGERPRINT_DEFAULTS)

    @classmethod
    def preflight(cls, model: str, **options: Any) -> None:  # noqa: ARG003 - the default; overrides read them
        """Refuse, in a moment and before the run builds its prompts, a model that cannot be
        used (a wrong path or id, a wrong architecture): building every prompt of a full run
        takes minutes. The default checks nothing; the constructor still checks everything."""
        return None

    def set_images(self, images: Mapping[str, Any]) -> None:
        """The image table (id -> PIL image). Called once, before any ``generate``."""
        self.images = dict(images)

    @abc.abstractmethod
    def generate(self, requests: list[Request]) -> Sequence[str | None]:
        """One response per request, in request order; ``None`` for a request the backend has no
        answer for (the batch route's missing or failed results): the runner leaves it pending."""

    def describe(self) -> dict[str, Any]:
        """Everything about this backend a reader needs to reproduce the run (no secrets)."""
        return {"backend": self.name}

    def close(self) -> None:
        """Release resources (threads, GPU memory)."""
        return None
