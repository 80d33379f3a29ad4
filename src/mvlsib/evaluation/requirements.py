"""What each path of a release's ``evaluate.py`` needs installed: one table.

A release's evaluator runs without mvlsib-build, so its user installs these by hand. The same
table writes the list into ``evaluate.py``'s docstring (``release/bundle.py``), gives the bundled
error boundary the ``pip install`` line for a missing module (``INSTALL``), and is what
``tests/release/test_evaluate_requirements.py`` installs, the first row alone, into a fresh venv
before it walks that row's paths (and checks that the hf path is refused in one line).
"""

from __future__ import annotations

# (what the user runs, the pip packages it needs on top of the first row). Every path needs the
# first row; the others add to it. Derived from what the code imports (module level or in the
# function that runs the path), not from what the toolkit's own install happens to bring.
PATHS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "every command's --help; run --backend openai; merge; report (tables); compare; items; "
        "correlate; plan; batch prepare / collect",
        ("click", "numpy", "tqdm", "pyarrow", "pillow", "jsonschema"),
    ),
    ("report's figures (skipped without it)", ("matplotlib",)),
    ("hub-results", ("pyyaml", "huggingface-hub")),
    ("--release ORG/NAME (a release on the Hub)", ("datasets",)),
    ("run --backend hf (the default backend)", ("torch", "transformers", "safetensors", "jinja2")),
    # The families' own one-line refusals name the torchvision release that matches the installed torch.
    ("some hf model families (refused in one line naming what they need)", ("torchvision", "timm")),
)

# The import name of each package, where it differs from what pip installs.
IMPORT_NAMES = {"pillow": "PIL", "pyyaml": "yaml", "huggingface-hub": "huggingface_hub"}


def pip_line(packages: tuple[str, ...]) -> str:
    return "pip install " + " ".join(packages)


# import name -> the pip line of its row: a missing module asks for its whole path at once.
INSTALL: dict[str, str] = {
    IMPORT_NAMES.get(package, package): pip_line(packages) for _, packages in PATHS for package in packages
}
