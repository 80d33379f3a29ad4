"""The rules of one pool-manifest row: the one place they are spelled.

`images check` reports them, `images add` and `images import-release` refuse a row breaking one
before anything is written (so a row they write never fails the check), every command that ships a
pool (`build`, `publish --out`: through :func:`refuse_unshippable`, which the release's inputs call)
refuses a pool with such a row, and `validate` applies the manifest row schema among them. A new row is made through :func:`new_row`, which applies them;
``tests/architecture/test_layers.py`` finds any other ``ManifestRow(...)`` outside the manifest's
reader.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from mvlsib import httpio
from mvlsib.errors import MvlsibError
from mvlsib.escape import has_markup
from mvlsib.image_pool.licenses import DEFAULT_ALLOWED, has_value, judge_license
from mvlsib.release_format.mvl_sib import TOPICS, topic_slug
from mvlsib.schema.validators import schema_errors
from mvlsib.workdir.pool_manifest import COLUMNS, ManifestRow, Pool


@dataclass(frozen=True)
class RowProblem:
    field: str  # the column the problem is about
    code: str  # licence, attribution, url, markup, schema, topic, id
    message: str
    severity: str = "error"  # or "warning" (reported, does not fail a check, does not stop a write)


# Manifest fields whose text reaches the card, the credits and the gallery (file and sha256 are checked
# as a path and a hash; extra columns such as title and licence_evidence are text too).
TEXT_FIELDS = ("image_id", "topic", "license", "author")
# Columns whose schema messages are left to their own finding, with a hint (topic below; file and sha256
# by `images check`, which reads the file).
_OWN_FINDINGS = ("topic", "file", "sha256")


def stored_url(url: str) -> str:
    """A source_url as a row stores it: a URL copied from a browser's address bar may show spaces; on
    the wire they are %20 (`images add` and `import-release` alike)."""
    return url.strip().replace(" ", "%20")


def row_problems(
    row: Mapping[str, str], allowed: frozenset[str] | tuple[str, ...] = DEFAULT_ALLOWED
) -> list[RowProblem]:
    """Every problem of one manifest row (``ManifestRow.as_dict()``) that does not need its file."""
    return [*_text_problems(row), *_licence_problems(row, frozenset(allowed)), *_topic_problems(row)]


def _text_problems(row: Mapping[str, str]) -> list[RowProblem]:
    """A source_url that is not an http(s) address, a value the manifest row schema refuses, and
    markup in any text field: shown escaped in every output, but a curator meant something else."""
    out = []
    url = row.get("source_url", "").strip()
    for message in schema_errors("manifest_row", dict(row)):
        field = message.split(":", 1)[0]
        if field in _OWN_FINDINGS:
            continue
        if field == "source_url" and httpio.holds_credential(url):
            out.append(RowProblem(field, "url", message))
        elif field == "source_url":
            out.append(
                RowProblem(
                    field,
                    "url",
                    f"source_url {url[:200]!r} is not an http(s) address (javascript:, data:, file: and relative "
                    "links are never linked; spaces are written %20); give the web page the image was published on",
                )
            )
        else:
            out.append(RowProblem(field, "schema", f"{message}; validate refuses this row, fix it"))
    extra = sorted((k, v) for k, v in row.items() if k not in COLUMNS)
    for name, value in [(n, row.get(n, "")) for n in TEXT_FIELDS] + extra:
        if value and has_markup(value):
            out.append(
                RowProblem(
                    name,
                    "markup",
                    f"{name} {value[:200]!r} holds HTML or Markdown markup (a tag, entity, link or script URL); "
                    "write it as plain text",
                )
            )
    return out


def _licence_problems(row: Mapping[str, str], allowed: frozenset[str]) -> list[RowProblem]:
    license_ = row.get("license", "")
    verdict = judge_license(license_, allowed)
    if not verdict.allowed:
        return [RowProblem("license", "licence", f"licence {license_!r} refused: {verdict.reason}")]
    if not verdict.requires_attribution:
        return []
    missing = [name for name in ("author", "source_url") if not has_value(row.get(name, ""))]
    if not missing:
        return []
    return [
        RowProblem(
            missing[0],
            "attribution",
            f"{verdict.expression} requires attribution, but {' and '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} missing; fill in who made the image "
            "and where it was published",
        )
    ]


def _topic_problems(row: Mapping[str, str]) -> list[RowProblem]:
    topic, rid = row.get("topic", ""), row.get("image_id", "")
    if topic not in TOPICS:
        hint = f" (write {topic.replace('_', '/')!r})" if topic.replace("_", "/") in TOPICS else ""
        return [
            RowProblem(
                "topic", "topic", f"topic {topic!r} is not one of the 7 SIB-200 topics ({', '.join(TOPICS)}){hint}"
            )
        ]
    if not re.fullmatch(re.escape(topic_slug(topic)) + r"_\d+", rid):
        return [
            RowProblem(
                "image_id",
                "id",
                f"image_id {rid!r} does not follow <topic_slug>_<n> (e.g. {topic_slug(topic)}_0)",
                severity="warning",
            )
        ]
    return []


def refuse_problems(row: Mapping[str, str], name_of: Callable[[str], str]) -> None:
    """MvlsibError naming the first error of ``row`` as ``name_of(field)`` (an option, a file and line)."""
    errors = _errors(row)
    if errors:
        raise MvlsibError(f"{name_of(errors[0].field)}: {errors[0].message}")


def refuse_unshippable(pool: Pool) -> None:
    """MvlsibError naming the manifest line of the first row of ``pool`` breaking a rule `images check`
    reports as an error (a licence that may not be shipped, a missing attribution, a script URL, ...):
    a release ships every row of its pool, images and credits, so it is made from none but a clean pool."""
    bad = [
        (n, row, errors) for n, row in enumerate(pool.rows, start=2) for errors in [_errors(row.as_dict())] if errors
    ]
    if bad:
        lineno, row, errors = bad[0]
        more = f" ({len(bad) - 1} more row(s) break a rule too)" if len(bad) > 1 else ""
        raise MvlsibError(
            f"{pool.manifest_file}, line {lineno}, image {row.image_id!r}: {errors[0].message}{more}; a release "
            f"ships every image of its pool: fix the row (`mvlsib-build images check --pool {pool.root}` lists "
            "every finding)"
        )


def _errors(row: Mapping[str, str]) -> list[RowProblem]:
    return [p for p in row_problems(row) if p.severity == "error"]


def new_row(fields: Mapping[str, str], name_of: Callable[[str], str]) -> ManifestRow:
    """A new manifest row of ``fields`` (the core columns and any extra ones), refused (MvlsibError naming
    the field as ``name_of`` calls it) when it breaks a rule `images check` would report as an error."""
    missing = [c for c in COLUMNS if c not in fields]
    if missing:
        raise ValueError(f"a manifest row needs {', '.join(missing)}")
    refuse_problems(fields, name_of)
    core = {c: fields[c] for c in COLUMNS}
    return ManifestRow(**core, extra={k: v for k, v in fields.items() if k not in COLUMNS})
