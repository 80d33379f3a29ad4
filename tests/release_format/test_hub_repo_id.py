"""The one Hub repo id rule (``mvl_sib.HUB_REPO_ID``) never accepts what huggingface_hub's own
``validate_repo_id`` refuses (a refused id would become a library traceback after the toolkit
said yes), over generated ids: every short string over the characters that matter."""

from __future__ import annotations

import itertools

import pytest
from huggingface_hub.errors import HFValidationError
from huggingface_hub.utils import validate_repo_id

from mvlsib.release_format import mvl_sib

# The characters the rules are about: every part of length 1-3 beside "a", and of length 1-2 beside each other.
ALPHABET = "a9-._\x1b/ "


def _ids():
    parts = ["".join(p) for n in range(1, 4) for p in itertools.product(ALPHABET.replace("/", ""), repeat=n)]
    short = [p for p in parts if len(p) < 3]
    yield from (f"{a}/{b}" for a in short for b in short)
    yield from (pair for p in parts for pair in (f"{p}/a", f"a/{p}"))
    yield from ("org/" + "a" * 96, "org/" + "a" * 97, "org/x.git", "org/a..b", "org/a--b", "a/b/c", "org/rel\n")


def _hf_accepts(repo_id: str) -> bool:
    try:
        validate_repo_id(repo_id)
    except HFValidationError:
        return False
    return True


def test_every_id_we_accept_huggingface_hub_accepts():
    wrong = [i for i in _ids() if mvl_sib.hub_id_problem(i) is None and not _hf_accepts(i)]
    assert not wrong, wrong[:20]


@pytest.mark.parametrize("repo_id", ["my-org/mvl-sib", "WueNLP/mvl-sib", "a/b", "org_1/x.y_z", "Davlan/sib200"])
def test_the_ids_people_use_pass(repo_id):
    assert mvl_sib.hub_id_problem(repo_id) is None and _hf_accepts(repo_id)


@pytest.mark.parametrize(
    "repo_id", ["org/a..b", "-org/x", "org/x-", "org/x.git", "org/rel\x1b[2J", "org/rel\n", "a/b/c"]
)
def test_what_either_refuses_is_refused_with_the_rule_named(repo_id):
    problem = mvl_sib.hub_id_problem(repo_id)
    assert problem is not None and "ORG/NAME" in problem
