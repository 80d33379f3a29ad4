"""The one reader of what the toolkit takes from outside: a registry of file kinds, each with its
schema and its bounds.

A file or value another program, a peer or a person may have written (a run folder, a batch's
manifest and result lines, an ``eval.yaml``, a release's ``manifest.json``, a JSON command-line
option) is read here and nowhere else (``tests/architecture/test_one_reader.py``): its bytes are
read up to the kind's bound (the bytes actually read, never a size someone stated), decoded as
strict UTF-8, parsed within the depth and number-length bounds with no NaN or Infinity, and checked
against the kind's JSON Schema (``schema/*.schema.json``, the one declaration of its shape). The
first problem is one ``ReadError`` naming the file, the line and the field, and what to do.

This module is a leaf (it imports ``errors`` and ``jsonio`` only) because a release's evaluator
ships it beside itself (``release/bundle.py``); the schemas ship in ``schema/`` beside it there too.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import math
import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib import resources
from typing import Any, BinaryIO

from . import jsonio
from .errors import MvlsibError

KiB, MiB = 1 << 10, 1 << 20
# A package beside this module: mvlsib.schema installed, mvlsib_evaluate.schema in a release's evaluator.
_SCHEMA_PACKAGE = __name__.rpartition(".")[0] + ".schema"


class ReadError(MvlsibError):
    """An external input that is unreadable, out of bounds or of the wrong shape; the message says which."""


@dataclass(frozen=True)
class Kind:
    """One kind of external input: what it is, the schema of its shape and the bounds it is read within."""

    name: str
    what: str  # "a batch manifest": completes "FILE: not {what} (...)"
    fix: str  # what the user does about a bad one
    schema: str | None  # schema/{schema}.schema.json; None: its shape is checked where noted in `shape`
    max_bytes: int
    max_depth: int = jsonio.MAX_DEPTH
    # "refuse": a string holding a lone surrogate (from a \\udXXX escape) is refused, naming the field;
    # "escape": kept as its storable escape (answers of a foreign service, stored as they came)
    surrogates: str = "refuse"
    shape: str = ""  # where the shape is checked when it is not a schema of this registry


_RUN_FIX = "the run folder is damaged: rerun the command that wrote it, or start a new --out folder"
_RELEASE_FIX = "re-download the release (or rebuild it into a new folder: `mvlsib-build publish --workdir W --out NEW`)"

KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        # run folders: read by evaluation/run/run_files.py, whose rules restate schema/prediction and
        # run_files.py declares these files (its field tables; json_schema(kind) gives their JSON Schemas)
        Kind("run_config", "a run config", _RUN_FIX, None, 64 * MiB, shape="evaluation/run/run_files.py"),
        Kind("run_metrics", "a run's metrics", _RUN_FIX, None, 64 * MiB, shape="evaluation/run/run_files.py"),
        Kind(
            "prediction_line",
            "a predictions line",
            "the file is damaged: delete that line (its key is then re-run) or start a new --out folder",
            None,
            16 * MiB,
            shape="evaluation/run/run_files.py",
        ),
        Kind(
            "predictions_file",
            "a predictions file",
            "give the run folder's own predictions file, or start a new --out folder",
            None,
            64 * 1024 * MiB,
            shape="evaluation/run/run_files.py (line by line, kind prediction_line)",
        ),
        Kind(
            "batch_manifest",
            "a batch manifest",
            "give the folder `mvlsib-eval batch prepare` wrote, or prepare the batch again",
            "batch_manifest",
            64 * MiB,
        ),
        Kind(
            "batch_request_line",
            "a batch request line",
            "give the folder `mvlsib-eval batch prepare` wrote, or prepare the batch again",
            None,
            64 * MiB,
            max_depth=32,
            shape="evaluation/scale/collect.py (each body rebuilt from the release and compared)",
        ),
        Kind(
            "batch_result_line",
            "a batch result line",
            "a result line is {id, custom_id, response: {status_code, request_id, body}, error} (the OpenAI batch "
            "output format, as vllm run-batch writes it): give the batch's output file",
            "batch_result_line",
            8 * MiB,
            max_depth=32,
            surrogates="escape",
        ),
        Kind(
            "eval_yaml",
            "a Benchmark eval.yaml",
            "it needs `tasks:` a list of entries with an id; re-download the release, or publish it again with "
            "this toolkit (it writes eval.yaml)",
            "eval_yaml",
            1 * MiB,
            max_depth=16,
        ),
        Kind("release_manifest", "a release manifest", _RELEASE_FIX, "release_manifest", 64 * MiB),
        Kind(
            "json_option",
            "a JSON object",
            "give a JSON object, e.g. '{\"key\": 1}'",
            "json_option",
            1 * MiB,
            max_depth=32,
        ),
        Kind(
            "hub_answer",
            "an answer of the Hub API",
            "the Hub (or HF_ENDPOINT) answered something else than the Hub does; check the endpoint",
            "hub_answer",
            32 * MiB,
            shape="hubio.SHAPES names the schema's definition per endpoint",
        ),
        Kind(
            "pool_manifest",
            "a pool manifest",
            "fix the file (`mvlsib-build images check` names each problem)",
            None,
            64 * MiB,
            shape="workdir/pool_manifest.py (csv rows, schema/manifest_row)",
        ),
        Kind(
            "batch_retry_index",
            "a batch's retry index (retry/retry.json)",
            "collect the batch again: it rewrites retry/",
            "work_report",
            64 * MiB,
        ),
        Kind(
            "sample_report",
            "the sample stage's report",
            "rerun `mvlsib-build sample` (or start a new --workdir)",
            "sample_report",
            64 * MiB,
        ),
        Kind(
            "work_report",
            "a work-folder report",
            "rerun the stage that wrote it (or start a new --workdir)",
            "work_report",
            64 * MiB,
        ),
        Kind(
            "verify_report",
            "a verify-images report",
            "give the JSON report `mvlsib-build verify-images` wrote",
            "verify_report",
            256 * MiB,
        ),
        # caches and ledgers: a bad one is set aside by its reader (recomputed, or taken as none)
        Kind("hash_cache", "a hash cache", "it is recomputed", "work_report", 256 * MiB),
        Kind("ledger", "a folder's ledger", "it is taken as none", "work_report", 64 * MiB),
        Kind(
            "instance_line",
            "an instance record (a JSON object)",
            "re-run `mvlsib-build sample`",
            "work_report",
            16 * MiB,
            shape="validation/invariants.py reports each field (schema/instance)",
        ),
        Kind(
            "corpus_parquet",
            "the corpus",
            "run `mvlsib-build ingest` again",
            None,
            64 * 1024 * MiB,
            shape="workdir/corpus.py (its columns)",
        ),
        Kind(
            "flores_parquet",
            "a Flores+ parquet file",
            "give the Flores+ dev/ and devtest/ parquet files as the dataset ships them",
            None,
            8 * 1024 * MiB,
            shape="builder/flores.py (its text column)",
        ),
        Kind(
            "release_parquet",
            "a release's parquet file",
            _RELEASE_FIX,
            None,
            8 * 1024 * MiB,
            shape="release_format/mvl_sib.py (columns)",
        ),
    )
}


def kind(name: str) -> Kind:
    try:
        return KINDS[name]
    except KeyError:
        raise KeyError(f"unknown input kind {name!r}; known: {', '.join(KINDS)}") from None


# ---------------------------------------------------------------- bytes


def open_input(path: str | os.PathLike[str], *, fix: str = "") -> BinaryIO:
    """A regular file opened for reading, in binary (``with open_input(p) as fh``): a FIFO (whose reader would wait for a writer for
    ever), a device or a folder is refused first, by the file opened, not by a name looked at before.
    Every input file the package streams (a TSV, an image, a batch's results) is opened here;
    ``tests/architecture/test_one_reader.py`` finds any other ``open`` for reading."""
    tail = f"; {fix}" if fix else ""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # an OSError names the path: the caller's
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
        if not stat.S_ISREG(mode):
            raise ReadError(f"{path}: not a regular file (a device or a pipe){tail}")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_limited(path: str | os.PathLike[str], max_bytes: int, *, fix: str = "") -> bytes:
    """At most ``max_bytes`` bytes of the regular file ``path``: a longer one, a device, a FIFO or a
    folder is refused by what was read, not by what ``stat`` or a header says."""
    tail = f"; {fix}" if fix else ""
    chunks, total = [], 0
    with _regular(path, tail) as fd:
        while total <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    if total > max_bytes:
        raise ReadError(f"{path}: over {max_bytes:,} bytes, too large to be what it should{tail}")
    return b"".join(chunks)


@contextlib.contextmanager
def _regular(path: str | os.PathLike[str], tail: str) -> Iterator[int]:
    """An open descriptor of the regular file ``path``; any failure of the machine while it is read is one
    ``ReadError``. Opened without blocking, so a FIFO is refused rather than waited on."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ReadError(f"{path}: cannot be read ({exc.strerror or exc}); check the file and its permissions") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ReadError(f"{path}: not a regular file (a device, a pipe or a folder){tail}")
        yield fd
    except OSError as exc:
        raise ReadError(f"{path}: cannot be read ({exc.strerror or exc}); check the file and its permissions") from None
    finally:
        os.close(fd)


def read_lines(path: str | os.PathLike[str], name: str, line_name: str) -> tuple[list[bytes], int]:
    """The complete lines of the file ``path`` (of kind ``name``, each line of kind ``line_name``) and the
    length up to the last newline: what a torn tail is cut back to. Read in pieces: memory follows the
    lines kept, never a tail without a newline (a file a crash extended with zeros), which is skipped
    however long; a line over its kind's bound, or a file over its own, is one ``ReadError``."""
    k, line_max = kind(name), kind(line_name).max_bytes
    tail = f"; {k.fix}" if k.fix else ""
    lines: list[bytes] = []
    pending: list[bytes] = []
    pending_len, total, good, overflow = 0, 0, 0, False
    with _regular(path, tail) as fd:
        while chunk := os.read(fd, 1 << 20):
            total += len(chunk)
            if total > k.max_bytes:
                raise ReadError(f"{path}: over {k.max_bytes:,} bytes, too large to be what it should{tail}")
            start = 0
            while (end := chunk.find(b"\n", start)) != -1:
                if overflow or pending_len + end - start > line_max:
                    raise ReadError(
                        f"{path}, line {len(lines) + 1}: over {line_max:,} bytes, too long to be {kind(line_name).what}"
                        f"{tail}"
                    )
                lines.append(b"".join([*pending, chunk[start:end]]))
                pending, pending_len = [], 0
                start = end + 1
                good = total - len(chunk) + start
            if not overflow:
                pending.append(chunk[start:])
                pending_len += len(chunk) - start
                if pending_len > line_max:  # kept no longer: a tail this long is damage or a line too long
                    pending, overflow = [], True
    return lines, good


def _text(data: bytes, source: str, where: str, k: Kind) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReadError(f"{source}{where}: not UTF-8 (byte {exc.start}); {k.fix}") from None


# ---------------------------------------------------------------- JSON


def parse_json(name: str, data: bytes | str, source: str, where: str = "") -> Any:
    """``data`` (the text of ``source``, at ``where``, e.g. ", line 3") as the kind ``name``: bounded, checked."""
    k = kind(name)
    if isinstance(data, bytes):
        if len(data) > k.max_bytes:
            raise ReadError(f"{source}{where}: {len(data):,} bytes, over the {k.max_bytes:,}-byte bound; {k.fix}")
        data = _text(data, source, where, k)
    try:
        value = jsonio.loads(data, max_bytes=k.max_bytes, max_depth=k.max_depth)
    except jsonio.JsonLimitError as exc:
        raise ReadError(f"{source}{where}: not {k.what} ({exc}); {k.fix}") from None
    value = _surrogates(k, value, source, where)
    check(name, value, source, where)
    return value


def read_json(name: str, path: str | os.PathLike[str]) -> Any:
    """The JSON file ``path`` as the kind ``name``."""
    k = kind(name)
    return parse_json(name, read_limited(path, k.max_bytes, fix=k.fix), str(path))


def json_lines(name: str, path: str | os.PathLike[str]) -> Iterator[tuple[int, bytes, Any]]:
    """(line number, raw line, value) of each non-blank line of the JSON-lines file ``path``, each line
    bounded by the kind's ``max_bytes`` as it is read."""
    k = kind(name)
    with _regular(path, f"; {k.fix}") as fd, os.fdopen(fd, "rb", closefd=False) as fh:
        lineno = 0
        while True:
            raw = fh.readline(k.max_bytes + 1)
            if not raw:
                return
            lineno += 1
            where = f", line {lineno}"
            if len(raw) > k.max_bytes and not raw.endswith(b"\n"):
                raise ReadError(f"{path}{where}: a line over {k.max_bytes:,} bytes; {k.fix}")
            if raw.strip():
                yield lineno, raw, parse_json(name, raw, str(path), where)


def parse_option(name: str, value: str, flag: str) -> Any:
    """A command-line option's JSON text (``flag`` is how the user spelled it, ``--x-kwargs``) as the kind ``name``."""
    return parse_json(name, value.encode("utf-8", "surrogatepass"), flag)


# ---------------------------------------------------------------- YAML

_YAML_NUMBER = re.compile(r"[-+]?(\.[0-9]|[0-9])[0-9_.:eExXoObB+-]*")
_YAML_NOT_FINITE = re.compile(r"[-+]?\.(nan|inf)", re.IGNORECASE)


def _yaml_problem(exc: Exception) -> str:
    """What PyYAML found and where, without the snippet of the file its message quotes: the file may
    not be what it is named (a link to another file), and its lines are not ours to print."""
    problem = getattr(exc, "problem", None) or getattr(exc, "context", None) or type(exc).__name__
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return f"{' '.join(str(problem).split())[:200]}{where}"


def parse_yaml(name: str, data: bytes, source: str) -> Any:
    """YAML ``data`` as the kind ``name``: size, UTF-8, nesting depth, number length, no NaN, no aliases."""
    import yaml

    k = kind(name)
    if len(data) > k.max_bytes:
        raise ReadError(f"{source}: {len(data):,} bytes, over the {k.max_bytes:,}-byte bound; {k.fix}")
    text = _text(data, source, "", k)
    try:
        # The event stream is read without recursion, so depth is counted before the composer recurses.
        depth = 0
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > k.max_depth:
                    raise ReadError(f"{source}: not {k.what} (nested over {k.max_depth} deep); {k.fix}")
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
            elif isinstance(event, yaml.AliasEvent):
                raise ReadError(f"{source}: not {k.what} (it uses a YAML alias *{event.anchor}); {k.fix}")
            elif isinstance(event, yaml.ScalarEvent) and event.style is None:
                if _YAML_NUMBER.fullmatch(event.value) and len(event.value) > jsonio.MAX_NUMBER_CHARS:
                    raise ReadError(
                        f"{source}: not {k.what} (a number of {len(event.value):,} characters, at most "
                        f"{jsonio.MAX_NUMBER_CHARS}); {k.fix}"
                    )
                if _YAML_NOT_FINITE.fullmatch(event.value):
                    raise ReadError(f"{source}: not {k.what} ({event.value} is not a finite number); {k.fix}")
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ReadError(f"{source}: not valid YAML ({_yaml_problem(exc)}); {k.fix}") from None
    except (RecursionError, ValueError) as exc:
        raise ReadError(f"{source}: not {k.what} ({type(exc).__name__}); {k.fix}") from None
    value = _surrogates(k, value, source, "")
    check(name, value, source, "")
    return value


def read_yaml(name: str, path: str | os.PathLike[str]) -> Any:
    k = kind(name)
    return parse_yaml(name, read_limited(path, k.max_bytes, fix=k.fix), str(path))


# ---------------------------------------------------------------- parquet


def read_parquet(
    name: str,
    path: str | os.PathLike[str],
    columns: list[str] | None = None,
    types: Iterable[tuple[str, str]] = (),
):
    """The parquet file ``path`` (of kind ``name``) as a pyarrow Table; a truncated, damaged or foreign
    file is one ``ReadError`` naming it. ``types``: (column, arrow type as ``mvl_sib`` writes it:
    ``int64``, ``string``, ``list<int64>``) pairs that a column present must have; any other type
    name (a ClassLabel, an Image) is not checked here."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    k = kind(name)
    try:
        st = os.stat(path)
    except OSError as exc:
        raise ReadError(f"{path}: cannot be read ({exc.strerror or exc}); {k.fix}") from None
    if not stat.S_ISREG(st.st_mode):
        raise ReadError(f"{path}: not a regular file (a device, a pipe or a folder); {k.fix}")
    try:
        table = pq.read_table(path, columns=columns)
    except (pa.ArrowException, OSError, ValueError, KeyError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ReadError(f"{path}: not a readable parquet file ({first[:200]}); {k.fix}") from None
    for column, expected in types:
        if expected not in _ARROW_TYPES or column not in table.column_names:
            continue
        found = re.sub(r"\b(item|element): |large_", "", str(table.schema.field(column).type))
        if found != expected:
            raise ReadError(f"{path}: column {column!r} holds {found[:60]}, not {expected}; {k.fix}")
    return table


# The column types ``read_parquet`` checks, as mvl_sib's column tables name them.
_ARROW_TYPES = frozenset({"string", "int64", "list<int64>", "list<string>"})


# ---------------------------------------------------------------- shape


@functools.cache
def schema(name: str) -> dict[str, Any]:
    """The JSON Schema of kind ``name`` (its file under the schema package)."""
    k = kind(name)
    if k.schema is None:
        raise KeyError(f"input kind {name!r} has no schema here; its shape is checked in {k.shape}")
    text = resources.files(_SCHEMA_PACKAGE).joinpath(f"{k.schema}.schema.json").read_text("utf-8")
    return json.loads(text)  # our own package data


def _ecma(pattern: str) -> str:
    """``pattern`` with ECMA-262's ``$`` (the end of the string, as JSON Schema specifies) where
    Python's ``$`` would also match before a final line break: ``"t2s_k1\n"`` must not pass ``_k[0-9]+$``."""
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        return pattern[:-1] + r"\Z"
    return pattern


@functools.cache
def _strict_class():
    from jsonschema import Draft202012Validator, validators
    from jsonschema.exceptions import ValidationError

    def pattern(validator, patrn, instance, _schema):
        if validator.is_type(instance, "string") and not re.search(_ecma(patrn), instance):
            yield ValidationError(f"{instance!r} does not match {patrn!r}")

    # JSON Schema's "integer" takes 3.0 too; a label or count read as a float then indexes a list or
    # a range and fails as a traceback after the check passed. An integer is an int here (not a bool).
    integers = Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _checker, value: isinstance(value, int) and not isinstance(value, bool)
    )
    return validators.extend(Draft202012Validator, {"pattern": pattern}, type_checker=integers)


