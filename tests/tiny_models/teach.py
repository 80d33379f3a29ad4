"""Tiny models taught to say a given chain of tokens, so tests can check what the evaluator does with a
known response (a thinking block, then a letter) without a trained model."""

from __future__ import annotations

import shutil
from pathlib import Path


def teach_chain(src: Path, dest: Path, chain: list[str], template_kwargs: dict | None = None) -> Path:
    """A copy of the tiny model at ``src`` that, after its generation prompt, says ``chain`` token by
    token: each step is a huge input embedding along a fresh direction and the next token's output
    row along it, so the last position's residual stream picks the next token."""
    import torch
    from transformers import AutoModelForImageTextToText, AutoProcessor

    shutil.copytree(src, dest)
    processor = AutoProcessor.from_pretrained(src)
    tok = processor.tokenizer
    model = AutoModelForImageTextToText.from_pretrained(src)
    rendered = processor.apply_chat_template(
        [{"role": "user", "content": [{"type": "text", "text": "x"}]}],
        add_generation_prompt=True,
        tokenize=False,
        **(template_kwargs or {}),
    )
    last = tok(rendered, add_special_tokens=False)["input_ids"][-1]
    steps = [last] + [tok.convert_tokens_to_ids(t) for t in chain]
    assert len(set(steps)) == len(steps) and tok.unk_token_id not in steps[1:], chain
    if model.get_output_embeddings().weight.data_ptr() == model.get_input_embeddings().weight.data_ptr():
        # Tied embeddings (Gemma 4): untie them, or each edit would overwrite the other.
        model.get_output_embeddings().weight = torch.nn.Parameter(model.get_input_embeddings().weight.clone())
        for config in (model.config, model.config.get_text_config()):
            config.tie_word_embeddings = False
    emb, head = model.get_input_embeddings().weight, model.get_output_embeddings().weight
    torch.manual_seed(0)
    directions = torch.linalg.qr(torch.randn(emb.shape[1], len(steps) - 1))[0].T
    with torch.no_grad():
        for (now, nxt), d in zip(zip(steps, steps[1:]), directions):
            emb[now] = d * 1000
            head[nxt] = d * 100 * head.norm(dim=1).mean()
    model.save_pretrained(dest, safe_serialization=True)
    return dest


def teach_letters(model_dir: Path, scale: float = 6.0) -> Path:
    """Make the tiny model at ``model_dir`` (in place) answer a letter A-D as its first token for most
    prompts, which letter depending on the prompt: its output rows of the letters scaled to ``scale``
    times the typical row (the builders' 3.0 leaves a wide model answering mostly other tokens)."""
    from transformers import AutoModelForImageTextToText, AutoProcessor

    from .families._common import favour_letters

    processor = AutoProcessor.from_pretrained(model_dir)
    model = AutoModelForImageTextToText.from_pretrained(model_dir)
    favour_letters(model, processor.tokenizer, scale=scale)
    quiet_control_tokens(model, processor.tokenizer)
    model.save_pretrained(model_dir, safe_serialization=True)
    return model_dir


def quiet_control_tokens(model, tokenizer, factor: float = 0.1) -> None:
    """Shrink the output rows of the tokenizer's special tokens: a random model whose prompt ends in a control
    token tends to answer that very token (the tiny Mistral 3 says its own ``[/INST]``), which one engine
    prints and another drops as special, so the two could not be compared on what they answer."""
    import torch

    letters = {i for letter in "ABCD" for i in tokenizer.encode(letter, add_special_tokens=False)}
    special = set(tokenizer.all_special_ids) | {i for i, t in tokenizer.added_tokens_decoder.items() if t.special}
    rows = sorted(special - letters)
    head = model.get_output_embeddings().weight
    with torch.no_grad():
        head[rows] *= factor
