"""What ``mvlsib.hubio`` takes from huggingface_hub beyond its public API, named one by one against the
installed version (pyproject: ``huggingface-hub>=2.2``; the ``lowest`` session runs this at the lower bound).

An upgrade that renames or moves one of these fails here, naming it, instead of letting commands reach the Hub
through an unbounded client. Public API used besides: ``huggingface_hub.set_client_factory``, ``get_session``.
"""

from __future__ import annotations

import inspect

import huggingface_hub
import pytest
from huggingface_hub.utils import _http

from mvlsib import hubio


def test_the_factory_in_force_is_read_from_the_private_global_hubio_restores():
    """``hubio.session`` puts back the factory in force when a command ends (a user's own factory, in a
    notebook, survives our commands); huggingface_hub has no getter for it."""
    assert hasattr(_http, "_GLOBAL_CLIENT_FACTORY"), "huggingface_hub.utils._http._GLOBAL_CLIENT_FACTORY is gone"
    previous = _http._GLOBAL_CLIENT_FACTORY

    def mine():
        return previous()

    huggingface_hub.set_client_factory(mine)
    try:
        assert _http._GLOBAL_CLIENT_FACTORY is mine
        with hubio.session("ORG/NAME", timeout=5):
            assert _http._GLOBAL_CLIENT_FACTORY is not mine
        assert _http._GLOBAL_CLIENT_FACTORY is mine
    finally:
        huggingface_hub.set_client_factory(previous)


def test_the_request_hook_hubio_keeps_is_the_librarys_own():
    """``hubio.bounded_client`` keeps the library's request hook (its headers and logging), which lives in a
    private module; the library's default client is built with the same one."""
    from huggingface_hub.utils._http import hf_request_event_hook

    assert callable(hf_request_event_hook)
    assert "hf_request_event_hook" in inspect.getsource(_http.default_client_factory)
    client = hubio.bounded_client(5)
    try:
        assert hf_request_event_hook in client.event_hooks["request"]
    finally:
        client.close()


@pytest.mark.parametrize("library", ["huggingface_hub", "datasets", "httpx2"])
def test_library_errors_are_told_apart_by_the_module_they_are_raised_in(library):
    """``hubio`` turns a builtin exception into a one-line Hub problem only when it was raised inside the
    libraries that read answers (the module of the innermost frame); the toolkit's own bugs stay tracebacks."""
    module = __import__(library)
    scope = {"__name__": f"{library}.probe"}
    exec("def fail():\n    raise TypeError('an answer the library could not read')", scope)
    with pytest.raises(TypeError) as caught:
        scope["fail"]()
    assert hubio._raised_in_library(caught.value), module.__name__
    with pytest.raises(TypeError) as ours:
        raise TypeError("a bug of ours")
    assert not hubio._raised_in_library(ours.value)