def schema_validator(schema_: dict[str, Any], **kwargs: Any):
    """The one way a JSON Schema validator is made in the package (Draft 2020-12, ``pattern`` with
    ECMA-262's end of string); ``tests/architecture/test_one_reader.py`` finds any other."""
    cls = _strict_class()
    cls.check_schema(schema_)
    return cls(schema_, **kwargs)


@functools.cache
def _validator(name: str):
    return schema_validator(schema(name))


def _path(parts) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(top level)"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_COMBINATORS = ("anyOf", "oneOf", "allOf", "not", "if")


def problem(name: str, value: Any) -> tuple[str, str] | None:
    """(JSON path, what is wrong) of the first place ``value`` breaks kind ``name``'s schema, or None."""
    if kind(name).schema is None:
        return None
    # the shallowest first, and there a named rule before a combinator's "none of these"
    errors = sorted(
        _validator(name).iter_errors(value),
        key=lambda e: (len(e.absolute_path), e.validator in _COMBINATORS, str(e.absolute_path)),
    )
    if not errors:
        return None
    return _described(errors[0])


def _described(err) -> tuple[str, str]:
    if err.validator in ("anyOf", "oneOf") and err.context:
        # "null or X" (an optional field): say what X wants, not that no branch matched
        types = [e for e in err.context if e.validator == "type" and not e.relative_path]
        if len(types) == len(err.context):
            wanted = [
                t
                for e in types
                for t in (e.validator_value if isinstance(e.validator_value, list) else [e.validator_value])
            ]
            return _path(err.absolute_path), f"{_shown(err.instance)} is not of type {' or '.join(wanted)}"
        from jsonschema.exceptions import best_match

        return _described(
            best_match(e for e in err.context if not (e.validator == "type" and e.validator_value == "null"))
        )
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        allowed = set(err.schema.get("properties", {}))
        extra = sorted(str(x) for x in err.instance if x not in allowed)
        return _path(err.absolute_path), f"has a key it should not ({', '.join(map(_shown, extra))})"
    if err.validator == "required":
        return _path(err.absolute_path), err.message.replace(" is a required property", " is missing")
    return _path(err.absolute_path), f"{_shown(err.instance)} {_rule(err)}"


