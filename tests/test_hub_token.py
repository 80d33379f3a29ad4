"""Every source of the Hub token is checked alike before any use: given, HF_TOKEN, the stored login."""

from __future__ import annotations

import pytest

from mvlsib import httpio, hubio

SECRET = "hf_SECRETsecretSECRET123"


@pytest.fixture
def no_env_token(monkeypatch, tmp_path):
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "home"))
    return tmp_path


def _stored_at(monkeypatch, path):
    # huggingface_hub reads HF_TOKEN_PATH once, when imported: point its constant at the file
    from huggingface_hub import constants

    monkeypatch.setenv("HF_TOKEN_PATH", str(path))
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(path))


@pytest.mark.parametrize("pasted", [f"Bearer {SECRET}", f"{SECRET}\u200b", f"{SECRET}\x1b[0m"])
def test_a_stored_login_that_no_header_can_carry_is_refused_by_its_source(no_env_token, monkeypatch, pasted):
    path = no_env_token / "token"
    path.write_text(pasted + "\n", encoding="utf-8")
    _stored_at(monkeypatch, path)
    with pytest.raises(httpio.CredentialError) as err:
        hubio.resolve_token()
    assert "stored Hub login" in str(err.value) and SECRET not in str(err.value)


def test_each_source_in_order(no_env_token, monkeypatch):
    path = no_env_token / "token"
    path.write_text("hf_stored0123456789\n", encoding="utf-8")
    _stored_at(monkeypatch, path)
    assert hubio.resolve_token() == "hf_stored0123456789"
    monkeypatch.setenv("HF_TOKEN", "hf_env0123456789")
    assert hubio.resolve_token() == "hf_env0123456789"
    assert hubio.resolve_token("hf_given0123456789") == "hf_given0123456789"
    with pytest.raises(httpio.CredentialError, match="the token given"):
        hubio.resolve_token("hf_given\n0123")


def test_the_token_the_library_sends_unasked_is_held(no_env_token, monkeypatch):
    """huggingface_hub sends the stored login on every call: an answer echoing it, encoded, is hidden."""
    import base64

    from mvlsib import credentials

    path = no_env_token / "token"
    path.write_text("hf_FILEtokenABCDEFGHIJ123456\n", encoding="utf-8")
    _stored_at(monkeypatch, path)
    credentials.forget_all()
    try:
        with hubio.session("--release org/x"):
            pass
        echoed = base64.b64encode(b"hf_FILEtokenABCDEFGHIJ123456").decode()
        assert echoed not in credentials.hide(f"forbidden: {echoed}")
    finally:
        credentials.forget_all()
