"""URLs as the toolkit checks, writes and prints them (``httpio.check_url`` and ``httpio.public_url``)."""

from __future__ import annotations

import pytest

from mvlsib import httpio


@pytest.mark.parametrize(
    ("url", "public"),
    [
        ("https://user:pw@hub.example.org/x", "https://hub.example.org/x"),
        ("https://user@hub.example.org:8443/x?a=1", "https://hub.example.org:8443/x?a=1"),
        ("https://s3.example.org/f?X-Amz-Signature=abc&part=2", "https://s3.example.org/f?X-Amz-Signature=***&part=2"),
        (
            "https://api.example.org/v1?api_key=sk-1&token=t&flag",
            "https://api.example.org/v1?api_key=***&token=***&flag",
        ),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
    ],
)
def test_public_url_drops_credentials(url, public):
    assert httpio.public_url(url) == public


@pytest.mark.parametrize(
    "url",
    [
        "https://a.org/x y",
        "https://a.org/\x1b]0;t\x07",
        "https://a.org/x\nFORGED",
        "https://a.org/\u202ex",
        " https://a.org",
    ],
)
def test_check_url_refuses_spaces_and_controls(url):
    with pytest.raises(httpio.InvalidURL, match="position"):
        httpio.check_url(url)


def test_check_url_keeps_a_good_url():
    assert httpio.check_url("https://huggingface.co/api/datasets/x") == "https://huggingface.co/api/datasets/x"
