"""Generated faults for validate: every field of an instance record, every kind of wrong value."""

from __future__ import annotations

import copy

import pytest
from support import POOL_DIR

from mvlsib.validation.invariants import validate
from mvlsib.workdir.corpus import load_corpus


@pytest.fixture(scope="module")
def corpus(full_workdir):
    return load_corpus(full_workdir)


def _run(corpus, instances, schemas=False):
    return validate(corpus, instances, POOL_DIR, schemas=schemas)


# 1.0 and 0.0: JSON Schema's "integer" takes an integral float, which then indexes a list (a traceback)
WRONG_VALUES = [[], {}, None, 1.5, 1.0, 0.0, True, "x\x1b[2J", [[]], -1, "", 10**30]
FIELDS = ["instance_id", "index_id", "topic", "ref_sentence_ids", "ref_image_ids", "neg_topics",
          "sentence_option_ids", "sentence_label", "image_option_ids", "topic_options", "image_label"]  # fmt: skip


@pytest.mark.parametrize("field", FIELDS)
def test_a_wrong_type_in_any_field_is_a_schema_violation_never_a_crash(corpus, full_instances, field):
    """Generated: every field of an instance record, every kind of wrong value (unhashable, null, a
    float, an escape sequence, a huge integer): validate lists it as a schema violation of that
    record and every other check keeps running."""
    for value in WRONG_VALUES:
        bad = copy.deepcopy(full_instances[:40])
        bad[3][field] = value
        result = _run(corpus, bad, schemas=True)
        hits = [v for v in result.violations if v.rule == "schema" and field in v.detail]
        if field == "instance_id" and isinstance(value, str) and value:
            continue  # a well-typed id that is not one: the count check names it instead
        assert hits, (field, value, [str(v) for v in result.violations[:5]])
