"""A finished run as Hub evaluation results: ``.eval_results/*.yaml`` entries for a model repo.

Format: the Hub's "Model Evaluation Results" (https://huggingface.co/docs/hub/eval-results and
huggingface/hub-docs ``eval_results.yaml``): a YAML list of entries, each with ``dataset.id``
(the Benchmark dataset), ``dataset.task_id`` (a task id of its ``eval.yaml``), optional
``dataset.revision``, ``value``, optional ``date``, ``source`` (``url`` required, ``name``)
and ``notes``. One file per task id (``{dataset name}_{task id}.yaml``), each holding that
leaderboard's one entry, so a later run of the same tasks replaces its files instead of
adding entries beside them, and a run of other tasks leaves these alone.

The task ids come from the release's ``eval.yaml`` (the run's release folder, else the
dataset repo on the Hub): ids are ``{task}_k{k}`` and the value is the run's macro relaxed
accuracy for that task and k from ``metrics.json``. Only a complete run of all the release's
instances stands for a leaderboard: incomplete and ``--limit`` runs are refused unless forced.
The run's ``config.json`` is copied beside the entries and ``source.url`` points at it.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import os
from collections.abc import Callable
from pathlib import Path

from .._compat import LOADER, MvlsibError, atomic_open, httpio, hubio, jsonio, owned_files, readers
from ..run.store import completeness, load_run

EVAL_YAML = "eval.yaml"
RESULTS_DIR = ".eval_results"
MAX_EVAL_YAML_BYTES = readers.KINDS["eval_yaml"].max_bytes


def parse_eval_yaml(data: bytes | str, where: str) -> list[str]:
    """The task ids of an eval.yaml's bytes (``readers``, kind ``eval_yaml``); a clear error when it is not one."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return [t["id"] for t in readers.parse_yaml("eval_yaml", data, where)["tasks"]]


def release_task_ids(
    data: str, dataset: str, revision: str | None, token: str | None = None, endpoint: str | None = None
) -> list[str]:
    """The eval.yaml task ids: from the run's release folder when it has one, else from the Hub."""
    local = Path(data) / EVAL_YAML
    if local.is_file():
        return [t["id"] for t in readers.read_yaml("eval_yaml", local)["tasks"]]
    with _bounded(f"--release {dataset}", token, max_file_bytes=MAX_EVAL_YAML_BYTES):
        return _remote_task_ids(dataset, revision, token, endpoint)


@contextlib.contextmanager
def _bounded(subject: str, token: str | None, max_file_bytes: int = hubio.MAX_FILE_BYTES):
    """Every Hub request bounded and every answer checked (hubio.session); a bad answer one line."""
    try:
        with hubio.session(subject, max_file_bytes=max_file_bytes):
            yield
    except hubio.HubProblem as exc:
        raise MvlsibError(httpio.redact(str(exc), (token,) if token else ())) from None


def _remote_task_ids(dataset: str, revision: str | None, token: str | None, endpoint: str | None) -> list[str]:
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError

    api = HfApi(endpoint=endpoint, token=token)
    try:
        # Its size first, so a wrong or hostile repo cannot make us download something large.
        info = api.get_paths_info(dataset, [EVAL_YAML], repo_type="dataset", revision=revision)
        if not info:
            raise MvlsibError(
                f"{dataset}: has no {EVAL_YAML}, so it is not a Benchmark on the Hub; upload a release made "
                "by this toolkit's publish (it writes eval.yaml)"
            )
        if (getattr(info[0], "size", None) or 0) > MAX_EVAL_YAML_BYTES:
            raise MvlsibError(f"{dataset}/{EVAL_YAML}: larger than {MAX_EVAL_YAML_BYTES} bytes; not an eval.yaml")
        path = api.hf_hub_download(dataset, EVAL_YAML, repo_type="dataset", revision=revision)
    except (HfHubHTTPError, OSError) as exc:
        message = f"could not read {EVAL_YAML} of {dataset} ({type(exc).__name__}): {exc}"
        raise MvlsibError(httpio.redact(" ".join(message.split()), (token,) if token else ())) from None
    # The header's size is a claim: what is read is bounded again, byte by byte.
    data = readers.read_limited(path, MAX_EVAL_YAML_BYTES, fix=f"{dataset}/{EVAL_YAML} is not an eval.yaml")
    return parse_eval_yaml(data, f"{dataset}/{EVAL_YAML}")


