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


# Every place of a URL that can carry a credential, generated against every credential word.
_PLACES = {
    "query": "https://h.example.org/v1?{name}=S3CRETv4l&x=1",
    "fragment": "https://h.example.org/v1#{name}=S3CRETv4l",
    "path-parameter": "https://h.example.org/v1;{name}=S3CRETv4l/chat",
    "last-path-parameter": "https://h.example.org/v1;x=1;{name}=S3CRETv4l",
}


@pytest.mark.parametrize("word", [*httpio.CREDENTIAL_WORDS, "access_token", "X-Amz-Signature"])
@pytest.mark.parametrize("place", sorted(_PLACES))
def test_a_credential_is_hidden_wherever_the_url_carries_it(place, word):
    url = _PLACES[place].format(name=word)
    assert httpio.holds_credential(url)
    for shown in (httpio.public_url(url), httpio.redact(f"failed: {url} (refused)")):
        assert "S3CRETv4l" not in shown and f"{word}=***" in shown, shown


@pytest.mark.parametrize("place", sorted(_PLACES))
def test_a_plain_parameter_keeps_its_value(place):
    url = _PLACES[place].format(name="lang")
    assert not httpio.holds_credential(url)
    assert httpio.public_url(url) == url == httpio.redact(url)
