"""The backend interface: what the runner needs from a model, and nothing more.

A backend receives the image table once (``set_images``: image id -> PIL image, all
images of the release) and then lists of requests; it returns one response string
per request, in request order. Requests carry the chat messages with image parts
that name image ids, never pixels, so a backend can decode/preprocess/encode each
image once and reuse it for every prompt that shows it.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class BackendOption:
    """A command-line option a backend owns: ``--{flag}``, passed to the constructor as ``param``.

    ``choices`` restricts the value; ``kind`` is ``str``, ``int``, ``float`` or ``bool`` (a flag).
    """

    flag: str
    param: str
    kind: type
    default: Any
    help: str
    choices: tuple[str, ...] | None = None


# Options more than one backend owns (one flag, one meaning, wherever it is used).
CHAT_TEMPLATE_KWARGS = BackendOption(
    "chat-template-kwargs",
    "chat_template_kwargs",
    str,
    None,
    "JSON object for the model's chat template (hf: passed to apply_chat_template; openai: sent as "
    "chat_template_kwargs, which vLLM and SGLang pass on), e.g. '{\"enable_thinking\": false}'.",
)


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
    #: the command-line options this backend owns (see BackendOption)
    OPTIONS: tuple[BackendOption, ...] = ()
    #: how many requests the runner should hand over at once (results are saved per call)
    preferred_chunk: int = 32

    @classmethod
    def preflight(cls, model: str, **options: Any) -> None:
        """Refuse, in a moment and before the run builds its prompts, a model that cannot be
        used (a wrong path or id, a wrong architecture): building every prompt of a full run
        takes minutes. The default checks nothing; the constructor still checks everything."""

    def set_images(self, images: Mapping[str, Any]) -> None:
        """The image table (id -> PIL image). Called once, before any ``generate``."""
        self.images = dict(images)

    @abc.abstractmethod
    def generate(self, requests: list[Request]) -> list[str]:
        """One response per request, in request order."""

    def describe(self) -> dict[str, Any]:
        """Everything about this backend a reader needs to reproduce the run (no secrets)."""
        return {"backend": self.name}

    def close(self) -> None:
        """Release resources (threads, GPU memory)."""
