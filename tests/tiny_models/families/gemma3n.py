"""Gemma 3n (``google/gemma-3n-E2B-it`` / ``-E4B-it``, ``Gemma3nForConditionalGeneration``): a timm MobileNetV5
vision tower (``mobilenetv5_300m_enc`` behind ``TimmWrapperModel``), a Conformer audio tower and the Gemma 3n
text model (AltUp, LAuReL, per-layer inputs, KV sharing between its last layers).

Real protocol kept: the template writes ``{{ bos_token }}`` and the tokenizer adds ``<bos>`` too (as Gemma 3);
turns are ``<start_of_turn>user`` / ``<start_of_turn>model``, a system message is folded into the first user
turn, every text part is ``trim``med and each image is written in place as ``<image_soft_token>``. The
processor replaces it with ``\\n\\n<start_of_image>`` + ``image_seq_length`` x ``<image_soft_token>`` +
``<end_of_image>\\n\\n``. Token ids keep the real layout: text tokens first, then the vision tokens
(``<end_of_image>``, ``<image_soft_token>``: the vision embedder's ``vocab_offset``), then the audio ones.
The image processor requires torchvision, the vision tower timm.

Tiny: the MobileNetV5 is timm's own ``mobilenetv5_300m_enc`` with the knobs timm offers, ``channel_multiplier``
0.01 (channels rounded up to 8; the stem and the attention heads' key width do not scale) and
``msfa_output_resolution`` 2, on 64-pixel images: 4 soft tokens per image (real: 768 pixels, 16 x 16 = 256)
from ~1.5 M parameters. Its output width stays 2048, as timm fixes it for the encoder.
"""

from __future__ import annotations

from pathlib import Path

from ..llava import train_bpe
from ._common import SCAFFOLD, finish

FAMILY = "gemma3n"
KIND = "generative"
NEEDS = ("torchvision", "timm")
TEMPLATE_SOURCE = (
    "huggingface/transformers src/transformers/models/gemma3n/convert_gemma3n_weights.py (_CHAT_TEMPLATE, the "
    "template the conversion saves with the instruction-tuned google/gemma-3n-E2B-it / E4B-it checkpoints)"
)

# Verbatim: the converter's Python string, written the same way (its "\n" escapes are newlines in the value).
CHAT_TEMPLATE = """{{ bos_token }}
{%- if messages[0]['role'] == 'system' -%}
    {%- if messages[0]['content'] is string -%}
        {%- set first_user_prefix = messages[0]['content'] + '\n\n' -%}
    {%- else -%}
        {%- set first_user_prefix = messages[0]['content'][0]['text'] + '\n\n' -%}
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
    {{ '<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else "") }}
    {%- if message['content'] is string -%}
        {{ message['content'] | trim }}
    {%- elif message['content'] is iterable -%}
        {%- for item in message['content'] -%}
            {%- if item['type'] == 'audio' -%}
                {{ '<audio_soft_token>' }}
            {%- elif item['type'] == 'image' -%}
                {{ '<image_soft_token>' }}
            {%- elif item['type'] == 'text' -%}
                {{ item['text'] | trim }}
            {%- endif -%}
        {%- endfor -%}
    {%- else -%}
        {{ raise_exception("Invalid content type") }}
    {%- endif -%}
    {{ '<end_of_turn>\n' }}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{'<start_of_turn>model\n'}}
{%- endif -%}
"""

# Text-range specials (the real <start_of_image> 255999 and <start_of_audio> 256000 are text tokens) ...
SPECIAL_TOKENS = ["<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>"]
SPECIAL_TOKENS += ["<start_of_image>", "<start_of_audio>"]
# ... then, after the text vocabulary, the vision and the audio embedders' ranges, each starting with its
# end marker (the real ids 262144, 262145 and 262272, 262273; here each range holds just these two).
VISION_TOKENS = ["<end_of_image>", "<image_soft_token>"]
AUDIO_TOKENS = ["<end_of_audio>", "<audio_soft_token>"]
IMAGE_SIZE = 64  # real 768
SOFT_TOKENS = 4  # msfa_output_resolution 2 -> 2 x 2 (real 16 x 16 = 256)
AUDIO_FEATURES = 32  # real 128 mel bins
AUDIO_SOFT_TOKENS = 4  # real 188


