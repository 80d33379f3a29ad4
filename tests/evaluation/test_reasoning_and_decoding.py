"""Reasoning models, pinned decoding, template and processor options, and the one-line load errors."""

from __future__ import annotations

import json
import shutil

import pytest
import torch
from click.testing import CliRunner
from support import one_line_cli_error, one_line_eval_error_without
from support.fakes.openai_compat import ChatServer
from tiny_models.teach import teach_chain

from mvlsib.cli import eval_cli
from mvlsib.errors import MvlsibError
from mvlsib.evaluation.backends import Request, make_backend
from mvlsib.evaluation.run.parsing import parse_letter, strip_reasoning
from mvlsib.evaluation.run.prompts import build_prompt

pytestmark = pytest.mark.eval

SENTENCES = ["The match was played.", "Mutation adds variation.", "Tourism matters.", "Pests spoil food."]


def _text_request(key: str = "s2t") -> Request:
    p = build_prompt("s2t", SENTENCES[:2], ["sports", "travel", "health", "politics"])
    return Request(key, tuple(p.messages()), p.image_ids)


@pytest.mark.parametrize(
    "response, letter",
    [
        ("<think>A or B? The sentence is about sport.</think>\n\nB", "B"),
        ("The prompt opened the block. A is wrong.</think>C", "C"),  # opener written by the template
        ("<think>still thinking about A", None),  # budget ran out: no answer
        ("<think>x</think><answer>D</answer>", "D"),  # GLM-4.1V style
        ("\u25c1think\u25b7hmm\u25c1/think\u25b7(A)", "A"),  # Kimi-VL style
    ],
)
def test_thinking_blocks_are_removed_before_parsing(response, letter):
    assert parse_letter(response) == letter
    assert "think" not in strip_reasoning(response).lower()


def test_openai_reasoning_content_kept_raw_and_scored(release_dir, tmp_path):
    """A server with a reasoning parser: the thinking comes apart from the answer; the raw
    response keeps both, the letter is read from the answer."""

    def answer(_payload, _n):
        return {"reasoning_content": "A? no, it is B. " * 3, "content": "B"}

    with ChatServer(answer) as server:
        out = tmp_path / "run"
        result = CliRunner().invoke(
            eval_cli,
            [
                "run",
                "--data",
                str(release_dir),
                "--model",
                "thinker",
                "--backend",
                "openai",
                "--base-url",
                server.base_url,
                "--out",
                str(out),
                "--tasks",
                "s2t",
                "--k",
                "1",
                "--languages",
                "eng_Latn",
                "--limit",
                "3",
                "--chat-template-kwargs",
                '{"enable_thinking": true}',
                "--request-style",
                "reasoning",
                "--max-new-tokens",
                "512",
                "--no-progress",
            ],
        )
        assert result.exit_code == 0, result.output
        sent = server.requests[0]
    assert sent["chat_template_kwargs"] == {"enable_thinking": True}
    assert sent["max_completion_tokens"] == 512 and "max_tokens" not in sent and "temperature" not in sent
    records = [json.loads(line) for line in (out / "predictions.jsonl").read_text("utf-8").splitlines()]
    assert all(r["response"].startswith("<think>A? no") and r["letter"] == "B" for r in records)
    config = json.loads((out / "config.json").read_text("utf-8"))
    assert config["fingerprint"]["chat_template_kwargs"] == {"enable_thinking": True}


def test_openai_sends_neutral_sampling_and_refuses_truncated_thinking():
    def answer(_payload, _n):
        return {"content": "<think>let me see, A or", "finish_reason": "length"}

    with ChatServer(answer) as server:
        backend = make_backend(
            "openai", model="m", base_url=server.base_url, max_new_tokens=8, thinking_max_new_tokens=0, max_retries=0
        )
        backend.set_images({})
        with pytest.raises(MvlsibError, match="still thinking.*--max-new-tokens"):
            backend.generate([_text_request()])
        sent = server.requests[0]
        backend.close()
    assert sent["temperature"] == 0 and sent["top_p"] == 1 and sent["max_tokens"] == 8
    assert sent["presence_penalty"] == 0 and sent["frequency_penalty"] == 0


def test_checkpoint_penalties_do_not_change_answers(tiny_llava, tmp_path):
    """A shipped repetition penalty / n-gram block in generation_config is neutralised."""
    from transformers import GenerationConfig

    penalised = tmp_path / "penalised"
    shutil.copytree(tiny_llava, penalised)
    gen = GenerationConfig.from_pretrained(penalised)
    gen.repetition_penalty, gen.no_repeat_ngram_size, gen.do_sample, gen.temperature = 5.0, 1, True, 0.7
    gen.save_pretrained(penalised)
    reqs = [_text_request(f"r{i}") for i in range(3)]
    plain = make_backend("hf", model=str(tiny_llava), device="cpu", max_new_tokens=6)
    ours = make_backend("hf", model=str(penalised), device="cpu", max_new_tokens=6)
    for b in (plain, ours):
        b.set_images({})
    torch.manual_seed(1)
    assert ours.generate(reqs) == plain.generate(reqs)
    settings = ours.describe()["generation"]
    assert settings["repetition_penalty"] == 1.0 and settings["no_repeat_ngram_size"] == 0
    assert settings["do_sample"] is False and settings["max_new_tokens"] == 6


