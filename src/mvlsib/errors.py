"""Errors the CLI turns into a clean message and a non-zero exit instead of a traceback."""


class MvlsibError(Exception):
    """A problem with the user's input or environment, stated so that they can fix it."""


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


def missing_dependency_message(exc: BaseException) -> str | None:
    """One line for an ``ImportError`` of an optional dependency (or in its cause chain), else None."""
    seen: set[int] = set()
    node: BaseException | None = exc
    while node is not None and id(node) not in seen:
        seen.add(id(node))
        if isinstance(node, ModuleNotFoundError) and node.name:
            top = node.name.split(".")[0]
            if top in OPTIONAL_DEPENDENCIES:
                return (
                    f"this needs {top}, which is not installed (the core install leaves it out): "
                    f"{OPTIONAL_DEPENDENCIES[top]}"
                )
        node = node.__cause__ or node.__context__
    return None
