"""`images check`: everything a curator must get right before a pool goes into a release."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from mvlsib import jsonio, readers
from mvlsib.atomic import output_file
from mvlsib.image_pool.hashes import (
    ImageHashes,
    NearDupPolicy,
    PairDistance,
    all_pairs,
    compare,
    compute_hashes,
    nearest_neighbours,
)
from mvlsib.image_pool.licenses import DEFAULT_ALLOWED, read_allow_list
from mvlsib.image_pool.normalize import DEFAULT_MAX_PIXELS, POOL_FORMATS
from mvlsib.image_pool.rows import row_problems
from mvlsib.limits import IMAGES_PER_TOPIC, MAX_IMAGE_FILE_BYTES, MIN_SIDE
from mvlsib.progress import bar
from mvlsib.release_format.mvl_sib import TOPICS
from mvlsib.terminal import visible
from mvlsib.workdir.pool_manifest import ManifestRow, pool_root, read_manifest, resolve_in_pool

DEFAULT_MIN_SIDE = MIN_SIDE
DEFAULT_EXPECTED_PER_TOPIC = IMAGES_PER_TOPIC


@dataclass(frozen=True)
class Finding:
    image_id: str  # empty for findings about a whole topic
    topic: str
    # licence, attribution, url, markup, path, missing, format, decode, size, pixels, sha256, duplicate,
    # near-duplicate, topic, count, id
    code: str
    message: str
    severity: str = "error"  # or "warning" (reported, does not fail the check)


@dataclass(frozen=True)
class CheckOptions:
    allowed_licenses: tuple[str, ...] = DEFAULT_ALLOWED
    min_side: int = DEFAULT_MIN_SIDE
    max_pixels: int = DEFAULT_MAX_PIXELS
    expected_per_topic: int | None = DEFAULT_EXPECTED_PER_TOPIC  # None or 0: do not check counts
    policy: NearDupPolicy = NearDupPolicy()
    closest: int = 10  # closest pairs listed even when they pass


def options_from(
    extra_licenses: tuple[str, ...],
    allow_list: str | Path | None,
    min_side: int,
    max_pixels: int,
    expected_per_topic: int,
    phash_max: int,
    dhash_max: int,
    *,
    closest: int = 10,
) -> CheckOptions:
    """The options as a curator states them: the licences of ``allow_list`` (a file; default the
    built-in list) plus ``extra_licenses``, and 0 images per topic for "do not count"."""
    allowed = read_allow_list(allow_list) if allow_list else DEFAULT_ALLOWED
    return CheckOptions(
        allowed_licenses=tuple(dict.fromkeys([*allowed, *extra_licenses])),
        min_side=min_side,
        max_pixels=max_pixels,
        expected_per_topic=expected_per_topic or None,
        policy=NearDupPolicy(phash_max=phash_max, dhash_max=dhash_max),
        closest=closest,
    )


@dataclass
class ImageInfo:
    format: str = ""
    width: int = 0
    height: int = 0
    sha256: str = ""


@dataclass
class CheckReport:
    pool: str
    n_images: int
    findings: list[Finding]
    closest_pairs: list[PairDistance]
    nearest: dict[str, PairDistance]
    info: dict[str, ImageInfo]
    options: CheckOptions
    hashes: dict[str, ImageHashes] = field(default_factory=dict, repr=False)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def offending_ids(self) -> list[str]:
        return sorted({f.image_id for f in self.errors if f.image_id})

    def to_dict(self) -> dict:
        pol = self.options.policy
        return {
            "pool": self.pool,
            "ok": self.ok,
            "n_images": self.n_images,
            "n_errors": len(self.errors),
            "n_warnings": len(self.findings) - len(self.errors),
            "offending_ids": self.offending_ids,
            "findings": [asdict(f) for f in self.findings],
            "closest_pairs": [p.as_dict() for p in self.closest_pairs],
            "nearest": {k: v.as_dict() for k, v in sorted(self.nearest.items())},
            "images": {k: asdict(v) for k, v in sorted(self.info.items())},
            "settings": {
                "allowed_licenses": list(self.options.allowed_licenses),
                "min_side": self.options.min_side,
                "max_pixels": self.options.max_pixels,
                "expected_per_topic": self.options.expected_per_topic,
                "near_duplicate": {
                    "phash_max": pol.phash_max,
                    "dhash_max": pol.dhash_max,
                    "crop_segment_bits": pol.crop_segment_bits,
                    "crop_segments_min": pol.crop_segments_min,
                },
            },
        }

    def to_json(self, *, ascii_only: bool = False) -> str:
        # ascii_only for a terminal: every control and bidi mark in a field then stays a JSON escape
        return jsonio.dumps(self.to_dict(), indent=2, ensure_ascii=ascii_only, sort_keys=False) + "\n"

    def to_text(self) -> str:
        lines = []
        for f in self.findings:
            who = visible(f.image_id) or (f"topic {visible(f.topic)}" if f.topic else "pool")
            lines.append(f"{f.severity.upper():7} {who}: [{f.code}] {visible(f.message)}")
        if self.closest_pairs:
            lines.append("")
            lines.append("closest pairs (pHash/dHash bits: whole image, best crop window; crop-resistant segments):")
            for p in self.closest_pairs:
                flag = "NEAR-DUPLICATE" if p.near_duplicate else "ok"
                lines.append(
                    f"  {visible(p.a):<24} {visible(p.b):<24} whole {p.phash:>2}/{p.dhash:<2}  window {p.window_phash:>2}/"
                    f"{p.window_dhash:<2}  segments {p.crop_segments}  {flag}"
                )
            pol = self.options.policy
            lines.append(
                f"  (near-duplicate when pHash <= {pol.phash_max} and dHash <= {pol.dhash_max} for the whole "
                f"image or a crop window, or >= {pol.crop_segments_min} segments match)"
            )
        lines.append("")
        n_warn = len(self.findings) - len(self.errors)
        if self.ok:
            lines.append(f"OK: {self.n_images} images in {visible(self.pool)} pass ({n_warn} warning(s))")
        else:
            topics = sorted({f.topic for f in self.errors if not f.image_id})
            parts = ([f"image(s) {', '.join(map(visible, self.offending_ids))}"] if self.offending_ids else []) + (
                [f"topic(s) {', '.join(map(visible, topics))}"] if topics else []
            )
            lines.append(f"FAILED: {len(self.errors)} problem(s) in {visible(self.pool)}: " + "; ".join(parts))
        return "\n".join(lines) + "\n"


def _end_marker_problem(data: bytes, fmt: str) -> str:
    if fmt == "JPEG" and not data.rstrip(b"\x00\r\n ").endswith(b"\xff\xd9"):
        return "JPEG data ends without its end-of-image marker: the file is truncated"
    if fmt == "PNG" and not data.endswith(b"IEND\xaeB`\x82"):
        return "PNG data does not end with the IEND chunk: the file is truncated"
    if fmt == "WEBP" and len(data) >= 8 and int.from_bytes(data[4:8], "little") + 8 > len(data):
        return "WebP data is shorter than its RIFF header says: the file is truncated"
    return ""


def _inspect(image_id: str, topic: str, data: bytes, opts: CheckOptions, findings: list[Finding]):
    """Decode fully; append findings; return the image when it is usable for hashing."""

    def bad(code: str, msg: str):
        findings.append(Finding(image_id, topic, code, msg))
        return None

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        try:
            im = Image.open(io.BytesIO(data))
        except Image.DecompressionBombError as exc:
            return bad("pixels", f"refused as a decompression bomb ({exc})")
        except UnidentifiedImageError:
            return bad("decode", "not a decodable image (unknown format or corrupt header)")
        except Exception as exc:  # any decoder failure is a finding about this file
            return bad("decode", f"cannot be opened ({exc})")
        if im.format not in POOL_FORMATS:
            return bad(
                "format", f"format {im.format} is not allowed in a pool; use JPEG, PNG or WebP (`images add` converts)"
            )
        w, h = im.size
        if w * h > opts.max_pixels:
            return bad(
                "pixels",
                f"{w}x{h} = {w * h:,} pixels exceeds the limit of {opts.max_pixels:,} "
                "(decompression-bomb guard); not decoded",
            )
        try:
            im.load()
        except Exception as exc:
            return bad("decode", f"cannot be decoded to the end ({exc}); the file is truncated or corrupt")
    marker = _end_marker_problem(data, im.format)
    if marker:
        bad("decode", marker)
    if min(w, h) < opts.min_side:
        bad("size", f"{w}x{h} is too small: shorter side {min(w, h)} px < {opts.min_side} px (--min-side)")
    return im


def check_pool(
    pool: str | Path,
    options: CheckOptions = CheckOptions(),
    *,
    hash_cache: dict[str, ImageHashes] | None = None,
    progress: bool = False,
) -> CheckReport:
    """Run every check on ``pool``. ``hash_cache`` (sha256 of file bytes -> hashes) is read and filled."""
    root = pool_root(pool)
    rows = read_manifest(pool)
    scan = _Scan(hash_cache if hash_cache is not None else {})
    allowed = frozenset(options.allowed_licenses)
    for row in bar(rows, desc="checking images", unit="img", enabled=progress):
        _check_row_metadata(row, allowed, scan.findings)
        _check_file(root, row, options, scan)
    topic_of = {r.image_id: r.topic for r in rows}
    _check_duplicates(topic_of, scan)
    # Pairs are compared once per distinct image content: byte-identical copies are reported as
    # duplicates above, and comparing each of them again made a pool of n copies cost n^2.
    pairs = all_pairs({ids[0]: scan.hashes[ids[0]] for ids in scan.by_sha.values() if ids[0] in scan.hashes})
    _check_near_duplicates(topic_of, pairs, scan)
    twins = _twin_pairs(scan, options.policy)
    _check_topics(rows, options, scan.findings)
    _check_orphans(root, {p.resolve() for p, _ in scan.resolved.values() if p is not None}, scan.findings)
    order = {r.image_id: i for i, r in enumerate(rows)}
    findings = sorted(
        scan.findings, key=lambda f: (f.image_id == "", order.get(f.image_id, 0), f.topic, f.code, f.message)
    )
    nearest = nearest_neighbours(pairs)
    for rid, pair in twins.items():  # a byte-identical copy is an image's nearest neighbour
        nearest[rid] = pair
    closest = sorted({id(p): p for p in twins.values()}.values(), key=lambda p: p.sort_key)
    return CheckReport(
        str(root),
        len(rows),
        findings,
        (closest + pairs)[: max(options.closest, 0)],
        nearest,
        scan.info,
        options,
        scan.hashes,
    )


@dataclass
class _Scan:
    """What reading the pool's files gathers, image by image."""

    cache: dict[str, ImageHashes]  # sha256 of file bytes -> hashes, shared across checks
    findings: list[Finding] = field(default_factory=list)
    info: dict[str, ImageInfo] = field(default_factory=dict)
    hashes: dict[str, ImageHashes] = field(default_factory=dict)
    by_sha: dict[str, list[str]] = field(default_factory=dict)
    # Each file is resolved and read, and each distinct content decoded, once however many rows name it.
    resolved: dict[str, tuple[Path | None, str]] = field(default_factory=dict)
    sha_of_path: dict[Path, str] = field(default_factory=dict)
    inspected: dict[str, tuple[list[tuple[str, str]], ImageInfo | None]] = field(default_factory=dict)