def check_run(run: Path, config: dict, records: list[dict], force: bool) -> list[str]:
    """Why the run does not stand for a leaderboard (empty when it does); raises unless ``force``."""
    fp = config.get("fingerprint") or {}
    problems = []
    cov = completeness(config, records)
    if not cov["complete"]:
        problems.append(f"it is incomplete ({cov['n_done']} of {cov['n_expected']} predictions)")
    if fp.get("limit") is not None:
        problems.append(f"it covers only --limit {fp['limit']} instances per language")
    if config.get("parse_mode", "relaxed") != "relaxed":
        problems.append(f"its letters were read with --parse-mode {config['parse_mode']} (leaderboards use relaxed)")
    data = fp.get("data") or ""
    if Path(data).is_dir():  # a Hub release's languages would need a download: checked for folders only
        missing = sorted(set(LOADER.languages(data)) - set(fp.get("languages") or []))
        if missing:
            problems.append(f"it leaves out {len(missing)} of the release's languages (e.g. {missing[0]})")
    if problems and not force:
        raise MvlsibError(
            f"{run}: not a leaderboard result: {'; '.join(problems)}. "
            "Finish the full run (rerun the same command), or pass --force to write the entries anyway"
        )
    return problems


# The repo id a release built but never published names (publish's default ``--repo-hint``).
UNPUBLISHED = "ORG/mvl-sib"


def release_mismatch(config: dict, dataset: str, revision: str | None) -> str | None:
    """Why the run's recorded release is not ``dataset`` at ``revision`` (None when it is).

    A run of a Hub release records its repo id and revision: they must be ``dataset`` (and
    ``revision``, when both are known; a short sha matches its full form). A run of a local release
    folder records the folder and its manifest.json's sha256: the folder must still hold that
    manifest, and the manifest names the repo the release was published to (``build.repo_hint``,
    rewritten by ``publish --repo-id`` and kept by a download), which must be ``dataset``. A folder's
    revision is not recorded, so ``revision`` is not compared for it."""
    fp = config.get("fingerprint") or {}
    data = str(fp.get("data") or "")
    if Path(data).is_absolute() and not Path(data).is_dir():  # a run records a folder by its absolute path
        return f"it was made on {data}, which is no longer a release folder, so its dataset cannot be told"
    if not Path(data).is_absolute():
        if data != dataset:
            return f"it was made on the Hub dataset {data}, not {dataset}"
        ran = fp.get("data_revision")
        if ran and revision and not (str(ran).startswith(revision) or revision.startswith(str(ran))):
            return f"it was made on {data} at revision {ran}, not {revision}"
        return None
    manifest_path = Path(data) / "manifest.json"
    if not manifest_path.is_file():
        return f"it was made on {data}, which has no manifest.json naming its dataset"
    kind = readers.KINDS["release_manifest"]
    raw = readers.read_limited(manifest_path, kind.max_bytes, fix=kind.fix)
    if hashlib.sha256(raw).hexdigest() != fp.get("release_manifest_sha256"):
        return f"{manifest_path} is not the one the run was made on (the folder changed since, or was rebuilt)"
    hint = (readers.parse_json("release_manifest", raw, str(manifest_path)).get("build") or {}).get("repo_hint")
    if hint == UNPUBLISHED or not isinstance(hint, str):
        return f"it was made on {data}, a release never published, so no dataset id is its"
    if hint != dataset:
        return f"it was made on {data}, the release of {hint}, not of {dataset}"
    return None


