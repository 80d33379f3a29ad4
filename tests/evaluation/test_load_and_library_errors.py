"""Errors that tell the fix: a missing package is named with how to install it, --trust-remote-code is
advised only for models whose config names code of their own, and a failure inside the model's own
code (a library bug) is one line naming the family, the library and its version, the run resumable."""

from __future__ import annotations

import importlib.metadata
import json
import shutil

import pytest
from support import one_line_cli_error, one_line_eval_error_without

from mvlsib.cli import eval_cli
from mvlsib.errors import MvlsibError
from mvlsib.evaluation.run.runner import RunOptions, run_eval

pytestmark = pytest.mark.eval


def _run_args(release_dir, model, out):
    return ["run", "--data", release_dir, "--model", model, "--out", out, "--tasks", "s2t", "--k", "1"] + [
        "--languages",
        "eng_Latn",
        "--limit",
        "1",
        "--device",
        "cpu",
        "--no-progress",
    ]


# Processor configs whose classes exist only with torchvision: transformers refuses them in two ways,
# an ImportError (Pixtral's processor class) and a ValueError naming "Missing optional dependencies"
# (an image processor with no PIL backend: LFM2-VL's, Llama 4's).
NEEDS_TORCHVISION = {
    "pixtral": ({"processor_class": "PixtralProcessor"}, {"image_processor_type": "PixtralImageProcessor"}),
    "lfm2_vl": ({}, {"image_processor_type": "Lfm2VlImageProcessor"}),
    "llama4": ({}, {"image_processor_type": "Llama4ImageProcessor"}),
}


@pytest.mark.parametrize("name", sorted(NEEDS_TORCHVISION))
def test_a_processor_needing_torchvision_names_it_and_the_matching_release(name, tiny_llava, release_dir, tmp_path):
    import torch

    needy = tmp_path / "needy"
    shutil.copytree(tiny_llava, needy)
    processor_edit, image_edit = NEEDS_TORCHVISION[name]
    for file, edit in (("processor_config.json", processor_edit), ("preprocessor_config.json", image_edit)):
        path = needy / file
        config = json.loads(path.read_text("utf-8")) if path.exists() else {}
        config.update(edit)
        if file == "processor_config.json" and "image_processor" in config:
            config["image_processor"].update(image_edit)
        path.write_text(json.dumps(config), encoding="utf-8")
    message = one_line_eval_error_without(("torchvision",), *_run_args(release_dir, needy, tmp_path / "r"))
    minor = int(torch.__version__.split(".")[1])
    assert "cannot load the processor" in message and "needs the torchvision package" in message, message
    assert f"pip install torchvision==0.{minor + 15}.*" in message, message
    assert "--trust-remote-code" not in message  # a native transformers model: no custom code to trust


# Models whose vision tower is a timm network: transformers reads even their config only where timm
# (which needs torchvision) is installed.
TIMM_CONFIGS = {
    "perception_lm": {
        "model_type": "perception_lm",
        "text_config": {"model_type": "llama"},
        "vision_config": {"model_type": "timm_wrapper", "architecture": "vit_pe_core_large_patch14_336"},
    },
    "gemma3n": {"model_type": "gemma3n", "vision_config": {"model_type": "gemma3n_vision"}},
}


@pytest.mark.parametrize("name", sorted(TIMM_CONFIGS))
def test_a_model_needing_timm_names_it_and_torchvision_with_the_matching_release(name, release_dir, tmp_path):
    import torch

    model = tmp_path / name
    model.mkdir()
    (model / "config.json").write_text(json.dumps(TIMM_CONFIGS[name]), encoding="utf-8")
    message = one_line_eval_error_without(("timm",), *_run_args(release_dir, model, tmp_path / "r"))
    minor = int(torch.__version__.split(".")[1])
    # Said from the config, before the processor (whose own error would name torchvision only) loads.
    assert "its vision tower is a timm model" in message and "needs the timm and torchvision packages" in message
    assert f"pip install torchvision==0.{minor + 15}.* timm" in message, message
    assert "--trust-remote-code" not in message


