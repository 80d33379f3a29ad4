"""Where SIB-200 language folders come from: a local checkout or the Hugging Face Hub.

Both end as a mapping ``language -> folder holding {train,dev,test}.tsv``, so parsing and checks are shared.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from mvlsib import httpio
from mvlsib.builder.tsv import SPLITS
from mvlsib.errors import MvlsibError
from mvlsib.progress import bar_class
from mvlsib.release_format.mvl_sib import hub_id_problem, is_language_code

DEFAULT_HUB_DATASET = "Davlan/sib200"
REFERENCE_LANGUAGE = "eng_Latn"


@dataclass(frozen=True)
class SibSource:
    kind: str  # "local" | "hub"
    location: str  # absolute folder, or the Hub repo id
    revision: str | None  # resolved commit for the Hub
    root: Path  # folder holding one sub-folder per language
    languages: dict[str, Path]


def is_hub_id(sib: str) -> bool:
    """An existing path is always local; otherwise ``ORG/NAME`` names a Hub dataset."""
    return not Path(sib).exists() and hub_id_problem(sib) is None


def language_root(folder: Path) -> Path:
    """The folder whose sub-folders are languages, for the repo layout, the Hub layout or the folder itself."""
    for candidate in (folder / "data" / "annotated", folder / "annotated", folder / "data"):
        if candidate.is_dir():
            return candidate
    return folder


def list_language_folders(root: Path) -> dict[str, Path]:
    # Only xxx_Xxxx folders are languages: a backup copy ("fra_Latn copy") must not become a config.
    langs = {p.name: p for p in sorted(root.iterdir()) if p.is_dir() and is_language_code(p.name)}
    if not langs:
        raise MvlsibError(
            f"{root}: no language folders found. --sib expects a SIB-200 checkout "
            "(DIR/data/annotated/<lang>/train.tsv), its 'annotated' folder, or the Hub layout "
            "(DIR/data/<lang>/train.tsv)."
        )
    return langs


def local_source(sib: str | os.PathLike[str]) -> SibSource:
    folder = Path(sib).expanduser().resolve()
    if not folder.is_dir():
        said = "" if os.fspath(sib).count("/") != 1 or Path(sib).exists() else f" ({hub_id_problem(os.fspath(sib))})"
        raise MvlsibError(f"--sib {sib}: not a folder{said}. Give a SIB-200 checkout folder or a Hub id ORG/NAME.")
    root = language_root(folder)
    return SibSource("local", str(folder), None, root, list_language_folders(root))


def _hub_languages(files: list[str]) -> list[str]:
    """The language codes that have a ``data/<lang>/`` folder in a Hub dataset's file list."""
    return sorted(
        {
            parts[1]
            for parts in (f.split("/") for f in files)
            # a name like ".." would lead outside the snapshot folder
            if len(parts) == 3 and parts[0] == "data" and is_language_code(parts[1])
        }
    )


def hub_source(
    repo_id: str,
    revision: str | None = None,
    *,
    languages: list[str] | None = None,
    endpoint: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    progress: bool = True,
    timeout: float | None = None,
) -> SibSource:
    """Fetch ``data/<lang>/{train,dev,test}.tsv`` of a Hub dataset into the huggingface_hub cache.

    The revision is resolved to a commit first, so the listing and every file come from the same commit
    and the report can name it. ``endpoint`` (or ``HF_ENDPOINT``) points the client at another server.
    Every request is bounded (``hubio.session``: ``timeout`` for the whole request, default
    ``hubio.hub_timeout()``) and every answer checked; a bad one is one message naming ``--sib``.
    """
    from mvlsib import hubio  # imports httpx2 when a session starts: not for every command

    try:
        with hubio.session(f"--sib {repo_id}", timeout):
            return _hub_source(repo_id, revision, languages, endpoint, cache_dir, progress)
    except hubio.HubProblem as exc:
        raise MvlsibError(httpio.redact(hubio.one_line(str(exc)), (os.environ.get("HF_TOKEN"),))) from None
    except MvlsibError as exc:  # the messages below quote the library's, which span lines
        raise MvlsibError(hubio.one_line(str(exc))) from None


def _hub_source(repo_id, revision, languages, endpoint, cache_dir, progress) -> SibSource:
    from huggingface_hub import HfApi, snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError

    network_errors: tuple[type[BaseException], ...] = (OSError,)
    try:  # huggingface_hub 2.x talks through httpx2, whose connection errors are not OSErrors
        import httpx2

        network_errors += (httpx2.TransportError,)
    except ImportError:  # pragma: no cover - older huggingface_hub
        pass

    api = HfApi(endpoint=endpoint)
    try:
        info = api.dataset_info(repo_id, revision=revision)
        commit = info.sha
        files = api.list_repo_files(repo_id, repo_type="dataset", revision=commit)
    except RevisionNotFoundError:
        raise MvlsibError(
            f"--revision {revision}: not found in Hub dataset {repo_id}; check the branch, tag or commit."
        ) from None
    except RepositoryNotFoundError:
        raise MvlsibError(
            f"--sib {repo_id}: no such Hub dataset (or it is private: log in with `hf auth login`). "
            "For a local folder, check that the path exists."
        ) from None
    except HfHubHTTPError as exc:
        raise MvlsibError(
            httpio.redact(
                f"--sib {repo_id}: the Hub answered with an error ({exc}); try again later.",
                (os.environ.get("HF_TOKEN"),),
            )
        ) from None
    except network_errors as exc:  # connection refused, DNS failure, timeouts
        raise MvlsibError(
            f"--sib {repo_id}: cannot reach the Hub ({exc.__class__.__name__}: {exc}). "
            "Check the network or HF_ENDPOINT, or pass a local SIB-200 folder."
        ) from None

    if not commit:
        raise MvlsibError(f"--sib {repo_id}: the Hub's answer names no commit for revision {revision or 'main'}")
    available = _hub_languages(files)
    if not available:
        raise MvlsibError(f"Hub dataset {repo_id}@{commit}: no data/<lang>/*.tsv files; is this SIB-200?")
    wanted = available
    if languages is not None:
        wanted = sorted(set(languages) & set(available) | ({REFERENCE_LANGUAGE} & set(available)))
    patterns = [f"data/{lang}/{split}.tsv" for lang in wanted for split in SPLITS]
    download_errors: tuple[type[BaseException], ...] = (HfHubHTTPError, *network_errors)
    try:
        snapshot = snapshot_download(
            repo_id,
            repo_type="dataset",
            revision=commit,
            allow_patterns=patterns,
            cache_dir=None if cache_dir is None else str(cache_dir),
            endpoint=endpoint,
            tqdm_class=bar_class(progress),
        )
    except download_errors as exc:
        raise MvlsibError(
            httpio.redact(
                f"--sib {repo_id}: download failed ({exc.__class__.__name__}: {exc}); try again.",
                (os.environ.get("HF_TOKEN"),),
            )
        ) from None
    root = Path(snapshot) / "data"
    langs = {lang: root / lang for lang in available}
    return SibSource("hub", repo_id, commit, root, langs)
