"""Real vLLM servers for tests/vllm_engine/ (the ``vllm`` environment: ``nox -s vllm``).

The engine runs from its own venv (``$MVLSIB_VLLM_PYTHON``, made by the session from
``tests/envs/vllm.txt``): vLLM's CPU build pins a transformers the [eval] extra does not accept.
Each family's tiny model is served on 127.0.0.1, on a free port; a server that is not up within
``START_TIMEOUT`` fails the test with its log. (Not a folder named ``vllm``: tests/ is on sys.path,
and it would shadow the package.)
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

ENGINE_PYTHON = os.environ.get("MVLSIB_VLLM_PYTHON")
# Up to 5 images a prompt (i2s and s2i at k=5 show 5 and 4): vLLM's default is 1.
MAX_IMAGES = 5
# A cold start on a busy 2-core machine: imports (~15 s) and the engine's profiling run.
START_TIMEOUT = float(os.environ.get("MVLSIB_VLLM_START_TIMEOUT", "300"))
LOG_TAIL = 60


# LLaVA-1.5's template for serving (docs/evaluation/backends.md, "Running on vLLM"): the llava-hf/llava-1.5-7b-hf
# chat template (tests/tiny_models/families/llava_1_5.py, its source named there) with two changes, the two
# things vLLM would otherwise do differently from the hf backend: each image stays where the message puts it
# (the original moves every image to the start of the turn, which separates an s2i option letter from its
# image), and the template writes BOS (vLLM tokenizes chat prompts without special tokens; the hf backend's
# tokenizer adds <s>). A turn's parts are joined as the hf backend joins them (an image is its token alone, the
# prompt's own text around it), with one space after the turn.
LLAVA_IN_PLACE_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}{% if message['role'] != 'system' %}"
    "{{ message['role'].upper() + ': ' }}{% endif %}"
    "{% if message['content'] is string %}{{ message['content'] + ' ' }}{% else %}"
    "{% for content in message['content'] %}{% if content['type'] in ('image', 'image_url') %}{{ '<image>' }}"
    "{% elif content['type'] == 'text' %}{{ content['text'] }}{% endif %}{% endfor %}{{ ' ' }}{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}{{ 'ASSISTANT:' }}{% endif %}"
)
# Engine flags a family needs beyond serve_args: {family: {flag: text of a file to write and pass}}.
SERVE_FILES = {"llava_1_5": {"--chat-template": LLAVA_IN_PLACE_TEMPLATE}}


def family_flags(family: str, folder: Path) -> tuple[str, ...]:
    """``SERVE_FILES`` of ``family`` written under ``folder``, as engine flags."""
    flags: list[str] = []
    for flag, text in SERVE_FILES.get(family, {}).items():
        path = folder / f"{family}{flag.replace('-', '_')}.jinja"
        path.write_text(text, encoding="utf-8")
        flags += [flag, str(path)]
    return tuple(flags)


def log_excerpt(log: Path) -> str:
    """The exception lines of an engine's log (the root cause is logged by a child process, far above the
    parent's traceback), then its last lines."""
    lines = log.read_text("utf-8", "replace").splitlines()
    errors = dict.fromkeys(line for line in lines if re.search(r"\w(Error|Exception): ", line))
    return "\n".join([*errors, "...", *lines[-LOG_TAIL:]])


def engine_python() -> str:
    if ENGINE_PYTHON and Path(ENGINE_PYTHON).exists():
        return ENGINE_PYTHON
    msg = (
        f"no vLLM engine at MVLSIB_VLLM_PYTHON={ENGINE_PYTHON!r}: run these tests with `nox -s vllm`, "
        "which makes the engine's venv from tests/envs/vllm.txt"
    )
    if os.environ.get("CI"):
        pytest.fail(msg, pytrace=False)
    pytest.skip(msg)