def _check_file(root: Path, row: ManifestRow, options: CheckOptions, scan: _Scan) -> None:
    """The row's file: inside the pool, present, as the manifest's sha256 says, decodable; hashed."""
    rid, topic = row.image_id, row.topic
    if row.file not in scan.resolved:
        scan.resolved[row.file] = resolve_in_pool(root, row.file)
    path, why = scan.resolved[row.file]
    if path is None:
        scan.findings.append(Finding(rid, topic, "path", why))
        return
    sha = scan.sha_of_path.get(path)
    data = b""
    if sha is None:
        if not path.is_file():
            scan.findings.append(Finding(rid, topic, "missing", f"file {row.file!r} does not exist in {root}"))
            return
        try:
            data = readers.read_limited(path, MAX_IMAGE_FILE_BYTES, fix="not an image of a pool")
        except readers.ReadError as exc:
            scan.findings.append(Finding(rid, topic, "unreadable", str(exc)))
            return
        sha = scan.sha_of_path[path] = hashlib.sha256(data).hexdigest()
    scan.info[rid] = ImageInfo(sha256=sha)
    if row.sha256.lower() != sha:
        scan.findings.append(
            Finding(
                rid,
                topic,
                "sha256",
                f"manifest sha256 {row.sha256 or '(empty)'} does not match "
                f"the file ({sha}); the file changed or the row is stale",
            )
        )
    scan.by_sha.setdefault(sha, []).append(rid)
    if sha not in scan.inspected:
        found: list[Finding] = []
        if not data:  # hashed already (another row names the same file): read it again, within the bound
            try:
                data = readers.read_limited(path, MAX_IMAGE_FILE_BYTES, fix="not an image of a pool")
            except readers.ReadError as exc:
                scan.findings.append(Finding(rid, topic, "unreadable", str(exc)))
                return
        im = _inspect("", "", data, options, found)
        info = None if im is None else ImageInfo(im.format, im.size[0], im.size[1], sha)
        scan.inspected[sha] = ([(f.code, f.message) for f in found], info)
        if im is not None and sha not in scan.cache:
            scan.cache[sha] = compute_hashes(im)
    problems, info = scan.inspected[sha]
    scan.findings += [Finding(rid, topic, code, message) for code, message in problems]
    if info is not None:
        scan.info[rid] = info
        scan.hashes[rid] = scan.cache[sha]