def _rule(err) -> str:
    if err.validator == "type":
        types = err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
        return "is not of type " + " or ".join(types)
    message = str(err.message)
    shown = repr(err.instance)
    return message[len(shown) :].strip() if message.startswith(shown) else message


@functools.cache
def _definition_validator(name: str, definition: str):
    return schema_validator({"$ref": f"#/$defs/{definition}", "$defs": schema(name)["$defs"]})


def definition_problem(name: str, definition: str, value: Any) -> tuple[str, str] | None:
    """``problem`` against one definition (``$defs``) of kind ``name``'s schema (an endpoint's answer)."""
    errors = sorted(
        _definition_validator(name, definition).iter_errors(value),
        key=lambda e: (len(e.absolute_path), e.validator in _COMBINATORS, str(e.absolute_path)),
    )
    return None if not errors else _described(errors[0])


def check(name: str, value: Any, source: str, where: str = "") -> None:
    """Raise ``ReadError`` naming ``source``, ``where`` and the field when ``value`` breaks the kind's schema."""
    found = problem(name, value)
    if found is not None:
        k = kind(name)
        field, why = found
        raise ReadError(f"{source}{where}: not {k.what}: {field} {why}; {k.fix}")


# ---------------------------------------------------------------- strings no UTF-8 file can hold


