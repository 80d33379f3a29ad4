"""Fixtures of the vLLM tests: each family's tiny model (``tiny_models.families``, ``wide=True``: a head
dimension vLLM's CPU attention takes), built once, and served once per test session (tests/support/vllm_servers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import EVAL_LANGUAGES
from support.vllm_servers import Server, engine_python, hub_vision_keys, start_server
from tiny_models.families import build_family
from tiny_models.llava import sib_sentences
from tiny_models.teach import teach_letters

# Families with a CLIP/SigLIP tower whose weights vLLM loads only under the Hub checkpoints' names.
HUB_VISION_LAYOUT = {"gemma3", "llava_1_5", "llava_onevision"}


@pytest.fixture(scope="session")
def vllm_texts(sib_dir) -> list[str]:
    return sib_sentences(sib_dir, EVAL_LANGUAGES, limit=150)


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory, vllm_texts):
    """``tiny_model(family)``: the family's wide tiny model folder, taught to answer letters, built once
    per session."""
    built: dict[str, Path] = {}

    def get(family: str) -> Path:
        if family not in built:
            folder = build_family(family, tmp_path_factory.mktemp(family), vllm_texts, wide=True)
            if family in HUB_VISION_LAYOUT:
                hub_vision_keys(folder)
            built[family] = teach_letters(folder)
        return built[family]

    return get


@pytest.fixture(scope="session")
def vllm_server(tmp_path_factory, tiny_model):
    """``vllm_server(family)``: a running server of the family's tiny model, one per session; at most one
    runs at a time (each takes most of a 2-core machine), the previous one stopped when the next starts."""
    engine_python()
    running: dict[str, Server] = {}

    def get(family: str) -> Server:
        if family not in running:
            for other in list(running):
                running.pop(other).stop()
            model = tiny_model(family)
            running[family] = start_server(family, model, tmp_path_factory.mktemp("vllm-log") / f"{family}.log")
        server = running[family]
        if server.process.poll() is not None:
            pytest.fail(f"vLLM serving {family} died:\n{server.log_tail()}", pytrace=False)
        return server

    yield get
    for server in running.values():
        server.stop()
