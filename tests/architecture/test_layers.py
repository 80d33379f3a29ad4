"""The floor plan of docs/architecture.md, enforced: no import runs against the layers, no cycles.

The import graph is read from the source with ``ast`` (every ``import`` and ``from ... import``,
including those inside functions, which are still dependencies), so the test needs no import
of the package and sees lazy imports too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from support import REPO

SRC = REPO / "src" / "mvlsib"

# Lowest first. A module may import its own package and any package of a lower layer; within
# the leaf layer the leaves may import each other (the cycle check keeps that acyclic).
LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "__init__",
        "errors",
        "credentials",
        "atomic",
        "versions",
        "textnorm",
        "progress",
        "jsonio",
        "readers",
        "params",
        "limits",
        "csvio",
        "escape",
        "httpio",
        "hubio",
        "locks",
        "oserrors",
        "terminal",
        "boundary",
        "workdir",
        "release_format",
        "schema",
    ),
    ("builder", "image_pool", "evaluation"),
    ("validation", "verify_images"),
    ("release",),
    ("pipeline",),
    ("cli",),
    ("__main__",),
)
RANK = {pkg: n for n, layer in enumerate(LAYERS) for pkg in layer}
# Modules that ship alone in every release: they may import nothing of mvlsib.
STANDALONE = ("release_format/mvl_sib.py",)
# The evaluator ships (bundled) in every release: outside its own package it reaches the
# toolkit only through _compat, whose bundled branch provides the same names.
EVALUATION_DOOR = "evaluation/_compat.py"


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking_blocks(tree: ast.AST) -> set[int]:
    """ids of the nodes inside ``if TYPE_CHECKING:`` blocks (never run)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            inside |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return inside


def _imports(path: Path) -> set[str]:
    """Absolute names of every mvlsib module ``path`` imports (relative imports resolved).

    The one exception is the package's front door, ``mvlsib/__init__.py``: the stage functions it
    offers (``from mvlsib import ingest, sample, validate, publish``) are imported on first access
    by its PEP 562 ``__getattr__`` and named for type checkers under ``if TYPE_CHECKING:``. Those
    are no import-time edges; ``test_front_door_imports_nothing`` checks that ``import mvlsib``
    loads no other mvlsib module."""
    tree = ast.parse(path.read_text("utf-8"), filename=str(path))
    me = _module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    skip = _type_checking_blocks(tree) if path == SRC / "__init__.py" else set()
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "mvlsib"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] != "mvlsib":
                continue
            out.add(mod)
            # ``from pkg import module`` imports the module too
            for a in node.names:
                candidate = f"{mod}.{a.name}"
                if _exists(candidate):
                    out.add(candidate)
    return out


def _exists(module: str) -> bool:
    rel = Path(*module.split(".")[1:])
    return (SRC / rel).with_suffix(".py").is_file() or (SRC / rel / "__init__.py").is_file()


def _graph() -> dict[str, set[str]]:
    files = sorted(p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts)
    assert files, f"no sources under {SRC}"
    names = {_module_name(p): p for p in files}
    graph = {}
    for name, path in names.items():
        deps = set()
        for dep in _imports(path):
            # resolve to the longest existing module prefix
            parts = dep.split(".")
            while parts and ".".join(parts) not in names:
                parts.pop()
            if parts and ".".join(parts) != name:
                deps.add(".".join(parts))
        graph[name] = deps
    return graph


def _top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_package_has_a_layer():
    tops = {_top(m) for m in _graph()}
    assert tops - set(RANK) == set(), "add the new package to LAYERS here and in docs/architecture.md"


def test_no_import_runs_against_the_layers():
    bad = []
    for module, deps in _graph().items():
        here = _top(module)
        for dep in deps:
            there = _top(dep)
            if there == here or there == "__init__":
                continue
            if RANK[there] > RANK[here] or (RANK[there] == RANK[here] and RANK[here] != 0):
                bad.append(f"{module} -> {dep}")
    assert bad == []


