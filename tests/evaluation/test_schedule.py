"""Prefix-friendly processing order: prompts sharing a prefix are sent together,
and nothing a user keeps (predictions file, metrics, shard sets, resume) changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import EVAL_LANGUAGES as LANGUAGES
from support.fakes.openai_compat import content_server, text_of

from mvlsib.cli import eval_cli
from mvlsib.evaluation.run import runner
from mvlsib.evaluation.run.runner import RunOptions, build_items, plan_items, resolve_tasks_ks, run_eval
from mvlsib.evaluation.run.schedule import prefix_key, prefix_order
from mvlsib.evaluation.run.shards import Shard, select

COMMON = [
    "--tasks",
    "i2s,s2i,t2s,s2t",
    "--k",
    "1,3",
    "--languages",
    ",".join(LANGUAGES),
    "--limit",
    "6",
    "--max-new-tokens",
    "1",
    "--no-progress",
]


def _items(release_dir, limit=6):
    opts = RunOptions(data=str(release_dir), model="m", out=Path("unused"), ks=(1, 3), languages=LANGUAGES, limit=limit)
    pairs = resolve_tasks_ks(opts.tasks, opts.ks)
    items, _ = build_items(opts, pairs, list(LANGUAGES))
    return items


def _lcp(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def test_prefix_order_keeps_shared_prefixes_together(release_dir):
    items = _items(release_dir)
    ordered = prefix_order(items)
    assert sorted(map(id, ordered)) == sorted(map(id, items)) and len(ordered) == len(items) == 2 * 7 * 6
    keys = [prefix_key(it.request.messages) for it in ordered]
    # i2s: the same reference images in every language -> all prompts showing one reference tuple
    # (both languages of an instance, and other instances that drew the same images) are one block
    blocks: dict[tuple, list[int]] = {}
    for n, it in enumerate(ordered):
        if it.task == "i2s":
            blocks.setdefault((it.k, it.request.image_ids), []).append(n)
    assert blocks
    for where in blocks.values():
        assert where == list(range(where[0], where[-1] + 1)) and len(where) % len(LANGUAGES) == 0
    # any prefix (here: every prompt's instruction + references) is held by one contiguous block
    for it in items:
        upto = prefix_key(it.request.messages).split("Options:")[0]
        holders = [n for n, k in enumerate(keys) if k.startswith(upto)]
        assert holders == list(range(holders[0], holders[-1] + 1))
    # neighbours share more than in today's order (language first)
    canon = [prefix_key(it.request.messages) for it in items]
    shared = sum(_lcp(a, b) for a, b in zip(keys, keys[1:]))
    assert shared > sum(_lcp(a, b) for a, b in zip(canon, canon[1:]))


def test_shard_sets_are_unchanged(release_dir):
    """--shard deals the canonical order; the new order only reorders inside a shard."""
    items = _items(release_dir)
    for i in range(3):
        shard = select(items, Shard(i, 3))
        assert set(map(id, prefix_order(shard))) == {id(it) for n, it in enumerate(items) if n % 3 == i}


def _openai_opts(release_dir, out, url, **kw):
    return RunOptions(
        data=str(release_dir),
        model="served",
        out=out,
        ks=(1, 3),
        languages=LANGUAGES,
        limit=6,
        backend="openai",
        progress=False,
        backend_options={"base_url": url, "concurrency": 1, "backoff": 0.01},
        **kw,
    )


def _key(it):
    return (it.task, it.k, it.language, it.instance_id)


def test_prompts_are_built_only_for_the_shard_s_pending_items(release_dir, monkeypatch):
    """A run holds the prompts it will send, not the whole run's: --shard and resume cut memory."""
    items = _items(release_dir)
    opts = RunOptions(data=str(release_dir), model="m", out=Path("unused"), ks=(1, 3), languages=LANGUAGES, limit=6)
    pairs = resolve_tasks_ks(opts.tasks, opts.ks)
    built = []
    real = runner.prompt_for_example
    monkeypatch.setattr(runner, "prompt_for_example", lambda ex: built.append(ex["instance_id"]) or real(ex))
    for i in range(3):
        shard = Shard(i, 3)
        # a third of the shard already answered (as on resume); its items get no prompt
        done = {_key(it) for it in select(items, shard)[::3]}
        built.clear()
        plan = plan_items(opts, pairs, list(LANGUAGES), shard=shard, done=done)
        want = [it for it in select(items, shard) if _key(it) not in done]
        assert [_key(it) for it in plan.pending] == [_key(it) for it in want]
        assert [it.request for it in plan.pending] == [it.request for it in want]
        assert len(built) == len(want) < len(items) / 3
        assert plan.n_shard == len(select(items, shard)) and plan.n_run == len(items) and plan.done_seen == done
    # keys of another shard (or another run) are not this shard's: the runner refuses them as strays
    other = {_key(select(items, Shard(1, 3))[0])}
    assert plan_items(opts, pairs, list(LANGUAGES), shard=Shard(0, 3), done=other).done_seen == set()