def build(out_dir: Path, texts: list[str], *, seed: int = 0) -> Path:
    import torch
    from tokenizers import AddedToken
    from transformers import (
        Gemma3nAudioConfig,
        Gemma3nAudioFeatureExtractor,
        Gemma3nConfig,
        Gemma3nForConditionalGeneration,
        Gemma3nProcessor,
        Gemma3nTextConfig,
        Gemma3nVisionConfig,
        PreTrainedTokenizerFast,
        SiglipImageProcessor,
    )
    from transformers.image_utils import PILImageResampling

    # The trained vocabulary first, then the vision and audio tokens appended after it (train_fast_tokenizer
    # would put every special token first).
    bpe = train_bpe(list(texts) + SCAFFOLD, 800, SPECIAL_TOKENS)
    text_vocab = bpe.get_vocab_size()
    bpe.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in VISION_TOKENS + AUDIO_TOKENS])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        pad_token="<pad>",
        eos_token="<eos>",
        bos_token="<bos>",
        unk_token="<unk>",
        add_bos_token=True,  # as the converter's GemmaTokenizerFast, although the template writes <bos> too
        padding_side="left",
        extra_special_tokens={
            "image_token": "<image_soft_token>",
            "boi_token": "<start_of_image>",
            "eoi_token": "<end_of_image>",
            "audio_token": "<audio_soft_token>",
            "boa_token": "<start_of_audio>",
            "eoa_token": "<end_of_audio>",
        },
    )
    ids = tokenizer.convert_tokens_to_ids
    assert ids(VISION_TOKENS[0]) == text_vocab and ids(AUDIO_TOKENS[0]) == text_vocab + len(VISION_TOKENS)
    # As the converter's image processor (no normalisation: the tower takes pixels in [0, 1]), at the tiny size.
    image_processor = SiglipImageProcessor(
        image_seq_length=SOFT_TOKENS,
        image_mean=(0.5,) * 3,
        image_std=(0.5,) * 3,
        size={"height": IMAGE_SIZE, "width": IMAGE_SIZE},
        resample=PILImageResampling.BILINEAR,
        do_normalize=False,
    )
    processor = Gemma3nProcessor(
        feature_extractor=Gemma3nAudioFeatureExtractor(feature_size=AUDIO_FEATURES),
        image_processor=image_processor,
        tokenizer=tokenizer,
        chat_template=CHAT_TEMPLATE,
        image_seq_length=SOFT_TOKENS,
        audio_seq_length=AUDIO_SOFT_TOKENS,
    )
    end_of_turn = ids("<end_of_turn>")
    text = Gemma3nTextConfig(
        vocab_size=len(tokenizer),
        vocab_size_per_layer_input=text_vocab,
        hidden_size=64,
        hidden_size_per_layer_input=16,  # real 256
        intermediate_size=128,
        num_hidden_layers=4,
        layer_types=["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
        num_kv_shared_layers=2,  # the last two reuse the first two's KV, as the real model's last layers do
        activation_sparsity_pattern=[0.95, 0.0, 0.0, 0.0],  # sparse first layers, as E2B's first 10 of 30
        num_attention_heads=4,
        num_key_value_heads=1,
        head_dim=16,
        laurel_rank=8,  # real 64
        sliding_window=512,
        max_position_embeddings=4096,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=[tokenizer.eos_token_id, end_of_turn],
    )
    vision = Gemma3nVisionConfig(
        model_args={"channel_multiplier": 0.01, "msfa_output_resolution": 2},
        vocab_size=len(VISION_TOKENS),
        vocab_offset=text_vocab,
    )
    audio = Gemma3nAudioConfig(
        input_feat_size=AUDIO_FEATURES,
        hidden_size=32,
        conf_num_attention_heads=4,
        conf_num_hidden_layers=2,
        sscp_conv_channel_size=(16, 8),
        conf_conv_kernel_size=3,
        conf_attention_chunk_size=4,
        conf_attention_context_left=5,
        vocab_size=len(AUDIO_TOKENS),
        vocab_offset=text_vocab + len(VISION_TOKENS),
    )
    config = Gemma3nConfig(
        text_config=text,
        vision_config=vision,
        audio_config=audio,
        vision_soft_tokens_per_image=SOFT_TOKENS,
        audio_soft_tokens_per_image=AUDIO_SOFT_TOKENS,
        boi_token_id=ids("<start_of_image>"),
        eoi_token_id=ids("<end_of_image>"),
        image_token_id=ids("<image_soft_token>"),
        boa_token_id=ids("<start_of_audio>"),
        eoa_token_id=ids("<end_of_audio>"),
        audio_token_id=ids("<audio_soft_token>"),
    )
    torch.manual_seed(seed)
    model = Gemma3nForConditionalGeneration(config).eval()
    finish(model, tokenizer, eos=[tokenizer.eos_token_id, end_of_turn])
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    processor.save_pretrained(out)
    return out