def test_no_cycles():
    graph = _graph()
    seen: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(node):
        seen[node] = 1
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if seen.get(dep) == 1:
                cycles.append(stack[stack.index(dep) :] + [dep])
            elif dep not in seen:
                visit(dep)
        stack.pop()
        seen[node] = 2

    for node in sorted(graph):
        if node not in seen:
            visit(node)
    assert cycles == []
    # and none between packages either
    packages: dict[str, set[str]] = {}
    for module, deps in graph.items():
        packages.setdefault(_top(module), set()).update(_top(d) for d in deps if _top(d) != _top(module))
    for pkg, deps in packages.items():
        for dep in deps:
            assert pkg not in packages.get(dep, set()), f"packages {pkg} and {dep} import each other"


@pytest.mark.parametrize("rel", STANDALONE)
def test_standalone_modules_import_nothing_of_mvlsib(rel):
    assert _imports(SRC / rel) == set()


def test_evaluator_reaches_the_toolkit_only_through_compat():
    bad = []
    for path in sorted((SRC / "evaluation").rglob("*.py")):
        if path.relative_to(SRC).as_posix() == EVALUATION_DOOR:
            continue
        outside = {d for d in _imports(path) if not d.startswith("mvlsib.evaluation")}
        bad += [f"{_module_name(path)} -> {d}" for d in sorted(outside)]
    assert bad == []


def test_the_checker_sees_a_planted_violation(tmp_path, monkeypatch):
    """A back-reference and a cycle planted in a copy of the tree are found (the test can fail)."""
    import shutil

    copy = tmp_path / "mvlsib"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "errors.py").write_text((copy / "errors.py").read_text() + "\nfrom mvlsib.cli import build_cli\n")
    monkeypatch.setattr(__import__(__name__), "SRC", copy)
    with pytest.raises(AssertionError):
        test_no_import_runs_against_the_layers()
    with pytest.raises(AssertionError):
        test_no_cycles()


# Inside ``mvlsib.evaluation``, by job, lowest first (docs/architecture.md): what a model answers
# (backends), the run path, then what reads or scales runs, then the Hub. A module may import its
# own sub-package and any lower one; the root leaves (``_compat``, ``requirements``) serve all.
# Analysis and scale-out never reach into each other, nor the run path into either. The commands
# are above all of it, in ``cli/eval/``.
EVALUATION_LAYERS: tuple[tuple[str, ...], ...] = (
    ("_compat", "requirements", "__init__"),
    ("backends",),
    ("run",),
    ("scale", "analysis"),
    ("hub",),
)
EVALUATION_RANK = {part: n for n, layer in enumerate(EVALUATION_LAYERS) for part in layer}


def _evaluation_part(module: str) -> str | None:
    parts = module.split(".")
    if parts[:2] != ["mvlsib", "evaluation"]:
        return None
    return parts[2] if len(parts) > 2 else "__init__"


def test_every_evaluation_module_has_a_sub_layer():
    parts = {_evaluation_part(m) for m in _graph()} - {None}
    assert parts - set(EVALUATION_RANK) == set(), "add it to EVALUATION_LAYERS here and in docs/architecture.md"


def test_no_import_runs_against_the_evaluation_sub_layers():
    bad = []
    for module, deps in _graph().items():
        here = _evaluation_part(module)
        if here is None:
            continue
        for dep in deps:
            there = _evaluation_part(dep)
            if there is None or there == here or EVALUATION_RANK[there] == 0:
                continue
            if EVALUATION_RANK[there] >= EVALUATION_RANK[here]:
                bad.append(f"{module} -> {dep}")
    assert bad == []


def test_the_sub_layer_rule_sees_a_planted_violation(tmp_path, monkeypatch):
    """The run path reaching up into analysis is found (the test can fail)."""
    import shutil

    copy = tmp_path / "mvlsib"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    store = copy / "evaluation" / "run" / "store.py"
    store.write_text(store.read_text() + "\nfrom ..analysis import report\n")
    monkeypatch.setattr(__import__(__name__), "SRC", copy)
    with pytest.raises(AssertionError):
        test_no_import_runs_against_the_evaluation_sub_layers()


