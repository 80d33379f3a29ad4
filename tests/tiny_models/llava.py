"""Tiny random-weight vision-language models built locally (no download), for tests and benchmarks.

The tokenizer is trained here on the sentences the caller passes (e.g. a few SIB-200
lines), byte-level so that every script encodes without unknown tokens; the model is a
LLaVA (CLIP vision tower + Llama text model) small enough to run on a laptop CPU.
Everything is written with safetensors, exactly as a Hub checkpoint would be.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

# A LLaVA-1.5-style template: content parts in message order, images as the processor's
# image token, so several images land where the message puts them.
LLAVA_CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if message['role'] == 'user' %}USER: {% else %}ASSISTANT: {% endif %}"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for item in message['content'] %}"
    "{% if item['type'] == 'text' %}{{ item['text'] }}"
    "{% elif item['type'] == 'image' %}<image>\n{% endif %}"
    "{% endfor %}{% endif %}"
    "{% if message['role'] == 'user' %} {% else %}{{ eos_token }}{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}ASSISTANT:{% endif %}"
)

SPECIAL_TOKENS = ["<unk>", "<s>", "</s>", "<pad>", "<image>"]


def train_bpe(texts: Iterable[str], vocab_size: int, special_tokens: list[str]):
    """A byte-level BPE ``tokenizers.Tokenizer`` trained locally on ``texts`` (no download)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=special_tokens,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(list(texts), trainer=trainer)
    return tok


def train_tokenizer(texts: Iterable[str], vocab_size: int = 1000):
    """A byte-level BPE fast tokenizer trained on ``texts``, with LLaVA's special tokens."""
    from transformers import PreTrainedTokenizerFast

    # The prompt scaffolding is English; make sure its words are cheap to encode.
    scaffold = [
        "Which option matches the topic? Answer with the option's letter from the given choices directly.",
        "entertainment geography health politics science/technology sports travel A. B. C. D.",
    ]
    tok = train_bpe(list(texts) + scaffold, vocab_size, SPECIAL_TOKENS)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="<unk>",
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        extra_special_tokens={"image_token": "<image>"},
    )
    fast.chat_template = LLAVA_CHAT_TEMPLATE
    return fast


def build_tiny_llava(
    out_dir: str | Path,
    texts: Iterable[str],
    *,
    image_size: int = 30,
    patch_size: int = 6,
    hidden_size: int = 64,
    num_layers: int = 2,
    vocab_size: int = 1000,
    seed: int = 0,
    letter_scale: float = 0.0,
) -> Path:
    """Write a random-weight LLaVA (config, safetensors weights, tokenizer, processor) to ``out_dir``.

    ``letter_scale`` > 0 scales the output-embedding rows of the tokens ``A``-``D`` so
    that the random model mostly answers with a letter (which one depends on the
    input): the evaluator's parsing and scoring then see both answers and format errors.
    """
    import torch
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = train_tokenizer(texts, vocab_size=vocab_size)
    image_processor = CLIPImageProcessor(
        size={"shortest_edge": image_size},
        crop_size={"height": image_size, "width": image_size},
    )
    processor = LlavaProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=patch_size,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,  # CLIP's CLS token, dropped again by the "default" strategy
        chat_template=LLAVA_CHAT_TEMPLATE,
    )
    vision = CLIPVisionConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        image_size=image_size,
        patch_size=patch_size,
        projection_dim=32,
    )
    text = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=num_layers,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=8192,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    config = LlavaConfig(
        vision_config=vision,
        text_config=text,
        image_token_id=tokenizer.convert_tokens_to_ids("<image>"),
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
    )
    torch.manual_seed(seed)
    model = LlavaForConditionalGeneration(config).eval()
    if letter_scale:
        _favour_letters(model, tokenizer, letter_scale)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.save_pretrained(out, safe_serialization=True)
    processor.save_pretrained(out)
    return out


def _favour_letters(model, tokenizer, scale: float) -> None:
    """Scale the output rows of the tokens ``A``-``D`` to ``scale`` times a typical row's norm."""
    import torch

    head = model.get_output_embeddings().weight
    typical = head.norm(dim=1).mean()
    with torch.no_grad():
        for letter in "ABCD":
            row = head[tokenizer.convert_tokens_to_ids(letter)]
            row *= scale * typical / row.norm()


def sib_sentences(sib_dir: str | Path, languages: Iterable[str], limit: int = 200) -> list[str]:
    """First ``limit`` texts of each language's SIB-200 train file: tokenizer training text."""
    out: list[str] = []
    for lang in languages:
        path = Path(sib_dir) / "data" / "annotated" / lang / "train.tsv"
        lines = path.read_text(encoding="utf-8").splitlines()[1 : limit + 1]
        out.extend(line.split("\t", 2)[2] for line in lines if line.count("\t") >= 2)
    return out
