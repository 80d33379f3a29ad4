"""Llama 3.2 Vision (``meta-llama/Llama-3.2-11B-Vision-Instruct``, ``MllamaForConditionalGeneration``):
tiled vision encoder whose output the Llama 3 text model reads through cross-attention layers.

The template writes ``{{- bos_token }}`` itself, keeps images in place as ``<|image|>``, and emits
no system block when a turn has images (it raises if a system message comes with images).
``<|image|>`` is *not* expanded: one token per image, attended to through the cross-attention
mask. The processor adds ``<|begin_of_text|>`` only when the text lacks it, but the Llama 3
tokenizer prepends one regardless, so the rendered prompt tokenizes with two. Images must be
a nested list per prompt; each becomes up to ``max_image_tiles`` tiles.
"""

from __future__ import annotations

from pathlib import Path

from ._common import finish, save, train_fast_tokenizer

FAMILY = "mllama"
KIND = "generative"
TEMPLATE_SOURCE = (
    "meta-llama/Llama-3.2-11B-Vision-Instruct chat template (tokenizer_config.json, and chat_template.json "
    "since the Hub PR 'Update processor chat template ... Synced with tokenizer's'), verbatim as copied in "
    "johnmai-dev/Jinja Tests/Templates/VisionTests.swift (llama3_2visionChatTemplate); the same text is in "
    "NVIDIA NeMo's MLlamaTemplateConfig"
)

# Verbatim (decoded from the Swift string literal; trailing spaces included).
CHAT_TEMPLATE = (
    "{{- bos_token }}\n"
    "{%- if custom_tools is defined %}\n"
    "    {%- set tools = custom_tools %}\n"
    "{%- endif %}\n"
    "{%- if not tools_in_user_message is defined %}\n"
    "    {%- set tools_in_user_message = true %}\n"
    "{%- endif %}\n"
    "{%- if not date_string is defined %}\n"
    "    {%- if strftime_now is defined %}\n"
    '        {%- set date_string = strftime_now("%d %b %Y") %}\n'
    "    {%- else %}\n"
    '        {%- set date_string = "26 Jul 2024" %}\n'
    "    {%- endif %}\n"
    "{%- endif %}\n"
    "{%- if not tools is defined %}\n"
    "    {%- set tools = none %}\n"
    "{%- endif %}\n"
    "\n"
    "{#- This block extracts the system message, so we can slot it into the right place. #}\n"
    "{%- if messages[0]['role'] == 'system' %}\n"
    "    {%- set system_message = messages[0]['content']|trim %}\n"
    "    {%- set messages = messages[1:] %}\n"
    "{%- else %}\n"
    '    {%- set system_message = "" %}\n'
    "{%- endif %}\n"
    "\n"
    "{#- Find out if there are any images #}\n"
    "{% set image_ns = namespace(has_images=false) %}      \n"
    "{%- for message in messages %}\n"
    "    {%- for content in message['content'] %}\n"
    "        {%- if content['type'] == 'image' %}\n"
    "            {%- set image_ns.has_images = true %}\n"
    "        {%- endif %}\n"
    "    {%- endfor %}\n"
    "{%- endfor %}\n"
    "\n"
    "{#- Error out if there are images and system message #}\n"
    '{%- if image_ns.has_images and not system_message == "" %}\n'
    '    {{- raise_exception("Prompting with images is incompatible with system messages.") }}\n'
    "{%- endif %}\n"
    "\n"
    "{#- System message if there are no images #}\n"
    "{%- if not image_ns.has_images %}\n"
    '    {{- "<|start_header_id|>system<|end_header_id|>\\n\\n" }}\n'
    "    {%- if tools is not none %}\n"
    '        {{- "Environment: ipython\\n" }}\n'
    "    {%- endif %}\n"
    '    {{- "Cutting Knowledge Date: December 2023\\n" }}\n'
    '    {{- "Today Date: " + date_string + "\\n\\n" }}\n'
    "    {%- if tools is not none and not tools_in_user_message %}\n"
    '        {{- "You have access to the following functions. To call a function, please respond with JSON for a function call." }}\n'
    '        {{- \'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.\' }}\n'
    '        {{- "Do not use variables.\\n\\n" }}\n'
    "        {%- for t in tools %}\n"
    "            {{- t | tojson(indent=4) }}\n"
    '            {{- "\\n\\n" }}\n'
    "        {%- endfor %}\n"
    "    {%- endif %}\n"
    "    {{- system_message }}\n"
    '    {{- "<|eot_id|>" }}\n'
    "{%- endif %}\n"
    "\n"
    "{#- Custom tools are passed in a user message with some extra guidance #}\n"
    "{%- if tools_in_user_message and not tools is none %}\n"
    "    {#- Extract the first user message so we can plug it in here #}\n"
    "    {%- if messages | length != 0 %}\n"
    "        {%- set first_user_message = messages[0]['content']|trim %}\n"
    "        {%- set messages = messages[1:] %}\n"
    "    {%- else %}\n"
    '        {{- raise_exception("Cannot put tools in the first user message when there\'s no first user message!") }}\n'
    "{%- endif %}\n"
    "    {{- '<|start_header_id|>user<|end_header_id|>\\n\\n' -}}\n"
    '    {{- "Given the following functions, please respond with a JSON for a function call " }}\n'
    '    {{- "with its proper arguments that best answers the given prompt.\\n\\n" }}\n'
    '    {{- \'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.\' }}\n'
    '    {{- "Do not use variables.\\n\\n" }}\n'
    "    {%- for t in tools %}\n"
    "        {{- t | tojson(indent=4) }}\n"
    '        {{- "\\n\\n" }}\n'
    "    {%- endfor %}\n"
    '    {{- first_user_message + "<|eot_id|>"}}\n'
    "{%- endif %}\n"
    "\n"
    "{%- for message in messages %}\n"
    "    {%- if not (message.role == 'ipython' or message.role == 'tool' or 'tool_calls' in message) %}\n"
    "    {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' }}\n"
    "        {%- if message['content'] is string %}\n"
    "            {{- message['content'] }}\n"
    "        {%- else %}\n"
    "            {%- for content in message['content'] %}\n"
    "                {%- if content['type'] == 'image' %}\n"
    "                    {{- '<|image|>' }}\n"
    "                {%- elif content['type'] == 'text' %}\n"
    "                    {{- content['text'] }}\n"
    "                {%- endif %}\n"
    "            {%- endfor %}\n"
    "        {%- endif %}\n"
    "        {{- '<|eot_id|>' }}\n"
    "    {%- elif 'tool_calls' in message %}\n"
    "        {%- if not message.tool_calls|length == 1 %}\n"
    '            {{- raise_exception("This model only supports single tool-calls at once!") }}\n'
    "        {%- endif %}\n"
    "        {%- set tool_call = message.tool_calls[0].function %}\n"
    "        {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' -}}\n"
    "        {{- '{\"name\": \"' + tool_call.name + '\", ' }}\n"
    "        {{- '\"parameters\": ' }}\n"
    "        {{- tool_call.arguments | tojson }}\n"
    '        {{- "}" }}\n'
    '        {{- "<|eot_id|>" }}\n'
    '    {%- elif message.role == "tool" or message.role == "ipython" %}\n'
    '        {{- "<|start_header_id|>ipython<|end_header_id|>\\n\\n" }}\n'
    "        {%- if message.content is mapping or message.content is iterable %}\n"
    "            {{- message.content | tojson }}\n"
    "        {%- else %}\n"
    "            {{- message.content }}\n"
    "        {%- endif %}\n"
    '        {{- "<|eot_id|>" }}\n'
    "    {%- endif %}\n"
    "{%- endfor %}\n"
    "{%- if add_generation_prompt %}\n"
    "    {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}\n"
    "{%- endif %}\n"
)