def _twin_pairs(scan: _Scan, policy: NearDupPolicy) -> dict[str, PairDistance]:
    """Each byte-identical copy's pair with the first of its copies (the first: with the second)."""
    out: dict[str, PairDistance] = {}
    for ids in scan.by_sha.values():
        if len(ids) < 2 or ids[0] not in scan.hashes:
            continue
        h = scan.hashes[ids[0]]
        first = compare(ids[0], h, ids[1], h, policy)  # one comparison per content, not per copy
        out[ids[0]] = first
        for rid in ids[1:]:
            out[rid] = first if rid == ids[1] else dataclasses.replace(first, b=rid)
    return out


def _check_duplicates(topic_of: dict[str, str], scan: _Scan) -> None:
    for _sha, ids in sorted(scan.by_sha.items()):
        for rid in ids if len(ids) > 1 else ():
            # at most five names and a count: a message stays short however many copies there are
            shown = [i for i in ids[:6] if i != rid][:5]
            more = f" and {len(ids) - 1 - len(shown):,} more" if len(ids) - 1 > len(shown) else ""
            message = f"byte-identical to {', '.join(shown)}{more}; keep one and replace the other(s)"
            scan.findings.append(Finding(rid, topic_of.get(rid, ""), "duplicate", message))


def _check_near_duplicates(topic_of: dict[str, str], pairs: list[PairDistance], scan: _Scan) -> None:
    """Pairs are between the first rows of two distinct contents; each copy of either is flagged too."""
    for p in pairs:
        if not p.near_duplicate:
            continue
        group = {x: scan.by_sha[scan.info[x].sha256] for x in (p.a, p.b)}
        for x, y in ((p.a, p.b), (p.b, p.a)):
            copies = len(group[y]) - 1
            other = f"{y} ({topic_of.get(y, '')})" + (f" and its {copies:,} byte-identical copies" if copies else "")
            for rid in group[x]:
                scan.findings.append(
                    Finding(rid, topic_of.get(rid, ""), "near-duplicate", f"near-duplicate of {other}: {p.reason}")
                )


