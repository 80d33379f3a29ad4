"""The chat template docs/model_families.md tells vLLM users to serve LLaVA-1.5 with is the one the vLLM
suite serves it with (and finds equal to the hf backend's prompts)."""

from __future__ import annotations

import re
from pathlib import Path

from support.vllm_servers import LLAVA_IN_PLACE_TEMPLATE

DOC = Path(__file__).resolve().parents[2] / "docs" / "model_families.md"


def test_the_documented_llava_template_is_the_one_the_suite_serves():
    blocks = re.findall(r"```jinja\n\s*(.*?)\n\s*```", DOC.read_text("utf-8"), re.S)
    assert blocks == [LLAVA_IN_PLACE_TEMPLATE]
