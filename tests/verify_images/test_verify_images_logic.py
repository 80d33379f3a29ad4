"""verify-images logic: rotations, pass threshold, topic-name files, bad input, and the openai
backend against a local server that identifies each image and answers in varied formats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.fakes.openai_compat import FORMATS, LENIENT_ONLY_SHIFT, topic_server

from mvlsib.cli import build_cli
from mvlsib.errors import MvlsibError
from mvlsib.release_format.mvl_sib import TOPICS
from mvlsib.verify_images.inputs import load_pool_images, read_topic_names
from mvlsib.verify_images.prompts import plan_asks, question_text
from mvlsib.verify_images.rotations import LETTERS, required_correct, rotate, rotation_shifts
from mvlsib.verify_images.verify import ModelSpec

N_IMAGES = 70

# ------------------------------------------------------------------ rotations


def test_seven_rotations_put_every_topic_once_at_every_letter():
    shifts = rotation_shifts(7)
    assert shifts == list(range(7))
    orders = [rotate(TOPICS, s) for s in shifts]
    for pos in range(7):
        assert sorted(o[pos] for o in orders) == sorted(TOPICS)
    for o in orders:
        assert sorted(o) == sorted(TOPICS)
    assert rotate(TOPICS, 2)[0] == TOPICS[2] and rotate(TOPICS, 2)[-1] == TOPICS[1]


@pytest.mark.parametrize("n, expected", [(1, [0]), (2, [0, 3]), (3, [0, 2, 4]), (4, [0, 1, 3, 5]), (7, list(range(7)))])
def test_fewer_rotations_are_spread_evenly(n, expected):
    assert rotation_shifts(n) == expected


@pytest.mark.parametrize("n", [0, 8, -1])
def test_rotation_count_out_of_range(n):
    with pytest.raises(ValueError, match="between 1 and 7"):
        rotation_shifts(n)


@pytest.mark.parametrize(
    "n, threshold, need",
    [(7, 0.5, 4), (4, 0.5, 3), (2, 0.5, 2), (1, 0.5, 1), (7, 1.0, 7), (7, 0.0, 1), (10, 0.7, 8), (7, 4 / 7, 5)],
)
def test_required_correct(n, threshold, need):
    assert required_correct(n, threshold) == need


def test_question_and_asks():
    text = question_text(rotate(TOPICS, 3))
    lines = text.splitlines()
    assert lines[0] == "Which of these topics does the image show?"
    assert lines[1:8] == [f"{LETTERS[i]}. {rotate(TOPICS, 3)[i]}" for i in range(7)]
    assert lines[-1] == "Answer with the option's letter from the given choices directly."
    asks = plan_asks(["a_0", "b_1"], {"eng_Latn": TOPICS}, rotation_shifts(7))
    assert len(asks) == 14 and {a.shift for a in asks if a.image_id == "b_1"} == set(range(7))
    assert all(a.order == a.names for a in asks)


def test_model_spec_prefixes():
    assert ModelSpec.parse("org/model") == ModelSpec("org/model", "org/model", "hf")
    assert ModelSpec.parse("openai:served", "hf") == ModelSpec("openai:served", "served", "openai")
    assert ModelSpec.parse("hf:./folder", "openai") == ModelSpec("hf:./folder", "./folder", "hf")
    assert ModelSpec.parse("C:/models/x").backend == "hf"


# ------------------------------------------------------------------ topic names


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_topic_names_csv(tmp_path):
    path = _write(
        tmp_path / "names.csv",
        (
            "language,entertainment,geography,health,politics,science_technology,sports,travel\n"
            "eng_Latn,entertainment,geography,health,politics,science/technology,sports,travel\n"
            "deu_Latn,Unterhaltung,Geografie,Gesundheit,Politik,Wissenschaft/Technik,Sport,Reisen\n"
        ),
    )
    names = read_topic_names(path)
    assert list(names) == ["eng_Latn", "deu_Latn"]
    assert names["deu_Latn"][TOPICS.index("science/technology")] == "Wissenschaft/Technik"


@pytest.mark.parametrize(
    "body, message",
    [
        ("language,entertainment,geography\nx,a,b\n", "line 1: the header must have"),
        (
            "entertainment,geography,health,politics,science/technology,sports,travel\na,b,c,d,e,f,g\n",
            "missing: language",
        ),
        (
            "language,entertainment,geography,health,politics,science/technology,sports,travel\n"
            "deu_Latn,Sport,Geografie,Gesundheit,Politik,Technik,sport,Reisen\n",
            "line 2 (deu_Latn): two topics share the name 'sport'",
        ),
        (
            "language,entertainment,geography,health,politics,science/technology,sports,travel\n"
            "deu_Latn,Unterhaltung,,Gesundheit,Politik,Technik,Sport,Reisen\n",
            "line 2 (deu_Latn): no name for geography",
        ),
        (
            "language,entertainment,geography,health,politics,science/technology,sports,travel\n"
            "x,a,b,c,d,e,f,g\nx,h,i,j,k,l,m,n\n",
            "line 3: language 'x' appears twice",
        ),
        ("language,entertainment,geography,health,politics,science/technology,sports,travel\n", "no language rows"),
    ],
)
def test_topic_names_errors(tmp_path, body, message):
    path = _write(tmp_path / "names.csv", body)
    with pytest.raises(MvlsibError, match=message.replace("(", r"\(").replace(")", r"\)")) as err:
        read_topic_names(path)
    assert str(path) in str(err.value)


# ------------------------------------------------------------------ bad input through the CLI


def verify(*args: str):
    return CliRunner().invoke(build_cli, ["verify-images", "--no-progress", *map(str, args)])


def test_missing_pool_is_a_clean_error(tmp_path):
    result = verify(
        "--pool",
        tmp_path / "nope",
        "--model",
        "openai:x",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--out",
        tmp_path / "o",
    )
    assert result.exit_code == 2 and "no image-pool manifest" in result.output
    assert "Traceback" not in result.output


def test_manifest_file_outside_the_pool_is_refused(tmp_path, pool_dir):
    pool = tmp_path / "pool"
    pool.mkdir()
    header = (pool_dir / "manifest.csv").read_text("utf-8").splitlines()[0]
    (pool / "manifest.csv").write_text(header + "\nhealth_0,health,../../etc/passwd,CC0-1.0,a,b,c,t\n", "utf-8")
    with pytest.raises(MvlsibError, match="line 2: file '../../etc/passwd' lies outside the pool folder"):
        load_pool_images(pool)


def test_openai_without_base_url(tmp_path, pool_dir):
    result = verify("--pool", pool_dir, "--model", "openai:x", "--out", tmp_path)
    assert result.exit_code == 2 and "needs --base-url" in result.output


@pytest.mark.eval
def test_text_only_model_is_refused(tmp_path, pool_dir):
    from transformers import LlamaConfig

    LlamaConfig(
        hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32, vocab_size=50
    ).save_pretrained(tmp_path / "llama")
    result = verify("--pool", pool_dir, "--model", tmp_path / "llama", "--out", tmp_path / "o", "--device", "cpu")
    assert result.exit_code == 2, result.output
    assert "neither an image-text-to-text model nor a dual encoder" in result.output


def test_duplicate_model(tmp_path, pool_dir):
    result = verify("--pool", pool_dir, "--model", "m", "--model", "m", "--out", tmp_path)
    assert result.exit_code == 2 and "given more than once" in result.output


# ------------------------------------------------------------------ openai backend, local server


@pytest.fixture(scope="module")
def pool_images(pool_dir):
    return {row.image_id: (row.topic, im) for row, im in load_pool_images(pool_dir)}


def test_server_identifies_every_pool_image(pool_images):
    # a JPEG round trip (the backend's --image-encoding jpeg) must not confuse the test server
    import io

    from PIL import Image

    server = topic_server(pool_images)
    for image_id, (_, im) in pool_images.items():
        buf = io.BytesIO()
        im.save(buf, format="JPEG", quality=95)
        assert server.identify(Image.open(buf)) == image_id


@pytest.fixture(scope="module")
def served_run(tmp_path_factory, pool_dir, pool_images):
    """Two served models: an oracle (wrong on two images) and a position-biased one."""
    out = tmp_path_factory.mktemp("served")
    wrong = {"health_3": "travel", "politics_5": "sports"}
    with topic_server(pool_images, wrong=wrong) as server:
        result = verify(
            "--pool",
            pool_dir,
            "--backend",
            "openai",
            "--base-url",
            server.base_url,
            "--model",
            "oracle",
            "--model",
            "always-a",
            "--out",
            out,
            "--concurrency",
            "4",
        )
    return result, json.loads((out / "report.json").read_text("utf-8")), server, wrong


def test_openai_oracle_passes_all_but_its_wrong_answers(served_run):
    result, report, server, wrong = served_run
    assert result.exit_code == 1, result.output
    assert len(server.requests) == 2 * N_IMAGES * 7
    assert all(r["temperature"] == 0 for r in server.requests)
    oracle_failed = sorted(i for i, m in report["failures"] if m == "oracle")
    assert oracle_failed == sorted(wrong)
    for img in report["images"]:
        res = img["results"]["oracle"]
        by_shift = {p["shift"]: p for p in res["predictions"]}
        # each answer format came back once per image and was read as expected
        for shift, p in by_shift.items():
            assert p["response"].strip() != ""
            assert (p["letter"] is None) == (shift == LENIENT_ONLY_SHIFT), (FORMATS[shift], p)
        if img["image_id"] in wrong:
            assert res["correct"] == 0 and res["most_common_wrong"] == wrong[img["image_id"]]
        else:
            assert res["correct"] == 6 and res["passed"]


def test_rotations_cancel_position_bias(served_run):
    _, report, _, _ = served_run
    # always "A": right exactly once per image (the order that puts its topic at A), so every image fails
    assert report["summary"]["always-a"]["failed"] == N_IMAGES
    assert report["summary"]["always-a"]["answer_letters"]["A"] == N_IMAGES * 7
    for img in report["images"]:
        assert img["results"]["always-a"]["correct"] == 1


def test_lenient_parsing_and_translated_names(tmp_path, pool_dir, pool_images):
    german = ["Unterhaltung", "Geografie", "Gesundheit", "Politik", "Wissenschaft/Technik", "Sport", "Reisen"]
    names_csv = _write(
        tmp_path / "names.csv",
        "language," + ",".join(TOPICS) + "\neng_Latn," + ",".join(TOPICS) + "\ndeu_Latn," + ",".join(german) + "\n",
    )
    with topic_server(pool_images, names=dict(zip(german, TOPICS))) as server:
        result = verify(
            "--pool",
            pool_dir,
            "--base-url",
            server.base_url,
            "--model",
            "openai:oracle",
            "--topic-names",
            names_csv,
            "--parse-mode",
            "lenient",
            "--rotations",
            "7",
            "--out",
            tmp_path / "out",
        )
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "out" / "report.json").read_text("utf-8"))
    assert len(server.requests) == N_IMAGES * 7 * 2
    shown = {json.dumps(r["messages"][0]["content"][-1]["text"]) for r in server.requests}
    assert any("Wissenschaft/Technik" in s for s in shown)
    for img in report["images"]:
        res = img["results"]["openai:oracle"]
        assert res["languages"] == {
            "eng_Latn": {"correct": 7, "n": 7, "passed": True},
            "deu_Latn": {"correct": 7, "n": 7, "passed": True},
        }
        for p in res["predictions"]:
            assert p["predicted_topic"] == img["topic"]  # canonical topic, whatever name was shown
            if p["language"] == "deu_Latn":
                assert set(p["options"]) == set(german)