def _check_row_metadata(row: ManifestRow, allowed: frozenset[str], findings: list[Finding]) -> None:
    """The row's own rules (image_pool/rows.py), which `images add` and `import-release` apply before writing."""
    for p in row_problems(row.as_dict(), allowed):
        findings.append(Finding(row.image_id, row.topic, p.code, p.message, severity=p.severity))


IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".webp", ".gif", ".tif", ".tiff", ".bmp"}


def _check_orphans(root: Path, named: set[Path], findings: list[Finding]) -> None:
    """Image files in the pool that no row names (``named``: resolved paths): a forgotten manifest edit."""
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts) or path.suffix.lower() not in IMAGE_SUFFIXES:
            continue
        if path.is_file() and path.resolve() not in named:
            findings.append(
                Finding(
                    "",
                    "",
                    "orphan",
                    f"{rel.as_posix()} is in the pool folder but no manifest row "
                    "names it; add a row or delete the file",
                    severity="warning",
                )
            )


def _check_topics(rows: list[ManifestRow], options: CheckOptions, findings: list[Finding]) -> None:
    if not options.expected_per_topic:
        return
    counts = {t: 0 for t in TOPICS}
    for r in rows:
        if r.topic in counts:
            counts[r.topic] += 1
    for t, n in counts.items():
        if n != options.expected_per_topic:
            findings.append(
                Finding(
                    "",
                    t,
                    "count",
                    f"topic {t!r} has {n} image(s), expected {options.expected_per_topic} (--expected-per-topic)",
                )
            )


def write_report(report: CheckReport, path: str | Path) -> None:
    with output_file(path, "mvlsib-build images check", option="--json") as fh:
        fh.write(report.to_json())


__all__ = [
    "CheckOptions",
    "options_from",
    "CheckReport",
    "Finding",
    "check_pool",
    "resolve_in_pool",
    "pool_root",
    "write_report",
    "DEFAULT_MIN_SIDE",
    "DEFAULT_EXPECTED_PER_TOPIC",
]