def serve_args(model: Path, name: str, port: int, *, stats: bool = False) -> list[str]:
    """The ``vllm serve`` flags MVL-SIB needs (docs/evaluation/backends.md, "Running on vLLM"), plus what a tiny model
    on a CPU needs: float32 (the hf backend's dtype on a CPU), block size a multiple of 32, no compilation.
    ``stats``: keep the engine's statistics (its /metrics counters), which the tests do not read."""
    return [
        "--model",
        str(model),
        "--served-model-name",
        name,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--limit-mm-per-prompt",
        json.dumps({"image": MAX_IMAGES}),
        "--max-model-len",
        "4096",
        "--dtype",
        "float32",
        "--block-size",
        "32",
        "--enforce-eager",
        *(() if stats else ("--disable-log-stats",)),
        "--distributed-executor-backend",
        "uni",
    ]


def engine_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            # The CPU build reserves this much memory for its KV cache (GiB); its default is most of the machine.
            "VLLM_CPU_KVCACHE_SPACE": "1",
            # One process instead of three (API server, engine core, worker): each imports vLLM for ~15 s.
            "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
            "VLLM_NO_USAGE_STATS": "1",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
        }
    )
    # The engine binds its own threads; the test workers' one-thread setting would starve it.
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env.pop(name, None)
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def post_json(url: str, body: dict, timeout: float = 120.0) -> dict:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode("utf-8"), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.load(resp)


@dataclass
class Server:
    family: str
    model: Path
    name: str
    port: int
    process: subprocess.Popen
    log: Path
    started_in: float = 0.0

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.root}/v1"

    def log_tail(self) -> str:
        return log_excerpt(self.log)

    def tokenize(self, messages: list[dict], **template: object) -> list[int]:
        """The prompt token ids the server builds from chat messages (images expanded to their tokens)."""
        body = {"model": self.name, "messages": messages, "add_generation_prompt": True}
        if template:
            body["chat_template_kwargs"] = dict(template)
        return post_json(f"{self.root}/tokenize", body)["tokens"]

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)


class EngineError(RuntimeError):
    """A server that exited or did not come up; the message holds its log's excerpt."""


def launch(
    name: str,
    model: Path,
    log: Path,
    *,
    python: str,
    extra: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
    stats: bool = False,
) -> Server:
    """Start ``vllm serve`` of ``model`` as ``name`` on a free port and wait (at most ``START_TIMEOUT``) until
    it answers /health. ``extra``: more engine flags; ``env``: more environment (over ``engine_env()``)."""
    port = free_port()
    started = time.monotonic()
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [python, "-m", "vllm.entrypoints.openai.api_server", *serve_args(model, name, port, stats=stats), *extra],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**engine_env(), **(env or {})},
            start_new_session=True,  # its own process group: stopped with everything it started
        )
    server = Server(name, model, name, port, process, log)
    while time.monotonic() - started < START_TIMEOUT:
        if process.poll() is not None:
            raise EngineError(f"vLLM serving {name} exited with {process.returncode}:\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(f"{server.root}/health", timeout=5) as resp:
                if resp.status == 200:
                    server.started_in = time.monotonic() - started
                    return server
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(1)
    server.stop()
    raise EngineError(f"vLLM serving {name} was not up within {START_TIMEOUT:.0f} s:\n{server.log_tail()}")


def start_server(family: str, model: Path, log: Path) -> Server:
    try:
        return launch(family, model, log, python=engine_python(), extra=family_flags(family, log.parent))
    except EngineError as exc:
        pytest.fail(str(exc), pytrace=False)


def hub_vision_keys(model_dir: Path) -> Path:
    """Rename (in place) a CLIP or SigLIP vision tower's weights to the Hub checkpoints' layout,
    ``vision_tower.vision_model.*``: transformers 5.24 saves them as ``vision_tower.*``, which vLLM's
    LLaVA loaders refuse ("no module or parameter named 'vision_tower.embeddings'"); transformers loads both."""
    from safetensors.torch import load_file, save_file

    path = model_dir / "model.safetensors"
    weights = load_file(path)
    renamed = {
        ("vision_tower.vision_model." + k.removeprefix("vision_tower."))
        if k.startswith("vision_tower.") and not k.startswith("vision_tower.vision_model.")
        else k: v
        for k, v in weights.items()
    }
    if renamed.keys() != weights.keys():
        save_file(renamed, path, metadata={"format": "pt"})
    return model_dir
