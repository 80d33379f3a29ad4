"""Sampling on the real SIB-200 data: invariants, golden output, determinism, seeds."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from support import subprocess_env

from mvlsib.builder.hashing import hash_sorted, hkey
from mvlsib.builder.sample import duplicate_partners, sentence_topics
from mvlsib.builder.sampler import sample_instances
from mvlsib.errors import MvlsibError
from mvlsib.release_format.mvl_sib import TOPICS, topic_slug
from mvlsib.workdir import INSTANCES_FILE
from mvlsib.workdir.corpus import load_corpus

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture(scope="module")
def corpus(full_workdir):
    return load_corpus(full_workdir)


def test_hash_key_is_pinned():
    # Re-implementers check their hash against these values (docs/sampling.md).
    assert hkey(0, "order", "0-0") == int.from_bytes(hashlib.sha256(b"0\x1forder\x1f0-0").digest()[:8], "big")
    assert hkey(0, "order", "0-0") == json.loads((GOLDEN / "hash_keys.json").read_text())["H(0,order,0-0)"]
    assert hash_sorted(["b", "a", "c"], 0, "x") == hash_sorted(["c", "b", "a"], 0, "x")


def test_hash_order_is_the_documented_sort():
    """The batched keys and the sort-free first item give exactly the sort by (hkey, str(item), position),
    repeated items (equal keys) included, whether one item or all are asked for."""
    from mvlsib.builder.hashing import hash_order, key_bytes

    for size in (1, 2, 7, 144):
        for extra in ([], ["x", "x"], [5, 5, 5]):
            items = [(n * 37) % 1009 for n in range(size)] + extra
            want = [items[n] for _, _, n in sorted((hkey(3, "p", "c", x), str(x), n) for n, x in enumerate(items))]
            assert hash_sorted(items, 3, "p", "c") == want
            assert next(hash_order(items, 3, "p", "c")) == want[0]
            assert key_bytes([str(x).encode() for x in items], 3, "p", "c") == [
                hkey(3, "p", "c", x).to_bytes(8, "big") for x in items
            ]


@pytest.mark.usefixtures("full_corpus")
def test_full_sample_counts(full_instances):
    assert len(full_instances) == 3012
    assert [i["instance_id"] for i in full_instances[:4]] == ["0-0", "0-1", "0-2", "1-0"]
    per_sentence = Counter(i["index_id"] for i in full_instances)
    assert len(per_sentence) == 1004 and set(per_sentence.values()) == {3}
    for field in ("sentence_label", "image_label"):
        assert Counter(i[field] for i in full_instances) == {0: 753, 1: 753, 2: 753, 3: 753}
        for topic in TOPICS:
            c = Counter(i[field] for i in full_instances if i["topic"] == topic)
            assert max(c.values()) - min(c.values()) <= 1, (field, topic, c)


def test_full_sample_passes_every_invariant(full_workdir, pool_dir):
    from mvlsib.validation.invariants import validate
    from mvlsib.workdir.instances import load_instances

    result = validate(load_corpus(full_workdir), load_instances(full_workdir), pool_dir)
    assert result.ok, [str(v) for v in result.violations[:10]]
    assert result.summary["languages"] == 199
    assert all(s <= 1 for s in result.summary["positive_image_spread"].values())


def test_duplicate_texts_never_share_an_instance(corpus, full_instances):
    partners = duplicate_partners(corpus)
    # Real SIB-200 has such pairs; the test is meaningless without them.
    assert sum(len(v) for v in partners.values()) // 2 >= 10
    cross_topic = {(a, b) for a, bs in partners.items() for b in bs if a < b}
    topics = sentence_topics(corpus)
    assert any(topics[a] != topics[b] for a, b in cross_topic)
    for inst in full_instances:
        ids = {*inst["ref_sentence_ids"], *inst["sentence_option_ids"]}
        assert len(ids) == 8
        for a in ids:
            assert not (partners.get(a, frozenset()) & ids), inst["instance_id"]


def test_sentence_topics_shortcut_equals_the_pairwise_reading(full_workdir):
    """The list-comparison shortcut (every language like the first) gives the dict the pairwise
    reading gives, in the same order; a corpus it does not fit falls back to that reading."""
    from mvlsib.workdir.corpus import Corpus, load_corpus

    corpus = load_corpus(full_workdir)
    columns = {name: list(corpus.column(name)) for name in corpus.names()}
    pairwise = {int(i): str(t) for i, t in dict.fromkeys(zip(columns["index_id"], columns["topic"]))}
    fast = sentence_topics(corpus)
    assert fast == pairwise and list(fast) == list(pairwise) and len(fast) == 1004

    # Languages after the first list their rows in another order: the shortcut does not apply.
    per_language = 1004
    shuffled = {name: list(values) for name, values in columns.items()}
    for name in shuffled:
        block = shuffled[name][per_language : 2 * per_language]
        shuffled[name][per_language : 2 * per_language] = block[::-1]
    assert sentence_topics(Corpus(columns=shuffled)) == pairwise

    # A topic that differs in one language is refused, wherever it is.
    clash = {name: list(values) for name, values in columns.items()}
    n = 5 * per_language + 17
    clash["topic"][n] = next(t for t in TOPICS if t != clash["topic"][n])
    with pytest.raises(MvlsibError, match=f"sentence {clash['index_id'][n]} has different topics"):
        sentence_topics(Corpus(columns=clash))


def test_golden_records(full_workdir):
    """Any change to the sampling algorithm shows up here (and must be a deliberate decision)."""
    data = (full_workdir / INSTANCES_FILE).read_bytes()
    golden = json.loads((GOLDEN / "seed0.json").read_text(encoding="utf-8"))
    assert hashlib.sha256(data).hexdigest() == golden["sha256"]
    lines = {json.loads(line)["instance_id"]: line for line in data.decode("utf-8").splitlines()}
    for iid, expected in golden["records"].items():
        assert lines[iid] == expected


def test_seed_changes_sample(full_workdir, full_instances, pool_dir):
    from mvlsib.builder.sample import sample

    other = sample(load_corpus(full_workdir), pool_dir, seed=1)
    changed = sum(a.to_json() != json.dumps(b, ensure_ascii=False) for a, b in zip(other, full_instances))
    assert changed > 2900  # nearly every instance differs


def test_byte_identical_across_processes_and_hash_seeds(full_workdir, pool_dir, tmp_path):
    outputs = []
    for hash_seed in ("0", "12345"):
        work = tmp_path / f"w{hash_seed}"
        work.mkdir()
        shutil.copy(full_workdir / "corpus.parquet", work / "corpus.parquet")
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "mvlsib",
                "sample",
                "--seed",
                "0",
                "--workdir",
                str(work),
                "--pool",
                str(pool_dir),
                "--no-progress",
            ],
            capture_output=True,
            text=True,
            env=subprocess_env(PYTHONHASHSEED=hash_seed),
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        digest = hashlib.sha256((work / INSTANCES_FILE).read_bytes()).hexdigest()
        assert f"sha256 {digest}" in proc.stdout
        outputs.append((work / INSTANCES_FILE).read_bytes())
    assert outputs[0] == outputs[1] == (full_workdir / INSTANCES_FILE).read_bytes()


# ----------------------------------------------------------------------------- small synthetic inputs


def _toy(n_per_topic: int = 8):
    topics_by_id = {}
    for t_idx, topic in enumerate(TOPICS):
        for j in range(n_per_topic):
            topics_by_id[t_idx * 100 + j] = topic
    images = {t: [f"{topic_slug(t)}_{i}" for i in range(10)] for t in TOPICS}
    return topics_by_id, images


def test_partners_are_avoided_even_when_they_are_most_of_a_topic():
    topics_by_id, images = _toy(8)
    # Sentences 0..5 of "entertainment" all read the same somewhere: at most one of them per instance.
    same = list(range(6))
    partners = {a: frozenset(b for b in same if b != a) for a in same}
    with pytest.raises(MvlsibError, match="sentences"):
        # Only 3 distinct texts remain for an instance of sentence 0 (itself + 6, 7): 4 references impossible.
        sample_instances(topics_by_id, images, seed=0, partners=partners)
    partners = {0: frozenset({1}), 1: frozenset({0}), 100: frozenset({0}), 101: frozenset()}
    partners[0] = frozenset({1, 100})
    out = sample_instances(topics_by_id, images, seed=0, partners=partners)
    for inst in out:
        ids = {*inst.ref_sentence_ids, *inst.sentence_option_ids}
        assert not ({0, 1} <= ids) and not ({0, 100} <= ids)


def test_too_few_images_is_a_clear_error():
    topics_by_id, images = _toy(8)
    images["sports"] = images["sports"][:4]
    with pytest.raises(MvlsibError, match="4 image.*'sports'.*at least 5"):
        sample_instances(topics_by_id, images, seed=0)


def test_input_order_does_not_matter():
    topics_by_id, images = _toy(8)
    a = sample_instances(topics_by_id, images, seed=3)
    shuffled_ids = dict(sorted(topics_by_id.items(), key=lambda kv: -kv[0]))
    shuffled_imgs = {t: list(reversed(v)) for t, v in reversed(list(images.items()))}
    b = sample_instances(shuffled_ids, shuffled_imgs, seed=3)
    assert [x.to_json() for x in a] == [x.to_json() for x in b]


def test_sample_cli_without_corpus_explains(tmp_path, pool_dir):
    from click.testing import CliRunner

    from mvlsib.cli import build_cli

    result = CliRunner().invoke(build_cli, ["sample", "--workdir", str(tmp_path), "--pool", str(pool_dir)])
    assert result.exit_code != 0
    assert "ingest" in result.output


def _other_pythons() -> list[str]:
    import glob
    import os

    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    found = []
    for exe in sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3"))):
        version = exe.split("/versions/")[1].split("/")[0]
        minor = tuple(int(x) for x in version.split(".")[:2])
        if minor >= (3, 10) and ".".join(map(str, minor)) != here:
            found.append(exe)
    return found


CROSS_VERSION_SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from mvlsib.builder.sampler import sample_instances
data = json.load(open(sys.argv[2], encoding="utf-8"))
topics = {int(k): v for k, v in data["topics"].items()}
partners = {int(k): frozenset(v) for k, v in data["partners"].items()}
out = sample_instances(topics, data["images"], seed=0, partners=partners)
sys.stdout.buffer.write("".join(i.to_json() + "\n" for i in out).encode("utf-8"))
"""


def test_byte_identical_across_python_versions(corpus, full_workdir, pool_dir, tmp_path):
    """The pure sampler (stdlib only) gives the same bytes on every other Python >= 3.10 found here."""
    from mvlsib.workdir.pool_manifest import images_by_topic, read_manifest

    others = _other_pythons()
    if not others:
        pytest.skip("no other Python >= 3.10 installed under ~/.pyenv/versions")
    inputs = tmp_path / "inputs.json"
    inputs.write_text(
        json.dumps(
            {
                "topics": {str(k): v for k, v in sentence_topics(corpus).items()},
                "partners": {str(k): sorted(v) for k, v in duplicate_partners(corpus).items()},
                "images": images_by_topic(read_manifest(pool_dir)),
            }
        ),
        encoding="utf-8",
    )
    expected = (full_workdir / INSTANCES_FILE).read_bytes()
    src = str(Path(__file__).resolve().parents[2] / "src")
    for exe in others:
        proc = subprocess.run(
            [exe, "-I", "-c", CROSS_VERSION_SCRIPT, src, str(inputs)], capture_output=True, check=False
        )
        assert proc.returncode == 0, (exe, proc.stderr.decode())
        assert proc.stdout == expected, f"{exe} produced different instances"
