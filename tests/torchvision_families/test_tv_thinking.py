"""Thinking in each family's own markers, end to end through ``mvlsib-eval run``.

A tiny model is *taught* a fixed answer by editing its weights (as in
``tests/evaluation/test_reasoning_and_decoding.py``): after the prompt's last token it says the
next token of a chain, and so on. Each model thinks a wrong letter inside its family's thinking
block and then answers another one, so a letter read from inside the block, or a block cut off
and scored as a format error, fails the test.

- Gemma 4 with ``enable_thinking``: the prompt carries ``<|think|>`` in a system turn and the
  *model* opens ``<|channel>thought ... <channel|>``; the thinking budget must be given and the
  letter after ``<channel|>`` read.
- Qwen3.5 (thinking on by default): the prompt opens ``<think>``; the letter after ``</think>``.
- A model that opens a thinking block although neither its prompt nor the template kwargs asked
  for it, cut off by ``--max-new-tokens``: generation is continued up to
  ``--thinking-max-new-tokens`` instead of scoring a format error.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from tiny_models.teach import teach_chain

from mvlsib.cli import eval_cli

SENTENCES = ["The match was played.", "Mutation adds variation.", "Tourism matters.", "Pests spoil food."]


def _run(model: Path, release_dir: Path, out: Path, *extra: str):
    args = ["run", "--data", release_dir, "--model", model, "--out", out, "--tasks", "i2s,s2t", "--k", "1"]
    args += ["--languages", "eng_Latn", "--limit", "3", "--device", "cpu", "--no-progress", *extra]
    result = CliRunner().invoke(eval_cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output + repr(result.exception)
    config = json.loads((out / "config.json").read_text("utf-8"))
    records = [json.loads(line) for line in (out / "predictions.jsonl").read_text("utf-8").splitlines()]
    assert len(records) == 6
    return config, records


def test_gemma4_thinking_channel_gets_the_budget_and_the_letter_after_it(release_dir, tmp_path):
    from tiny_models.families import build_family

    base = build_family("gemma4", tmp_path / "base", SENTENCES, seed=0)
    on = {"enable_thinking": True}
    model = teach_chain(base, tmp_path / "thinks", ["<|channel>", "C", "<channel|>", "B", "<turn|>"], on)
    config, records = _run(
        model,
        release_dir,
        tmp_path / "run",
        "--chat-template-kwargs",
        json.dumps(on),
        "--thinking-max-new-tokens",
        "16",
    )
    # The prompt opens no block (it ends "<|turn>model\n"), but <|think|> and the kwargs turn thinking on.
    assert config["backend"]["opens_thinking"] is True
    assert config["backend"]["generation"]["max_new_tokens"] == 16
    for r in records:
        assert r["response"] == "<|channel>C<channel|>B" and r["letter"] == "B", r
        assert r["correct"] == (r["label"] == 1)


def test_qwen3_5_thinking_run_reads_the_letter_after_think(release_dir, tmp_path):
    from tiny_models.families import build_family

    base = build_family("qwen3_5", tmp_path / "base", SENTENCES, seed=0)
    model = teach_chain(base, tmp_path / "thinks", ["C", "</think>", "B", "<|im_end|>"])
    config, records = _run(model, release_dir, tmp_path / "run", "--thinking-max-new-tokens", "16")
    assert config["backend"]["opens_thinking"] is True
    for r in records:
        assert r["response"] == "C</think>B" and r["letter"] == "B", r


def test_a_thinking_block_cut_off_by_the_budget_is_continued(release_dir, tmp_path):
    """Qwen3.5 with thinking switched off (its prompt ends with an empty closed block): nothing asks for
    thinking, yet the model opens ``<think>``. ``--max-new-tokens 2`` cuts it inside; the evaluator
    continues it up to the thinking budget instead of scoring a format error."""
    from tiny_models.families import build_family

    base = build_family("qwen3_5", tmp_path / "base", SENTENCES, seed=0)
    off = {"enable_thinking": False}
    model = teach_chain(base, tmp_path / "thinks", ["<think>", "C", "D", "</think>", "B", "<|im_end|>"], off)
    kwargs = ["--chat-template-kwargs", json.dumps(off), "--max-new-tokens", "2"]
    config, records = _run(model, release_dir, tmp_path / "run", *kwargs, "--thinking-max-new-tokens", "16")
    assert config["backend"]["opens_thinking"] is False
    for r in records:
        assert r["response"] == "<think>CD</think>B" and r["letter"] == "B", r
    # With no thinking budget the cut-off block stays what it is: no answer.
    config, records = _run(model, release_dir, tmp_path / "run0", *kwargs, "--thinking-max-new-tokens", "0")
    assert all(r["response"] == "<think>C" and r["letter"] is None for r in records)


def test_internvl3_5_thinking_in_think_tags_is_read_after_the_block(release_dir, tmp_path):
    """InternVL 3.5's thinking mode is a system prompt (its model card's ``R1_SYSTEM_PROMPT``), not a template
    switch: nothing in the prompt opens a block, the model answers ``<think>…</think>`` then the letter. Cut
    off inside the block by ``--max-new-tokens``, the evaluator continues it and reads the letter after it."""
    from tiny_models.families import build_family

    base = build_family("internvl3_5", tmp_path / "base", SENTENCES, seed=0)
    model = teach_chain(base, tmp_path / "thinks", ["<think>", "C", "D", "</think>", "B", "<|im_end|>"])
    kwargs = ["--max-new-tokens", "2", "--thinking-max-new-tokens", "16"]
    config, records = _run(model, release_dir, tmp_path / "run", *kwargs)
    assert config["backend"]["opens_thinking"] is False
    for r in records:
        assert r["response"] == "<think>CD</think>B" and r["letter"] == "B", r


def test_glm4v_thinking_opened_by_the_model_is_continued_and_the_answer_read_after_think(release_dir, tmp_path):
    """GLM-4.1V-Thinking: the generation prompt (``<|assistant|>\\n``) opens nothing and the template has no
    thinking switch, yet the model always writes ``<think>...</think><answer>...</answer>``. Cut off inside
    the block by ``--max-new-tokens``, it is continued with the thinking budget; the letter is read after
    ``</think>``, out of the answer tags."""
    from tiny_models.families import build_family

    base = build_family("glm4v", tmp_path / "base", SENTENCES, seed=0)
    chain = ["<think>", "C", "</think>", "<answer>", "B", "</answer>", "<|endoftext|>"]
    model = teach_chain(base, tmp_path / "thinks", chain)
    config, records = _run(
        model, release_dir, tmp_path / "run", "--max-new-tokens", "2", "--thinking-max-new-tokens", "16"
    )
    assert config["backend"]["opens_thinking"] is False
    for r in records:
        assert r["response"] == "<think>C</think><answer>B</answer>" and r["letter"] == "B", r
        assert r["correct"] == (r["label"] == 1)


def test_glm4v_enable_thinking_gets_the_budget_up_front(release_dir, tmp_path):
    """``enable_thinking`` (which GLM-4.5V/4.6V templates read; GLM-4.1V's ignores it) turns the budget on
    before anything is cut off."""
    from tiny_models.families import build_family

    base = build_family("glm4v", tmp_path / "base", SENTENCES, seed=0)
    on = {"enable_thinking": True}
    chain = ["<think>", "C", "</think>", "<answer>", "B", "</answer>", "<|endoftext|>"]
    model = teach_chain(base, tmp_path / "thinks", chain, on)
    config, records = _run(
        model,
        release_dir,
        tmp_path / "run",
        "--chat-template-kwargs",
        json.dumps(on),
        "--thinking-max-new-tokens",
        "16",
    )
    assert config["backend"]["opens_thinking"] is True
    assert config["backend"]["generation"]["max_new_tokens"] == 16
    for r in records:
        assert r["response"] == "<think>C</think><answer>B</answer>" and r["letter"] == "B", r