def entries(
    run: str | os.PathLike[str],
    *,
    dataset: str,
    revision: str | None,
    task_ids: list[str] | Callable[[str], list[str]],
    source_url: str,
    force: bool = False,
    other_release: bool = False,
) -> dict[str, list[dict]]:
    """``{file name: [entry]}``, one file per eval.yaml task the run covers. ``task_ids`` may be a
    function of the run's data source (``release_task_ids`` bound to the dataset), called once the
    run has been read and accepted. A run of another release than ``dataset`` is refused unless
    ``other_release`` (the notes then say which release it was made on)."""
    run = Path(run)
    config, records, metrics = load_run(run)
    mismatch = release_mismatch(config, dataset, revision)
    if mismatch and not other_release:
        raise MvlsibError(
            f"{run}: not a result of --release {dataset}{f' at {revision}' if revision else ''}: {mismatch}. "
            "Name the dataset the run was made on, or pass --other-release to write the entries anyway"
        )
    problems = check_run(run, config, records, force)
    if callable(task_ids):
        task_ids = task_ids(str((config.get("fingerprint") or {}).get("data") or ""))
    macro = {(row["task"], int(row["k"])): row for row in metrics.get("macro") or []}
    if not macro:
        raise MvlsibError(f"{run}: no metrics.json with macro figures; finish the run (rerun the same command)")
    fp = config.get("fingerprint") or {}
    date = _date(run)
    out: dict[str, list[dict]] = {}
    for tid in task_ids:
        match = LOADER.TASK_ID_PATTERN.match(tid)
        row = macro.get((match["task"], int(match["k"]))) if match else None
        if row is None or row.get("accuracy") is None:
            continue
        notes = (
            f"mvlsib-eval, backend {fp.get('backend')}, relaxed accuracy macro-averaged over "
            f"{row.get('n_languages')} language(s), {row.get('n')} predictions"
        )
        if problems:
            notes += "; NOT a full leaderboard run: " + "; ".join(problems)
        if mismatch:
            notes += f"; NOT a run of this dataset: {mismatch}"
        dataset_entry = {"id": dataset, "task_id": tid, **({"revision": revision} if revision else {})}
        entry = {
            "dataset": dataset_entry,
            "value": row["accuracy"],
            "date": date,
            "source": {"url": httpio.public_url(source_url), "name": "mvlsib-eval run config"},
            "notes": notes,
        }
        out[f"{dataset.split('/')[-1]}_{tid}.yaml"] = [entry]
    if not out:
        covered = ", ".join(f"{t}_k{k}" for t, k in sorted(macro))
        raise MvlsibError(f"{run}: covers none of the eval.yaml tasks of {dataset} (it has {covered})")
    return out


def config_name(dataset: str) -> str:
    """The run config's file name beside the entries."""
    return f"{dataset.split('/')[-1]}_run_config.json"


def write(out: str | os.PathLike[str], run: str | os.PathLike[str], files: dict[str, list[dict]], dataset: str):
    """Write ``OUT/.eval_results/``: the entries (replacing earlier ones of the same tasks) and the run config."""
    folder = Path(out) / RESULTS_DIR
    written = []
    # Other entries there (other benchmarks, the user's) are never touched; ours are replaced only
    # while they are as we wrote them.
    with owned_files(folder, [*files, config_name(dataset)], "mvlsib-eval hub-results"):
        folder.mkdir(parents=True, exist_ok=True)
        for name, body in files.items():
            with atomic_open(folder / name) as fh:
                # ASCII: a model's name may carry a bidi override or a C1 control, which YAML keeps raw
                fh.write(jsonio.yaml_dumps(body, sort_keys=False))
            written.append(folder / name)
        # Uploaded with --create-pr: a run made before commands were recorded without their secrets
        # (a --base-url with user:password@ or ?api_key=) must not publish them.
        source = Path(run) / "config.json"
        raw = readers.read_limited(source, readers.kind("run_config").max_bytes)
        config = readers.parse_json("run_config", raw, str(source))
        public = _public(config)
        with atomic_open(folder / config_name(dataset), "wb") as fh:
            fh.write(raw if public == config else (jsonio.dumps(public, indent=2, ensure_ascii=False) + "\n").encode())
        written.append(folder / config_name(dataset))
    return written


