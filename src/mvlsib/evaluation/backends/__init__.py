"""Model backends. ``make_backend(name, **options)`` builds one by name."""

from __future__ import annotations

from typing import Any

from .base import Backend, Request

BACKENDS = ("hf", "openai")


def make_backend(name: str, **options: Any) -> Backend:
    """``hf`` (transformers, local) or ``openai`` (OpenAI-compatible HTTP server)."""
    if name == "hf":
        from .hf import HFBackend

        return HFBackend(**options)
    if name == "openai":
        from .openai import OpenAIBackend

        return OpenAIBackend(**options)
    from .._compat import MvlsibError

    raise MvlsibError(f"unknown backend {name!r}; expected one of {', '.join(BACKENDS)}")


__all__ = ["Backend", "Request", "BACKENDS", "make_backend"]
