"""Templates that move the images to the start of the conversation and number them (Molmo2's real
template: ``<|image|>`` for one image, ``Image 1<|image|>Image 2<|image|>...`` for several).

The probe difference of such a template is ``Image 1<|image|>Image 2``, no per-image placeholder: the
renderer must take the processor's own image token instead and render inline (each ``<|image|>`` where the
prompt puts its image, no numbering), never write the numbered difference into the prompt. Runs in the
main environment: only the template is rendered (with transformers' own renderer), no processor is built.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from tiny_models.families.molmo2 import CHAT_TEMPLATE
from transformers.utils.chat_template_utils import render_jinja_template

from mvlsib.evaluation.backends.hf.inputs import Renderer, find_image_placeholder, placement_errors
from mvlsib.evaluation.run.prompts import build_prompt

pytestmark = pytest.mark.eval

SENTENCES = ["The match was played.", "Mutation adds variation.", "Tourism matters.", "Pests spoil food."]


class TemplateOnly:
    """What the renderer uses of a processor: ``apply_chat_template`` (text) and ``image_token``."""

    image_token = "<|image|>"

    def apply_chat_template(self, conversation, add_generation_prompt, tokenize, **kwargs):
        assert tokenize is False
        rendered, _ = render_jinja_template(
            conversations=[conversation], chat_template=CHAT_TEMPLATE, add_generation_prompt=add_generation_prompt
        )
        return rendered[0]


def test_the_real_template_numbers_the_images_it_moves_first():
    render = TemplateOnly().apply_chat_template
    s2i = build_prompt("s2i", SENTENCES[:1], ["a", "b", "c", "d"])
    native = render(s2i.messages(), add_generation_prompt=True, tokenize=False)
    assert native.startswith("Image 1<|image|>Image 2<|image|>Image 3<|image|>Image 4<|image|><|im_start|>user\n")
    one = build_prompt("i2s", ["a"], SENTENCES)
    assert render(one.messages(), add_generation_prompt=True, tokenize=False).startswith("<|image|><|im_start|>user\n")


def test_numbered_images_first_fall_back_to_the_processors_image_token():
    def render(conversation):
        return TemplateOnly().apply_chat_template(conversation, add_generation_prompt=True, tokenize=False)

    # Without the processor's token the difference is the numbered prefix, which is no per-image placeholder.
    assert find_image_placeholder(render) == "Image 1<|image|>Image 2"
    assert find_image_placeholder(render, "<|image|>") == "<|image|>"
    # A token the template does not write once per image is not taken.
    assert find_image_placeholder(render, "<|im_start|>") == "Image 1<|image|>Image 2"


def test_molmo2_prompts_are_rendered_inline_with_each_image_where_the_prompt_puts_it():
    renderer = Renderer(TemplateOnly(), {})
    s2i = build_prompt("s2i", SENTENCES[:1], ["a", "b", "c", "d"])
    text = renderer.render(s2i.messages(), has_images=True)
    assert renderer.mode == "inline" and renderer.placeholder == "<|image|>"
    assert placement_errors(text, "<|image|>", s2i.messages()) == []
    assert text.startswith("<|im_start|>user\n") and "Image 1" not in text and text.count("<|image|>") == 4
    assert "\nA. <|image|>\nB. <|image|>\nC. <|image|>\nD. <|image|>\n" in text  # each image after its letter
    i2s = build_prompt("i2s", ["a", "b", "c"], SENTENCES)
    text = renderer.render(i2s.messages(), has_images=True)
    assert placement_errors(text, "<|image|>", i2s.messages()) == [] and text.count("<|image|>") == 3
    assert text.endswith("<|im_end|>\n<|im_start|>assistant\n")


def test_a_template_keeping_images_in_place_keeps_its_own_placeholder():
    """The fallback changes nothing for a template whose difference is a clean per-image placeholder."""
    qwen_like = (
        "{% for m in messages %}<|im_start|>{{ m.role }}\n{% for c in m.content %}"
        "{% if c.type == 'image' %}<|vision_start|><|image_pad|><|vision_end|>{% else %}{{ c.text }}{% endif %}"
        "{% endfor %}<|im_end|>\n{% endfor %}<|im_start|>assistant\n"
    )

    def render(conversation):
        rendered, _ = render_jinja_template(conversations=[conversation], chat_template=qwen_like)
        return rendered[0]

    placeholder = "<|vision_start|><|image_pad|><|vision_end|>"
    assert find_image_placeholder(render, "<|image_pad|>") == placeholder
    processor = SimpleNamespace(image_token="<|image_pad|>", apply_chat_template=lambda c, **kw: render(c))
    renderer = Renderer(processor, {})
    renderer.render(build_prompt("i2s", ["a", "b"], SENTENCES).messages(), has_images=True)
    assert renderer.mode == "native" and renderer.placeholder == placeholder