def test_chat_template_file_and_processor_kwargs_are_recorded(tiny_llava, release_dir, tmp_path):
    template = tmp_path / "template.jinja"
    template.write_text(
        "{% for m in messages %}{% for p in m['content'] %}{% if p['type'] == 'text' %}{{ p['text'] }}"
        "{% else %}<image>{% endif %}{% endfor %}{% endfor %}{% if add_generation_prompt %}\nANSWER:{% endif %}",
        encoding="utf-8",
    )
    out = tmp_path / "run"
    args = [
        "run",
        "--data",
        str(release_dir),
        "--model",
        str(tiny_llava),
        "--out",
        str(out),
        "--tasks",
        "s2i",
        "--k",
        "1",
        "--languages",
        "eng_Latn",
        "--limit",
        "2",
        "--device",
        "cpu",
        "--no-progress",
        "--chat-template",
        str(template),
        "--processor-kwargs",
        '{"do_normalize": true}',
    ]
    result = CliRunner().invoke(eval_cli, args)
    assert result.exit_code == 0, result.output
    config = json.loads((out / "config.json").read_text("utf-8"))
    assert config["backend"]["chat_template"] == str(template)
    assert config["backend"]["processor_kwargs"] == {"do_normalize": True}
    assert config["fingerprint"]["processor_kwargs"] == {"do_normalize": True}
    assert "chat_template_sha256" in config["fingerprint"]
    # Resuming with other processor settings is refused: they change what the model sees.
    result = CliRunner().invoke(eval_cli, args[:-1] + ['{"do_normalize": false}'])
    assert result.exit_code == 2 and "processor_kwargs" in result.output


def test_bad_json_options_are_one_line_errors(tiny_llava):
    with pytest.raises(MvlsibError, match="--processor-kwargs: not a JSON object"):
        make_backend("hf", model=str(tiny_llava), device="cpu", processor_kwargs="[1, 2]")
    with pytest.raises(MvlsibError, match="--chat-template-kwargs: not a JSON object"):
        make_backend("hf", model=str(tiny_llava), device="cpu", chat_template_kwargs="{nope")
    with pytest.raises(MvlsibError, match="--max-new-tokens must be at least 1"):
        make_backend("hf", model=str(tiny_llava), device="cpu", max_new_tokens=0)


def test_model_without_chat_template_is_a_one_line_error(tiny_llava, release_dir, tmp_path):
    bare = tmp_path / "bare"
    shutil.copytree(tiny_llava, bare)
    for name in ("chat_template.jinja", "chat_template.json"):
        (bare / name).unlink(missing_ok=True)
    for name in ("tokenizer_config.json", "processor_config.json"):
        path = bare / name
        if path.exists():
            data = json.loads(path.read_text("utf-8"))
            data.pop("chat_template", None)
            path.write_text(json.dumps(data), encoding="utf-8")
    message = one_line_cli_error(
        eval_cli,
        "run",
        "--data",
        release_dir,
        "--model",
        bare,
        "--out",
        tmp_path / "r",
        "--tasks",
        "s2t",
        "--languages",
        "eng_Latn",
        "--limit",
        "1",
        "--device",
        "cpu",
        "--no-progress",
    )
    assert "no chat template" in message and "--chat-template FILE" in message


def test_not_an_image_text_to_text_model_is_a_one_line_error(tiny_llava, release_dir, tmp_path):
    """A text-only Llama: the processor loads (a tokenizer), the architecture does not."""
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    text_only = tmp_path / "llama"
    tok = AutoTokenizer.from_pretrained(tiny_llava)
    cfg = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
    )
    LlamaForCausalLM(cfg).save_pretrained(text_only, safe_serialization=True)
    tok.save_pretrained(text_only)
    message = one_line_cli_error(
        eval_cli,
        "run",
        "--data",
        release_dir,
        "--model",
        text_only,
        "--out",
        tmp_path / "r",
        "--tasks",
        "s2t",
        "--languages",
        "eng_Latn",
        "--limit",
        "1",
        "--device",
        "cpu",
        "--no-progress",
    )
    assert "not an image-text-to-text model" in message, message


def test_processor_needing_a_missing_package_names_it(tiny_llava, release_dir, tmp_path):
    """A processor class whose library is not installed: the package is named, exit 2."""
    needy = tmp_path / "needy"
    shutil.copytree(tiny_llava, needy)
    # Pixtral's image processing needs torchvision: the run is made where it is not installed.
    cfg = (
        json.loads((needy / "processor_config.json").read_text("utf-8"))
        if (needy / "processor_config.json").exists()
        else {}
    )
    cfg["processor_class"] = "PixtralProcessor"
    (needy / "processor_config.json").write_text(json.dumps(cfg), encoding="utf-8")
    pre = (
        json.loads((needy / "preprocessor_config.json").read_text("utf-8"))
        if (needy / "preprocessor_config.json").exists()
        else {}
    )
    pre["image_processor_type"] = "PixtralImageProcessorFast"
    pre["processor_class"] = "PixtralProcessor"
    (needy / "preprocessor_config.json").write_text(json.dumps(pre), encoding="utf-8")
    message = one_line_eval_error_without(
        ("torchvision",),
        "run",
        "--data",
        release_dir,
        "--model",
        needy,
        "--out",
        tmp_path / "r",
        "--tasks",
        "s2t",
        "--languages",
        "eng_Latn",
        "--limit",
        "1",
        "--device",
        "cpu",
        "--no-progress",
    )
    assert "cannot load" in message and "torchvision" in message and "pip install" in message, message