def _run(*args):
    result = CliRunner().invoke(eval_cli, ["run", *map(str, args)])
    assert result.exit_code == 0, result.output
    return result


def test_openai_same_files_either_order_and_server_sees_prefix_order(release_dir, tmp_path):
    outs = {}
    for order in ("canonical", "prefix"):
        with content_server() as server:
            outs[order] = tmp_path / order
            _run(
                "--backend",
                "openai",
                "--base-url",
                server.base_url,
                "--model",
                "served",
                "--data",
                release_dir,
                "--out",
                outs[order],
                "--order",
                order,
                "--concurrency",
                "1",
                "--retry-backoff",
                "0.01",
                *COMMON,
            )
        seen = [text_of(p) for p in server.requests]
        if order == "prefix":
            # one request at a time: the server got them sorted by content, i2s of both languages in pairs
            assert len(seen) == 84
            i2s = [t for t in seen if "Which sentence" in t]
            assert i2s and all(
                i2s[n].split("Options:")[0] == i2s[n + 1].split("Options:")[0] for n in range(0, len(i2s), 2)
            )
    for name in ("predictions.jsonl", "metrics.json"):
        assert (outs["canonical"] / name).read_bytes() == (outs["prefix"] / name).read_bytes(), name


@pytest.mark.eval
def test_hf_same_files_either_order(release_dir, tiny_llava, tmp_path):
    outs = {order: tmp_path / order for order in ("canonical", "prefix")}
    for order, out in outs.items():
        _run(
            "--data",
            release_dir,
            "--model",
            tiny_llava,
            "--out",
            out,
            "--order",
            order,
            "--batch-size",
            "4",
            "--device",
            "cpu",
            *COMMON,
        )
    for name in ("predictions.jsonl", "metrics.json"):
        assert (outs["canonical"] / name).read_bytes() == (outs["prefix"] / name).read_bytes(), name


class _Crash(Exception):
    pass


def _crashing(name, **kw):
    """A real backend whose fourth generate call fails (as a killed process would stop)."""
    from mvlsib.evaluation.backends import make_backend

    backend = make_backend(name, **kw)
    real, calls = backend.generate, []

    def generate(requests):
        calls.append(len(requests))
        if len(calls) > 3:
            raise _Crash
        return real(requests)

    backend.generate = generate
    return backend


