"""Tiny random-weight models built from configs (nothing is downloaded), for tests and benchmarks.

``llava``: the evaluator's LLaVA; ``clip``: a CLIP that ``verify-images`` can be fitted with;
``families``: one module per popular vision-language family, each with its real chat template.
They live beside the tests, outside the package: no wheel ships them. Importable as
``tiny_models`` with ``tests/`` on the path (pytest's configuration puts it there; benchmarks and
``tools/tiny_verify_models.py`` add it themselves).
"""