def _thinking_model_that_answers(src, dest, answer: str = "B"):
    """The tiny Qwen3-VL-Thinking, its weights edited so that it closes the thinking block the
    template opened and then answers ``answer``: after the prompt's last token it says
    ``</think>``, after ``</think>`` the letter, after the letter ``<|im_end|>`` (``teach_chain``)."""
    from transformers import AutoProcessor

    rendered = AutoProcessor.from_pretrained(src).apply_chat_template(
        [{"role": "user", "content": [{"type": "text", "text": "x"}]}], add_generation_prompt=True, tokenize=False
    )
    assert rendered.endswith("<think>\n")
    return teach_chain(src, dest, ["</think>", answer, "<|im_end|>"])


def test_thinking_model_end_to_end_scores_the_answer_after_thinking(release_dir, tmp_path):
    """A real thinking template (its generation prompt opens <think>): the budget is raised,
    the raw response keeps the thinking, the letter after </think> is what is scored."""
    from tiny_models.families import build_family

    base = build_family("qwen3_vl_thinking", tmp_path / "base", SENTENCES, seed=0)
    model = _thinking_model_that_answers(base, tmp_path / "answers-b")
    out = tmp_path / "run"
    result = CliRunner().invoke(
        eval_cli,
        [
            "run",
            "--data",
            str(release_dir),
            "--model",
            str(model),
            "--out",
            str(out),
            "--tasks",
            "i2s,s2t",
            "--k",
            "1",
            "--languages",
            "eng_Latn",
            "--limit",
            "3",
            "--device",
            "cpu",
            "--no-progress",
            "--thinking-max-new-tokens",
            "32",
        ],
    )
    assert result.exit_code == 0, result.output + repr(result.exception)
    config = json.loads((out / "config.json").read_text("utf-8"))
    assert config["backend"]["opens_thinking"] is True
    assert config["backend"]["generation"]["max_new_tokens"] == 32
    records = [json.loads(line) for line in (out / "predictions.jsonl").read_text("utf-8").splitlines()]
    assert len(records) == 6
    for r in records:
        assert r["response"] == "</think>B" and r["letter"] == "B"
        assert r["correct"] == (r["label"] == 1)
    # The same model with no room to think is refused with advice, not scored as format errors.
    message = one_line_cli_error(
        eval_cli,
        "run",
        "--data",
        release_dir,
        "--model",
        model,
        "--out",
        tmp_path / "r2",
        "--tasks",
        "s2t",
        "--k",
        "1",
        "--languages",
        "eng_Latn",
        "--limit",
        "1",
        "--device",
        "cpu",
        "--no-progress",
        "--thinking-max-new-tokens",
        "0",
    )
    assert "opens a thinking block" in message and "--thinking-max-new-tokens" in message


def test_a_template_kwarg_the_template_does_not_read_still_turns_thinking_on_but_is_not_rendered():
    """GLM-4.1V's template always thinks and knows no ``enable_thinking``: the kwarg must still give the
    thinking budget, but rendering leaves it out (transformers would take it for a processor kwarg and
    log a warning on every prompt); a kwarg the template reads is passed on."""
    from mvlsib.evaluation.backends.hf.generation import opens_thinking
    from mvlsib.evaluation.backends.hf.inputs import Renderer, template_reads

    class Processor:
        chat_template = (
            "{% for m in messages %}{{ m.content[0].text }}{% endfor %}"
            "{% if add_generation_prompt %}>{% if reasoning_effort is defined %}{{ reasoning_effort }}{% endif %}"
            "{% endif %}"
        )

        def __init__(self):
            self.calls: list[dict] = []

        def apply_chat_template(self, conversation, **kwargs):
            self.calls.append(kwargs)
            return "rendered"

    processor = Processor()
    kwargs = {"enable_thinking": True, "reasoning_effort": "high"}
    assert template_reads(processor, kwargs) == {"reasoning_effort": "high"}
    Renderer(processor, kwargs).render([{"role": "user", "content": [{"type": "text", "text": "hi"}]}], False)
    assert opens_thinking(processor, kwargs, 8, 16) is True  # the budget: from the kwargs, read or not
    assert all("enable_thinking" not in call and call["reasoning_effort"] == "high" for call in processor.calls)
    # A template that cannot be parsed here (a tag only transformers knows) gets every kwarg.
    processor.chat_template = "{% generation %}x{% endgeneration %}"
    assert template_reads(processor, kwargs) == kwargs
