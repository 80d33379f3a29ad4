"""Model backends and their registry.

A backend is one module here with one ``Backend`` subclass that declares its own
command-line options (``OPTIONS``). Both commands that run models (``mvlsib-eval run``
and ``mvlsib-build verify-images``) build their backend flags from this registry, so a
new backend is one module, one ``REGISTRY`` row, its docs and its tests
(docs/contributing/backend.md).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from .._compat import MvlsibError
from .base import Backend, BackendOption, Request

# name -> (module in this package, class). Modules are imported only when asked for, and
# importing one must stay light (heavy libraries are imported inside the backend's methods).
REGISTRY: dict[str, tuple[str, str]] = {
    "hf": ("hf", "HFBackend"),
    "openai": ("openai", "OpenAIBackend"),
}
BACKENDS = tuple(REGISTRY)


def backend_class(name: str) -> type[Backend]:
    try:
        module, cls = REGISTRY[name]
    except KeyError:
        raise MvlsibError(f"unknown backend {name!r}; expected one of {', '.join(BACKENDS)}") from None
    return getattr(importlib.import_module(f".{module}", __name__), cls)


def backend_options() -> list[tuple[str, BackendOption]]:
    """Every backend's options as (backend, option), in registry order, each flag once."""
    out, seen = [], set()
    for name in BACKENDS:
        for opt in backend_class(name).OPTIONS:
            if opt.flag not in seen:
                seen.add(opt.flag)
                out.append((name, opt))
    return out


def backends_help(attribute: str) -> str:
    """``name: text; ...`` over the registry, ``text`` being each backend class's ``attribute``."""
    return "; ".join(f"{name}: {getattr(backend_class(name), attribute)}" for name in BACKENDS) + "."


def options_for(name: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """The constructor keywords of backend ``name`` from parsed command-line ``values`` (keyed by ``param``)."""
    return {opt.param: values[opt.param] for opt in backend_class(name).OPTIONS if opt.param in values}


def checked_options(name: str, values: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``values`` (keyed by ``param``) held to backend ``name``'s own option declarations, as the command
    line holds them: a choice among its choices, a value its click type converts; ``where`` names the
    file they came from (a batch manifest) in the one-line refusal."""
    import click

    declared = {opt.param: opt for opt in backend_class(name).OPTIONS}
    out = {}
    for param, value in values.items():
        opt = declared.get(param)
        if opt is None:
            raise MvlsibError(f"{where}: {param!r} is not an option of the {name} backend")
        if value is not None and opt.choices is not None and value not in opt.choices:
            raise MvlsibError(f"{where}: {param} must be one of {', '.join(opt.choices)}, got {value!r}")
        if value is not None and isinstance(opt.kind, click.ParamType):
            try:
                value = opt.kind.convert(value, None, None)
            except click.BadParameter as exc:
                raise MvlsibError(f"{where}: {param}: {exc.message}") from None
        elif value is not None and opt.kind in (str, bool) and not isinstance(value, opt.kind):
            raise MvlsibError(f"{where}: {param} must be a {opt.kind.__name__}, got {value!r}")
        out[param] = value
    return out


def make_backend(name: str, **options: Any) -> Backend:
    """Build backend ``name`` (see ``REGISTRY``) with its constructor keywords."""
    return backend_class(name)(**options)


__all__ = [
    "Backend",
    "BackendOption",
    "Request",
    "BACKENDS",
    "REGISTRY",
    "backend_class",
    "backend_options",
    "backends_help",
    "options_for",
    "make_backend",
]