def test_a_timm_tower_is_refused_before_loading_when_timm_is_missing(monkeypatch):
    """A config that loads (its timm sub-config carries label names) still names timm before the
    processor or weights load; and a model without a timm tower is not held to it."""
    import importlib.util

    from transformers import Gemma3nConfig, LlavaConfig

    from mvlsib.evaluation.backends.hf.loading import check_packages, needs_timm

    assert needs_timm(Gemma3nConfig()) and not needs_timm(LlavaConfig())
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "timm" else real(n, *a))
    with pytest.raises(MvlsibError, match=r"vision tower is a timm model \(gemma3n\).*pip install torchvision==0\."):
        check_packages("google/gemma-3n-E2B-it", None, Gemma3nConfig())
    check_packages("llava", None, LlavaConfig())


def _broken_processor(tiny_llava, dest, auto_map: bool):
    """The tiny LLaVA with an unreadable tokenizer.json; with ``auto_map``, a config naming custom code."""
    shutil.copytree(tiny_llava, dest)
    (dest / "tokenizer.json").write_text("{not json", encoding="utf-8")
    if auto_map:
        model_config = json.loads((dest / "config.json").read_text("utf-8"))
        model_config["auto_map"] = {"AutoModelForImageTextToText": "modeling_custom.CustomModel"}
        (dest / "config.json").write_text(json.dumps(model_config), encoding="utf-8")
    return dest


def test_trust_remote_code_is_advised_only_when_the_config_names_custom_code(tiny_llava, release_dir, tmp_path):
    native = _broken_processor(tiny_llava, tmp_path / "native", auto_map=False)
    message = one_line_cli_error(eval_cli, *_run_args(release_dir, native, tmp_path / "r1"))
    assert "cannot load the processor" in message and "--trust-remote-code" not in message, message
    custom = _broken_processor(tiny_llava, tmp_path / "custom", auto_map=True)
    message = one_line_cli_error(eval_cli, *_run_args(release_dir, custom, tmp_path / "r2"))
    assert "cannot load the processor" in message and "--trust-remote-code" in message, message


def _breaks_after(calls_ok: int):
    """A real hf backend whose model breaks inside torch after ``calls_ok`` generate calls: its output
    layer's weight is swapped for one of the wrong shape, so ``F.linear`` raises inside the library's
    own code, as a library bug does (Llama 4 in transformers 5.24)."""

    def factory(name, **kw):
        import torch

        from mvlsib.evaluation.backends import make_backend

        backend = make_backend(name, **kw)
        model, real, calls = backend.model, backend.model.generate, []

        def generate(*args, **kwargs):
            calls.append(1)
            if len(calls) > calls_ok:
                model.get_output_embeddings().weight = torch.nn.Parameter(torch.zeros(3, 5))
            return real(*args, **kwargs)

        model.generate = generate
        return backend

    return factory


def test_a_failure_inside_the_library_is_one_line_and_the_run_resumes(tiny_llava, release_dir, tmp_path):

    def opts(out):
        return RunOptions(
            data=str(release_dir),
            model=str(tiny_llava),
            out=out,
            tasks=("s2t",),
            ks=(1,),
            languages=("eng_Latn",),
            limit=20,
            progress=False,
            max_new_tokens=3,
            backend_options={"device": "cpu", "batch_size": 2},
        )

    out = tmp_path / "run"
    with pytest.raises(MvlsibError) as caught:
        # The runner sends chunks of 8 batches (16 prompts): the first is answered, the library fails in the second.
        run_eval(opts(out), backend_factory=_breaks_after(8))
    message = str(caught.value)
    assert "\n" not in message and "the model's own code failed (llava, LlavaForConditionalGeneration" in message
    versions = f"transformers {importlib.metadata.version('transformers')}, torch {importlib.metadata.version('torch')}"
    assert versions in message, message
    assert "in modeling_llava.py:" in message and "RuntimeError: " in message and ".." not in message, message
    done = [json.loads(line) for line in (out / "predictions.jsonl").read_text("utf-8").splitlines()]
    assert len(done) == 16  # the answers written before the failure are kept
    summary = run_eval(opts(out))
    assert summary["complete"] and summary["n_done_before"] == len(done)
    lines = (out / "predictions.jsonl").read_text("utf-8").splitlines()
    keys = [(r["task"], r["k"], r["language"], r["instance_id"]) for r in map(json.loads, lines)]
    assert len(keys) == len(set(keys)) == 20