SPECIAL_TOKENS = [
    "<|begin_of_text|>",
    "<|end_of_text|>",
    "<|finetune_right_pad_id|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|eom_id|>",
    "<|eot_id|>",
    "<|python_tag|>",
    "<|image|>",
]
TILE = 16  # the real tile is 560
PATCH_SIZE = 8  # 2 x 2 patches (+ CLS) per tile
MAX_IMAGE_TILES = 4  # as the real checkpoints (and their 8 supported aspect ratios)


def build(out_dir: Path, texts: list[str], *, seed: int = 0) -> Path:
    import torch
    from transformers import (
        MllamaConfig,
        MllamaForConditionalGeneration,
        MllamaImageProcessor,
        MllamaProcessor,
        MllamaTextConfig,
        MllamaVisionConfig,
    )

    tokenizer = train_fast_tokenizer(
        texts,
        SPECIAL_TOKENS,
        bos_token="<|begin_of_text|>",
        eos_token="<|eot_id|>",
        pad_token="<|finetune_right_pad_id|>",
        unk_token="<|end_of_text|>",
        add_bos_token=True,  # the Llama 3 tokenizer prepends <|begin_of_text|>, though the template writes it
    )
    image_processor = MllamaImageProcessor(size={"height": TILE, "width": TILE}, max_image_tiles=MAX_IMAGE_TILES)
    processor = MllamaProcessor(image_processor=image_processor, tokenizer=tokenizer, chat_template=CHAT_TEMPLATE)
    vision = MllamaVisionConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_global_layers=1,
        attention_heads=2,
        image_size=TILE,
        patch_size=PATCH_SIZE,
        max_num_tiles=MAX_IMAGE_TILES,
        intermediate_layers_indices=[0],
        vision_output_dim=32 * 2,  # hidden size x (intermediate layers + final)
    )
    end_of_text = tokenizer.convert_tokens_to_ids("<|end_of_text|>")
    eom, eot = tokenizer.convert_tokens_to_ids("<|eom_id|>"), tokenizer.convert_tokens_to_ids("<|eot_id|>")
    text = MllamaTextConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        cross_attention_layers=[1],
        max_position_embeddings=4096,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=[end_of_text, eom, eot],
        pad_token_id=tokenizer.pad_token_id,
    )
    config = MllamaConfig(
        vision_config=vision,
        text_config=text,
        image_token_index=tokenizer.convert_tokens_to_ids("<|image|>"),
    )
    torch.manual_seed(seed)
    model = MllamaForConditionalGeneration(config).eval()
    # The instruct checkpoint stops on any of the three end tokens.
    finish(model, tokenizer, eos=[end_of_text, eom, eot])
    return save(model, processor, Path(out_dir))