def _public(value):
    """``value`` with every string as it may be published (``httpio.redact``: no URL password, no
    secret query value, no token shape)."""
    if isinstance(value, str):
        return httpio.redact(value)
    if isinstance(value, list):
        return [_public(v) for v in value]
    if isinstance(value, dict):
        return {k: _public(v) for k, v in value.items()}
    return value


def _date(run: Path) -> str:
    """When the run finished: its metrics.json's modification time, as an ISO date."""
    path = run / "metrics.json"
    stamp = path.stat().st_mtime if path.is_file() else (run / "predictions.jsonl").stat().st_mtime
    return datetime.datetime.fromtimestamp(stamp, datetime.UTC).date().isoformat()


def config_url(model_repo: str, dataset: str, endpoint: str | None = None) -> str:
    """Where the run config copied beside the entries is on the model repo once the PR is merged."""
    base = (endpoint or "https://huggingface.co").rstrip("/")
    return f"{base}/{model_repo}/blob/main/{RESULTS_DIR}/{config_name(dataset)}"


def resolve_token() -> str | None:
    """HF_TOKEN (refused by name when no header can carry it), else the stored login (`hf auth login`)."""
    try:  # every source checked alike (hubio.resolve_token)
        return hubio.resolve_token()
    except httpio.CredentialError as exc:
        raise MvlsibError(str(exc)) from None


def pr_title(dataset: str) -> str:
    """The pull request's title, by which a re-run finds the PR it opened before."""
    return f"Add {dataset} evaluation results (mvlsib-eval)"


def open_pr(model_repo: str, paths: list[Path], dataset: str, *, token: str | None, endpoint: str | None = None) -> str:
    """Open a pull request adding ``paths`` under ``.eval_results/`` on ``model_repo``, or, when a
    pull request of ours for ``dataset`` is still open there, commit to it instead; returns its URL."""
    with _bounded(f"--model-repo {model_repo}", token):
        return _open_pr(model_repo, paths, dataset, token=token, endpoint=endpoint)


def _open_pr(model_repo: str, paths: list[Path], dataset: str, *, token: str | None, endpoint: str | None) -> str:
    from huggingface_hub import CommitOperationAdd, HfApi
    from huggingface_hub.errors import HfHubHTTPError

    api = HfApi(endpoint=endpoint, token=token)
    title = pr_title(dataset)
    ops = [CommitOperationAdd(path_in_repo=f"{RESULTS_DIR}/{p.name}", path_or_fileobj=str(p)) for p in paths]
    try:
        mine = [
            d
            for d in api.get_repo_discussions(model_repo, discussion_type="pull_request", discussion_status="open")
            if d.title == title
        ]
        if mine:
            api.create_commit(model_repo, ops, commit_message=f"Update: {title}", revision=mine[0].git_reference)
            return mine[0].url
        info = api.create_commit(model_repo, ops, commit_message=title, create_pr=True)
        return info.pr_url or info.commit_url
    except (HfHubHTTPError, OSError) as exc:
        status = getattr(getattr(exc, "response", None), "status_code", None)
        # The Hub's own reason when it gave one, else the client's first line; always one line.
        reason = getattr(exc, "server_message", None) or (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        reason = " ".join(reason.split())[:300]
        raise MvlsibError(
            httpio.redact(f"{model_repo} refused the pull request (HTTP {status}): {reason}", (token,) if token else ())
        ) from None
