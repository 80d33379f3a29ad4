"""Errors the CLI turns into a clean message and a non-zero exit instead of a traceback."""

from __future__ import annotations

from collections.abc import Sequence


class MvlsibError(Exception):
    """A problem with the user's input or environment, stated so that they can fix it.

    One line, or a line with a list under it: ``items`` (each shown as ``  - item``, the first
    ``shown`` of them, then how many more) and a closing ``hint``. The parts stay apart so that the
    error boundary can make each line terminal-safe on its own: a line break inside a value never
    starts a line of its own. ``str()`` gives the whole text.
    """

    def __init__(self, message: str, *, items: Sequence[str] = (), shown: int = 10, hint: str = "") -> None:
        self.message, self.items, self.shown, self.hint = message, tuple(items), shown, hint
        super().__init__("\n".join(self.lines()))

    def lines(self) -> list[str]:
        more = len(self.items) - self.shown
        return [
            self.message,
            *(f"  - {item}" for item in self.items[: self.shown]),
            *([f"  ... and {more} more"] if more > 0 else []),
            *([self.hint] if self.hint else []),
        ]


# The optional dependencies: the import name -> what installs it. The core (``pip install
# mvlsib-build``) has none of them; a module imports one only inside the function that uses it
# (tests/architecture/test_optional_imports.py), so a missing one surfaces where it is needed and
# the error boundary turns it into ``missing_dependency_message`` instead of a traceback.
EVAL_EXTRA = "pip install 'mvlsib-build[eval]'"
OPTIONAL_DEPENDENCIES: dict[str, str] = {
    "torch": EVAL_EXTRA,
    "torchvision": EVAL_EXTRA,
    "transformers": EVAL_EXTRA,
    "safetensors": EVAL_EXTRA,
    "jinja2": EVAL_EXTRA,
    "matplotlib": EVAL_EXTRA,
    # Needed on top of [eval] by the families with a timm vision tower (Gemma 3n, PerceptionLM).
    "timm": "pip install timm",
}


def missing_dependency_message(exc: BaseException, install: dict[str, str] | None = None) -> str | None:
    """One line for an ``ImportError`` of an optional dependency (or in its cause chain), else None.

    ``install`` maps import names to what installs them, in place of the toolkit's extras: a
    release's evaluator runs without mvlsib-build and names its own requirements.
    """
    table = OPTIONAL_DEPENDENCIES if install is None else install
    seen: set[int] = set()
    node: BaseException | None = exc
    while node is not None and id(node) not in seen:
        seen.add(id(node))
        if isinstance(node, ModuleNotFoundError) and node.name:
            top = node.name.split(".")[0]
            if top in table:
                why = " (the core install leaves it out)" if install is None else ""
                return f"this needs {top}, which is not installed{why}: {table[top]}"
        node = node.__cause__ or node.__context__
    return None