def _surrogates(k: Kind, value: Any, source: str, where: str) -> Any:
    stack: list[tuple[Any, tuple]] = [(value, ())]
    found = None
    while stack and found is None:
        node, at = stack.pop()
        if isinstance(node, str):
            if jsonio.has_lone_surrogate(node):
                found = at
        elif isinstance(node, dict):
            for key, item in node.items():
                if isinstance(key, str) and jsonio.has_lone_surrogate(key):
                    found = (*at, jsonio.storable(key))
                    break
                stack.append((item, (*at, key)))
        elif isinstance(node, list):
            stack.extend((item, (*at, n)) for n, item in enumerate(node))
        elif isinstance(node, float) and not math.isfinite(node):  # only from YAML; JSON has none
            raise ReadError(f"{source}{where}: not {k.what}: {_path(at)} is not a finite number; {k.fix}")
    if found is None:
        return value
    if k.surrogates == "escape":
        return _escaped(value)
    raise ReadError(
        f"{source}{where}: not {k.what}: {_path(found)} holds a lone surrogate (\\udXXX), which no UTF-8 "
        f"text can store; {k.fix}"
    )


def _escaped(value: Any) -> Any:
    if isinstance(value, str):
        return jsonio.storable(value)
    if isinstance(value, dict):
        return {_escaped(key): _escaped(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_escaped(item) for item in value]
    return value
