"""Every number read from the environment goes through ``params.env_number``, enforced.

``float(os.environ[...])`` accepts ``1e300`` seconds (a deadline that overflows its timer thread),
``nan`` (never compared true), a 5,000-digit count; ``params.ENV_NUMBERS`` gives each variable its
bounds, as ``params.Finite``/``Int`` give every option. The source is read with ``ast``: every read
of the environment by a literal name (``os.environ[...]``, ``os.environ.get``, ``os.getenv``, an
``env`` mapping passed in for tests) must name a variable listed below as text, and the numbers are
read in ``params.py`` alone.
"""

from __future__ import annotations

import ast
from pathlib import Path

from support import REPO

from mvlsib import params

SRC = REPO / "src" / "mvlsib"

# variables read as text -> why they are not numbers
TEXT_VARIABLES: dict[str, str] = {
    "HF_TOKEN": "a credential, only hidden from messages",
    "HF_HUB_OFFLINE": "a switch (1/ON/YES/TRUE)",
    "HF_ENDPOINT": "a URL, checked by the boundary",
    "MVLSIB_RELEASE": "a path, in the generated lmms-eval/inspect tasks",
}
# modules that read the environment by a variable name: (module, why)
BY_NAME = {
    "params.py": "env_number itself",
    "httpio.py": "env_credential: a key checked by check_credential",
    "boundary.py": "HF_ENDPOINT and its kin, as text, checked at start",
}


def _environ_reads(tree: ast.AST) -> list[tuple[int, str | None]]:
    """(line, variable name or None when not a literal) of each read of an environment mapping."""

    def is_env(node: ast.AST) -> bool:
        text = ast.unparse(node)
        return text.endswith("environ") or text in {"env", "environ"}

    out = []
    for node in ast.walk(tree):
        key = None
        if isinstance(node, ast.Subscript) and is_env(node.value) and isinstance(node.ctx, ast.Load):
            key = node.slice
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            if (node.func.attr == "get" and is_env(node.func.value)) or ast.unparse(node.func) == "os.getenv":
                key = node.args[0]
        if key is not None:
            name = key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None
            out.append((node.lineno, name))
    return out


def _reads() -> list[tuple[str, int, str | None]]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        for line, name in _environ_reads(ast.parse(path.read_text(encoding="utf-8"))):
            found.append((rel, line, name))
    return found


def test_numbers_come_from_the_environment_through_env_number_only():
    wrong = []
    for rel, line, name in _reads():
        if name is None:
            if Path(rel).name not in BY_NAME:
                wrong.append(f"{rel}:{line}: reads the environment by a computed name")
        elif name in params.ENV_NUMBERS:
            if rel != "params.py":
                wrong.append(f"{rel}:{line}: reads {name} itself; use params.env_number({name!r})")
        elif name not in TEXT_VARIABLES:
            wrong.append(f"{rel}:{line}: reads {name}: add it to params.ENV_NUMBERS, or here if it is text")
    assert not wrong, "\n".join(wrong)


def test_the_walk_sees_the_reads():
    """The check above finds reads at all (a refactor of the walk must not make it pass vacuously)."""
    names = {name for _, _, name in _reads()}
    assert {"HF_TOKEN", "HF_HUB_OFFLINE"} <= names
    tree = ast.parse("import os\nx = float(os.environ.get('OMP_NUM_THREADS'))\ny = os.getenv('RANK')\n")
    assert sorted(n or "" for _, n in _environ_reads(tree)) == ["OMP_NUM_THREADS", "RANK"]
