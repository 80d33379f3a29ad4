"""Gemma 3 (``google/gemma-3-4b-it`` and siblings): SigLIP tower whose patches are average-pooled to a
fixed number of soft tokens per image, Gemma 3 text model.

The template writes ``{{ bos_token }}`` itself and the real tokenizer *also* prepends ``<bos>``
(``add_bos_token=True``), so tokenizing the rendered text with special tokens doubles the BOS.
It places images in message order as ``<start_of_image>``, and ``| trim``s every text part
(newline-only parts vanish). The processor replaces each ``<start_of_image>`` with
``\\n\\n<start_of_image>`` + ``mm_tokens_per_image`` × ``<image_soft_token>`` + ``<end_of_image>\\n\\n``.
Images must be a nested list per prompt when batched.
"""

from __future__ import annotations

from pathlib import Path

from ._common import TINY_VISION, finish, save, train_fast_tokenizer

FAMILY = "gemma3"
KIND = "generative"
WIDE = True
TEMPLATE_SOURCE = (
    "google/gemma-3-*-it chat template, verbatim from huggingface/transformers "
    "src/transformers/models/gemma3/convert_gemma3_weights_orbax_to_hf.py (_CHAT_TEMPLATE, the "
    "template the conversion script saves with the instruction-tuned checkpoints)"
)

CHAT_TEMPLATE = """{{ bos_token }}
{%- if messages[0]['role'] == 'system' -%}
    {%- if messages[0]['content'] is string -%}
        {%- set first_user_prefix = messages[0]['content'] + '\\n\\n' -%}
    {%- else -%}
        {%- set first_user_prefix = messages[0]['content'][0]['text'] + '\\n\\n' -%}
    {%- endif -%}
    {%- set loop_messages = messages[1:] -%}
{%- else -%}
    {%- set first_user_prefix = "" -%}
    {%- set loop_messages = messages -%}
{%- endif -%}
{%- for message in loop_messages -%}
    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}
        {{ raise_exception("Conversation roles must alternate user/assistant/user/assistant/...") }}
    {%- endif -%}
    {%- if (message['role'] == 'assistant') -%}
        {%- set role = "model" -%}
    {%- else -%}
        {%- set role = message['role'] -%}
    {%- endif -%}
    {{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else "") }}
    {%- if message['content'] is string -%}
        {{ message['content'] | trim }}
    {%- elif message['content'] is iterable -%}
        {%- for item in message['content'] -%}
            {%- if item['type'] == 'image' -%}
                {{ '<start_of_image>' }}
            {%- elif item['type'] == 'text' -%}
                {{ item['text'] | trim }}
            {%- endif -%}
        {%- endfor -%}
    {%- else -%}
        {{ raise_exception("Invalid content type") }}
    {%- endif -%}
    {{ '<end_of_turn>\\n' }}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{'<start_of_turn>model\\n'}}
{%- endif -%}
"""

# The real vocabulary's specials (ids differ: the real ones are 0-3, 105, 106, 255999, 256000, 262144).
SPECIAL_TOKENS = [
    "<pad>",
    "<eos>",
    "<bos>",
    "<unk>",
    "<start_of_turn>",
    "<end_of_turn>",
    "<start_of_image>",
    "<end_of_image>",
    "<image_soft_token>",
]
IMAGE_SIZE = 32
PATCH_SIZE = 8  # 4 x 4 patches ...
MM_TOKENS_PER_IMAGE = 4  # ... average-pooled 2 x 2 to 4 soft tokens, as 64 x 64 -> 16 x 16 in the real model


def build(out_dir: Path, texts: list[str], *, seed: int = 0, wide: bool = False) -> Path:
    import torch
    from transformers import (
        Gemma3Config,
        Gemma3ForConditionalGeneration,
        Gemma3ImageProcessor,
        Gemma3Processor,
        Gemma3TextConfig,
        SiglipVisionConfig,
    )
    from transformers.image_utils import PILImageResampling

    tokenizer = train_fast_tokenizer(
        texts,
        SPECIAL_TOKENS,
        pad_token="<pad>",
        eos_token="<eos>",
        bos_token="<bos>",
        unk_token="<unk>",
        add_bos_token=True,  # as the real GemmaTokenizer, even though the template writes <bos> too
        extra_special_tokens={
            "image_token": "<image_soft_token>",
            "boi_token": "<start_of_image>",
            "eoi_token": "<end_of_image>",
        },
    )
    if wide:
        from tokenizers import AddedToken

        # vLLM's Gemma 3 processor looks up runs of 1-4 newlines in the vocabulary, as single tokens (the
        # real vocabulary has them: ids 107, 108, ...); a byte-level BPE spells them "Ċ", "ĊĊ", ...
        tokenizer.add_tokens([AddedToken("\n" * n, normalized=False) for n in (4, 3, 2, 1)])
    # The real preprocessor_config: fixed square resize, mean/std 0.5, bilinear, no pan-and-scan.
    image_processor = Gemma3ImageProcessor(
        image_seq_length=MM_TOKENS_PER_IMAGE,
        image_mean=(0.5,) * 3,
        image_std=(0.5,) * 3,
        size={"height": IMAGE_SIZE, "width": IMAGE_SIZE},
        resample=PILImageResampling.BILINEAR,
    )
    processor = Gemma3Processor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        chat_template=CHAT_TEMPLATE,
        image_seq_length=MM_TOKENS_PER_IMAGE,
    )
    vision = SiglipVisionConfig(**TINY_VISION, image_size=IMAGE_SIZE, patch_size=PATCH_SIZE, vision_use_head=False)
    end_of_turn = tokenizer.convert_tokens_to_ids("<end_of_turn>")
    text = Gemma3TextConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=2 if wide else 4,
        num_key_value_heads=1,
        head_dim=64 if wide else 16,  # wide: what vLLM's CPU attention takes
        query_pre_attn_scalar=64 if wide else 16,
        sliding_window=64,
        max_position_embeddings=4096,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=[tokenizer.eos_token_id, end_of_turn],
    )
    config = Gemma3Config(
        text_config=text,
        vision_config=vision,
        mm_tokens_per_image=MM_TOKENS_PER_IMAGE,
        boi_token_index=tokenizer.convert_tokens_to_ids("<start_of_image>"),
        eoi_token_index=tokenizer.convert_tokens_to_ids("<end_of_image>"),
        image_token_index=tokenizer.convert_tokens_to_ids("<image_soft_token>"),
    )
    torch.manual_seed(seed)
    model = Gemma3ForConditionalGeneration(config).eval()
    # The instruction-tuned checkpoints stop on <eos> and <end_of_turn>.
    finish(model, tokenizer, eos=[tokenizer.eos_token_id, end_of_turn])
    return save(model, processor, Path(out_dir))