def test_resume_after_a_partial_prefix_ordered_run(release_dir, tmp_path):
    def opts(out, order, url):
        return _openai_opts(release_dir, out, url, order=order)

    with content_server() as server:
        ref = tmp_path / "ref"
        run_eval(opts(ref, "canonical", server.base_url))
        out = tmp_path / "resumed"
        with pytest.raises(_Crash):
            run_eval(opts(out, "prefix", server.base_url), backend_factory=_crashing)
        pred = out / "predictions.jsonl"
        partial = [json.loads(line) for line in pred.read_text("utf-8").splitlines()]
        assert len(partial) == 12  # three chunks of 4 (concurrency 1 -> chunk 4)
        # what was done first is the start of the prefix order, not of the canonical one
        items = _items(release_dir)
        first = [(it.task, it.k, it.language, it.instance_id) for it in prefix_order(items)[:12]]
        assert [(p["task"], p["k"], p["language"], p["instance_id"]) for p in partial] == first
        with open(pred, "a", encoding="utf-8") as fh:
            fh.write('{"task": "i2s", "k": 1, "lang')  # a torn last line, as after kill -9
        summary = run_eval(opts(out, "prefix", server.base_url))
    assert summary["complete"] and summary["n_done_before"] == 12 and summary["n_new"] == 72
    for name in ("predictions.jsonl", "metrics.json"):
        assert (ref / name).read_bytes() == (out / name).read_bytes(), name


def test_a_run_larger_than_max_prompts_goes_in_waves_with_the_same_files(release_dir, tmp_path, monkeypatch):
    """84 prompts with --max-prompts 10: 9 waves, none holding more than 10 prompts; the
    predictions and metrics equal a run in one go, and a crash mid-way resumes."""
    built, waves = [], []
    real_prompt, real_plan = runner.prompt_for_example, runner.plan_items
    monkeypatch.setattr(runner, "prompt_for_example", lambda ex: built.append(1) or real_prompt(ex))

    def counting_plan(*args, **kw):
        before = len(built)
        plan = real_plan(*args, **kw)
        waves.append((kw.get("wave"), len(built) - before, len(plan.pending)))
        return plan

    monkeypatch.setattr(runner, "plan_items", counting_plan)
    with content_server() as server:
        one = tmp_path / "one"
        run_eval(_openai_opts(release_dir, one, server.base_url))
        assert [w for w, _, _ in waves] == [None] and waves[0][1] == 84  # fits: one pass, as before
        waves.clear()
        several = tmp_path / "waves"
        summary = run_eval(_openai_opts(release_dir, several, server.base_url, max_prompts=10))
    assert summary["complete"] and summary["n_new"] == 84
    assert waves[0] == (None, 0, 0)  # the counting pass: keys only
    assert [w for w, _, _ in waves[1:]] == [Shard(i, 9) for i in range(9)]
    assert all(0 < n <= 10 and n == pending for _, n, pending in waves[1:]) and sum(n for _, n, _ in waves) == 84
    for name in ("predictions.jsonl", "metrics.json"):
        assert (one / name).read_bytes() == (several / name).read_bytes(), name

    # a crash in the fourth wave, then the same command: it finishes, same files
    with content_server() as server:
        resumed = tmp_path / "resumed"
        with pytest.raises(_Crash):
            run_eval(_openai_opts(release_dir, resumed, server.base_url, max_prompts=10), backend_factory=_crashing)
        assert 0 < len((resumed / "predictions.jsonl").read_text("utf-8").splitlines()) < 84
        summary = run_eval(_openai_opts(release_dir, resumed, server.base_url, max_prompts=10))
    assert summary["complete"] and summary["n_done_before"] > 0
    for name in ("predictions.jsonl", "metrics.json"):
        assert (one / name).read_bytes() == (resumed / name).read_bytes(), name


def test_waves_inside_a_shard_keep_the_shard_s_items(release_dir, tmp_path):
    with content_server() as server:
        plain = tmp_path / "plain"
        waved = tmp_path / "waved"
        run_eval(_openai_opts(release_dir, plain, server.base_url, shard=Shard(1, 3)))
        run_eval(_openai_opts(release_dir, waved, server.base_url, shard=Shard(1, 3), max_prompts=5))
    name = "predictions.shard-1-of-3.jsonl"
    keys = [json.loads(line)["instance_id"] for line in (plain / name).read_text("utf-8").splitlines()]
    assert len(keys) == 28
    rows = lambda p: sorted((p / name).read_text("utf-8").splitlines())  # noqa: E731 - waves append in wave order
    assert rows(plain) == rows(waved)
