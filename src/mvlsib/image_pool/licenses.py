"""Image licences: SPDX parsing, Wikimedia short names, allow-list, attribution duties.

A benchmark release is redistributed to anyone for any use, and every pool image is
resized and re-encoded. So NC (non-commercial) and ND (no derivatives) licences can never
be accepted; unknown keys are refused because nobody can tell what they allow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from license_expression import AND, OR, ExpressionError, LicenseSymbol, get_spdx_licensing

from mvlsib import readers
from mvlsib.errors import MvlsibError
from mvlsib.limits import MAX_TEXT_LINE_BYTES

# C0/C1 controls (tab aside) and bidi overrides: a key holding one would act on the terminal it is shown on.
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

DEFAULT_ALLOWED: tuple[str, ...] = (
    "CC0-1.0",
    "PDDL-1.0",
    "CC-PDDC",
    "CC-PDM-1.0",
    "CC-BY-2.0",
    "CC-BY-3.0",
    "CC-BY-4.0",
    "CC-BY-SA-2.0",
    "CC-BY-SA-3.0",
    "CC-BY-SA-4.0",
    "LicenseRef-PublicDomain",
    "LicenseRef-Unsplash",
    "LicenseRef-Pexels",
)

# license-expression resolves some LicenseRef keys to ScanCode aliases; map them back.
_ALIASES = {
    "licenseref-scancode-public-domain": "LicenseRef-PublicDomain",
    "licenseref-publicdomain": "LicenseRef-PublicDomain",
    "licenseref-unsplash": "LicenseRef-Unsplash",
    "licenseref-pexels": "LicenseRef-Pexels",
}

# Names as Wikimedia Commons (and photo sites) write them -> SPDX.
_SHORT_NAMES = {
    "public domain": "LicenseRef-PublicDomain",
    "public-domain": "LicenseRef-PublicDomain",
    "publicdomain": "LicenseRef-PublicDomain",
    "pd": "LicenseRef-PublicDomain",
    "pd-self": "LicenseRef-PublicDomain",
    "pd-author": "LicenseRef-PublicDomain",
    "pd-usgov": "LicenseRef-PublicDomain",
    "pd-usgov-nasa": "LicenseRef-PublicDomain",
    "pd-us": "LicenseRef-PublicDomain",
    "pd-old": "LicenseRef-PublicDomain",
    "public domain mark": "CC-PDM-1.0",
    "public domain mark 1.0": "CC-PDM-1.0",
    "pdm": "CC-PDM-1.0",
    "pdm 1.0": "CC-PDM-1.0",
    "cc0": "CC0-1.0",
    "cc0 1.0": "CC0-1.0",
    "cc zero": "CC0-1.0",
    "cc-zero": "CC0-1.0",
    "unsplash": "LicenseRef-Unsplash",
    "unsplash license": "LicenseRef-Unsplash",
    "pexels": "LicenseRef-Pexels",
    "pexels license": "LicenseRef-Pexels",
    "pddl": "PDDL-1.0",
}

# "CC BY-SA 4.0", "CC-BY-NC-ND-3.0", "cc by 2.0 de", "CC BY 4.0 International"
_CC_RE = re.compile(
    r"^cc[\s_-]*(?P<parts>by(?:[\s_-]*(?:nc|nd|sa))*)[\s_-]*(?P<ver>\d\.\d)"
    r"(?:[\s_-]*(?P<port>[a-z]{2}(?:-[a-z]{2})?|international|generic|unported))?\Z",
    re.IGNORECASE,
)


def normalize_license(text: str) -> str:
    """Map a licence as curators write it to an SPDX expression (unchanged if already SPDX-like)."""
    s = " ".join(text.strip().split())
    low = s.lower()
    if low in _SHORT_NAMES:
        return _SHORT_NAMES[low]
    m = _CC_RE.match(s)
    if m and " or " not in low and " and " not in low:
        parts = re.findall(r"nc|nd|sa", m.group("parts").lower())
        key = "CC-BY" + "".join("-" + p.upper() for p in parts) + "-" + m.group("ver")
        port = (m.group("port") or "").lower()
        if port and port not in ("international", "generic", "unported"):
            key += "-" + port.upper()
        return key
    return s


@dataclass(frozen=True)
class LicenceVerdict:
    expression: str  # normalised SPDX expression
    allowed: bool
    reason: str  # why it is refused; empty when allowed
    requires_attribution: bool


@lru_cache(maxsize=1)
def _licensing():
    return get_spdx_licensing()


def _canonical(key: str) -> str:
    return _ALIASES.get(key.lower(), key)


def _why_refused(key: str, known: bool, allowed: frozenset[str]) -> str:
    up = key.upper()
    if "-NC" in up:
        return (
            f"{key} forbids commercial use (NC), but a published benchmark is redistributed to users "
            "who may use it commercially; find an image under CC0, CC-BY or CC-BY-SA instead"
        )
    if "-ND" in up:
        return (
            f"{key} forbids derivatives (ND), but the pool resizes and re-encodes every image, which is a "
            "derivative; find an image under CC0, CC-BY or CC-BY-SA instead"
        )
    if not known:
        return (
            f"{key!r} is not a known SPDX licence key, so nobody can tell what it permits; write the SPDX "
            "id (e.g. CC-BY-SA-4.0), a Wikimedia short name (e.g. 'CC BY-SA 4.0'), or an allowed "
            "LicenseRef- key"
        )
    return (
        f"{key} is a valid licence but not in the allow-list ({', '.join(sorted(allowed))}); "
        "add it with --allow-license only after checking it permits redistribution and modification"
    )


def judge_license(text: str, allowed: frozenset[str] | None = None) -> LicenceVerdict:
    """Decide whether ``text`` (SPDX expression or a common short name) may enter a release.

    ``A OR B`` is allowed when any alternative is (the user picks one); ``A AND B``
    only when all are. Attribution is required when the chosen terms contain a BY licence.
    """
    if allowed is None or isinstance(allowed, frozenset):
        # A pool has a few distinct licences for its 70 images, and the card asks twice per image:
        # each is parsed once (the verdict is immutable).
        return _judge_once(text, allowed)
    return _judge(text, allowed)


@lru_cache(maxsize=256)
def _judge_once(text: str, allowed: frozenset[str] | None) -> LicenceVerdict:
    return _judge(text, allowed)


def _judge(text: str, allowed) -> LicenceVerdict:
    allowed_keys = frozenset(_canonical(k) for k in (allowed if allowed is not None else DEFAULT_ALLOWED))
    allowed_low = {k.lower() for k in allowed_keys}
    expr_text = normalize_license(text)
    if not expr_text:
        return LicenceVerdict("", False, "no licence given; every image needs one (SPDX id, e.g. CC-BY-4.0)", True)
    licensing = _licensing()
    try:
        parsed = licensing.parse(expr_text, validate=False)
    except ExpressionError as exc:
        return LicenceVerdict(expr_text, False, f"{expr_text!r} is not a valid SPDX expression ({exc})", True)
    if parsed is None:
        return LicenceVerdict("", False, "no licence given; every image needs one (SPDX id, e.g. CC-BY-4.0)", True)
    unknown = {s.key.lower() for s in licensing.unknown_license_symbols(parsed)}

    def walk(node) -> tuple[bool, str, bool]:
        if isinstance(node, LicenseSymbol):
            key = _canonical(node.key)
            known = node.key.lower() not in unknown or key.lower() in allowed_low
            ok = key.lower() in allowed_low and known
            return ok, "" if ok else _why_refused(key, known, allowed_keys), "BY" in key.upper().split("-")
        results = [walk(arg) for arg in node.args]
        if isinstance(node, OR):
            good = [r for r in results if r[0]]
            if good:
                return True, "", all(r[2] for r in good)
            return False, "; ".join(r[1] for r in results), any(r[2] for r in results)
        if isinstance(node, AND):
            bad = [r for r in results if not r[0]]
            return not bad, "; ".join(r[1] for r in bad), any(r[2] for r in results)
        return False, f"unsupported licence expression {node}", True  # e.g. WITH exceptions

    ok, reason, by = walk(parsed)
    canon = str(parsed)
    for alias, name in _ALIASES.items():
        canon = re.sub(re.escape(alias), name, canon, flags=re.IGNORECASE)
    return LicenceVerdict(canon, ok, reason, by)


MISSING_AUTHOR = {"", "unknown", "n/a", "na", "none", "-", "?", "anonymous"}


def has_value(text: str) -> bool:
    return text.strip().lower() not in MISSING_AUTHOR


def license_url(expression: str) -> str:
    """A page explaining the licence (SPDX list, Creative Commons deeds, Unsplash/Pexels terms)."""
    key = expression.strip()
    m = re.fullmatch(r"CC-BY((?:-(?:NC|ND|SA))*)-(\d\.\d)(?:-[A-Z]{2,})?", key)
    if m:
        return f"https://creativecommons.org/licenses/by{m.group(1).lower()}/{m.group(2)}/"
    fixed = {
        "CC0-1.0": "https://creativecommons.org/publicdomain/zero/1.0/",
        "CC-PDM-1.0": "https://creativecommons.org/publicdomain/mark/1.0/",
        "LicenseRef-Unsplash": "https://unsplash.com/license",
        "LicenseRef-Pexels": "https://www.pexels.com/license/",
        "LicenseRef-PublicDomain": "https://en.wikipedia.org/wiki/Public_domain",
    }
    if key in fixed:
        return fixed[key]
    if re.fullmatch(r"[A-Za-z0-9.+-]+", key) and not key.startswith("LicenseRef-"):
        if not _licensing().validate(key).errors:
            return f"https://spdx.org/licenses/{key}.html"
    return ""


def read_allow_list(path: str | Path) -> tuple[str, ...]:
    """One licence key per line; '#' starts a comment."""
    p = Path(path)
    data = readers.read_limited(p, MAX_TEXT_LINE_BYTES, fix="an allow-list is one licence key per line")
    try:
        lines = data.decode("utf-8-sig").splitlines()
    except UnicodeDecodeError as exc:
        raise MvlsibError(
            f"{p}: the licence allow-list is not UTF-8 text (byte {exc.start}); save it as UTF-8"
        ) from None
    for n, line in enumerate(lines, start=1):
        if (bad := _CONTROL.search(line)) is not None:
            raise MvlsibError(
                f"{p}, line {n}: the licence allow-list holds the control character U+{ord(bad.group()):04X}; "
                "a licence key is letters, digits and . + -: remove it"
            )
    keys = tuple(k for k in (line.split("#", 1)[0].strip() for line in lines) if k)
    if not keys:
        raise MvlsibError(f"{p}: the licence allow-list is empty; put one SPDX key per line")
    return keys
