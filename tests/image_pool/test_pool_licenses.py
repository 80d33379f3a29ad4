from __future__ import annotations

import pytest

from mvlsib.image_pool.licenses import DEFAULT_ALLOWED, judge_license, license_url, normalize_license


@pytest.mark.parametrize(
    "text, spdx",
    [
        ("CC BY-SA 4.0", "CC-BY-SA-4.0"),
        ("cc-by-sa-4.0", "CC-BY-SA-4.0"),
        ("CC BY 2.0", "CC-BY-2.0"),
        ("CC BY-SA 3.0 Unported", "CC-BY-SA-3.0"),
        ("CC BY-NC-ND 4.0", "CC-BY-NC-ND-4.0"),
        ("Public domain", "LicenseRef-PublicDomain"),
        ("PD-USGov-NASA", "LicenseRef-PublicDomain"),
        ("CC0", "CC0-1.0"),
        ("Unsplash License", "LicenseRef-Unsplash"),
        ("CC-BY-4.0", "CC-BY-4.0"),
    ],
)
def test_wikimedia_short_names_map_to_spdx(text, spdx):
    assert normalize_license(text) == spdx


@pytest.mark.parametrize("text", [*DEFAULT_ALLOWED, "CC BY-SA 4.0", "Public domain", "CC-BY-4.0 OR CC-BY-NC-4.0"])
def test_allowed(text):
    v = judge_license(text)
    assert v.allowed, v.reason
    assert v.reason == ""


def test_licenseref_publicdomain_keeps_its_name():
    # license-expression resolves it to a ScanCode alias; the toolkit must report the manifest's key.
    assert judge_license("LicenseRef-PublicDomain").expression == "LicenseRef-PublicDomain"


@pytest.mark.parametrize(
    "text, words",
    [
        ("CC-BY-NC-4.0", "commercial"),
        ("CC BY-NC-SA 2.0", "commercial"),
        ("CC-BY-ND-4.0", "derivative"),
        ("CC-BY-4.0 AND CC-BY-NC-4.0", "commercial"),
        ("Some Custom Licence", "not a known SPDX"),
        ("LicenseRef-MyOwn", "not a known SPDX"),
        ("GPL-3.0-only", "not in the allow-list"),
        ("", "no licence"),
    ],
)
def test_refused_with_a_sentence_why(text, words):
    v = judge_license(text)
    assert not v.allowed
    assert words in v.reason


def test_allow_list_is_configurable():
    assert not judge_license("CC-BY-2.5").allowed
    assert judge_license("CC-BY-2.5", frozenset([*DEFAULT_ALLOWED, "CC-BY-2.5"])).allowed
    assert not judge_license("CC-BY-SA-4.0", frozenset(["CC0-1.0"])).allowed


@pytest.mark.parametrize(
    "text, by",
    [
        ("CC-BY-4.0", True),
        ("CC BY-SA 3.0", True),
        ("CC0-1.0", False),
        ("LicenseRef-Unsplash", False),
        ("LicenseRef-PublicDomain", False),
    ],
)
def test_attribution_duty(text, by):
    assert judge_license(text).requires_attribution is by


def test_license_links():
    assert license_url("CC-BY-SA-4.0") == "https://creativecommons.org/licenses/by-sa/4.0/"
    assert license_url("CC0-1.0") == "https://creativecommons.org/publicdomain/zero/1.0/"
    assert license_url("LicenseRef-Pexels").startswith("https://www.pexels.com/")
    assert license_url("made up") == ""