def test_front_door_imports_nothing():
    """``import mvlsib`` loads no other mvlsib module and no heavy library; the stage functions
    come on first access, from the modules its ``_API`` table names."""
    import subprocess
    import sys

    code = (
        "import sys, mvlsib\n"
        "print(sorted(m for m in sys.modules if m.startswith('mvlsib.') or m.split('.')[0] in "
        "('pandas', 'pyarrow', 'numpy', 'PIL', 'datasets')))\n"
        "from mvlsib import ingest, sample, validate, publish, build, Pool, load_pool, BUNDLED_POOL\n"
        "print(sample.__module__, validate.__module__, publish.__module__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env={"PYTHONPATH": str(SRC.parent)}
    ).stdout.splitlines()
    assert out == ["[]", "mvlsib.builder.sample mvlsib.validation.invariants mvlsib.release.publish"]
    tree = ast.parse((SRC / "__init__.py").read_text("utf-8"))
    table = next(
        n.value for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) == "_API"
    )
    for key, value in zip(table.keys, table.values):  # every name from a module of a real package
        assert _exists(value.value), (key.value, value.value)
    import mvlsib

    assert sorted(mvlsib.__all__) == sorted([*(k.value for k in table.keys), "__version__"])


# mvlsib-eval's commands and the options they share ship in every release beside the evaluator, at
# the same places (release/bundle.py): they import, relatively, only what a release holds.
BUNDLED_CLI = ("cli/eval", "cli/options.py")


def _bundled_cli_files() -> list[Path]:
    return sorted(
        p
        for part in BUNDLED_CLI
        for p in ([SRC / part] if (SRC / part).is_file() else (SRC / part).rglob("*.py"))
        if "__pycache__" not in p.parts
    )


def _ships_in_a_release(module: str) -> bool:
    """The evaluator, mvlsib-eval's commands and options, and the single-file leaves (the bundle takes
    those it needs); not mvlsib-build's commands, the stages or the packages of the leaf layer."""
    parts = module.split(".")
    if module in ("mvlsib", "mvlsib.cli.options") or parts[:2] == ["mvlsib", "evaluation"]:
        return True
    if parts[:3] == ["mvlsib", "cli", "eval"]:
        return True
    return len(parts) == 2 and RANK.get(parts[1]) == 0 and (SRC / f"{parts[1]}.py").is_file()


def test_the_bundled_commands_import_only_what_a_release_holds():
    bad = []
    for path in _bundled_cli_files():
        tree = ast.parse(path.read_text("utf-8"), filename=str(path))
        for node in ast.walk(tree):
            absolute = (
                isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith("mvlsib")
            ) or (isinstance(node, ast.Import) and any(a.name.split(".")[0] == "mvlsib" for a in node.names))
            if absolute:  # ``mvlsib`` is not there in a release: the package has another name
                bad.append(f"{_module_name(path)}: absolute import at line {node.lineno}")
        bad += [f"{_module_name(path)} -> {dep}" for dep in sorted(_imports(path)) if not _ships_in_a_release(dep)]
    assert _bundled_cli_files() and bad == []


def test_the_bundle_rule_sees_a_planted_violation(tmp_path, monkeypatch):
    """A command reaching mvlsib-build's own commands, or naming mvlsib absolutely, is found."""
    import shutil

    copy = tmp_path / "mvlsib"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    run = copy / "cli" / "eval" / "run.py"
    clean = run.read_text()
    monkeypatch.setattr(__import__(__name__), "SRC", copy)
    test_the_bundled_commands_import_only_what_a_release_holds()  # the copy itself passes
    for planted in ("from ..groups import eval_cli\n", "from mvlsib.evaluation import _compat\n"):
        run.write_text(clean + planted)
        with pytest.raises(AssertionError):
            test_the_bundled_commands_import_only_what_a_release_holds()
