"""Every URL option of both command trees (``options.URL``, and any option named ``--*-url`` or
``--*-endpoint`` whose backend checks it), given an address that is refused and that
carries a password or a secret query value: the refusal is one line that shows neither secret.
Generated over the command trees, so a URL option added later is covered."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from support import cli_tree

from mvlsib.cli import build_cli, eval_cli
from mvlsib.cli.options import UrlType

TREES = {"mvlsib-build": build_cli, "mvlsib-eval": eval_cli}
SECRETS = ("hunter2pw", "SECRET9tok", "SIG77sig")
BAD_URLS = {
    "space": "https://user:hunter2pw@example.com/run?token=SECRET9tok&sig=SIG77sig x",
    "scheme": "ftp://user:hunter2pw@example.com/?token=SECRET9tok&sig=SIG77sig",
    "port": "http://user:hunter2pw@example.com:99999/?token=SECRET9tok&sig=SIG77sig",
    "no-host": "http://user:hunter2pw@/?token=SECRET9tok&sig=SIG77sig",
    "bracketed": "http://user:hunter2pw@[evil]/?token=SECRET9tok&sig=SIG77sig",
}
URL_OPTIONS = [
    (where, p.opts[0])
    for where, cmd in cli_tree.commands()
    for p in cmd.params
    if p.opts[0].startswith("--") and (isinstance(p.type, UrlType) or p.opts[0].endswith(("-url", "-endpoint")))
]


def test_there_are_url_options_to_walk():
    assert {o for _, o in URL_OPTIONS} >= {"--base-url", "--source-url", "--hub-endpoint"}, URL_OPTIONS


@pytest.mark.parametrize(("where", "option"), URL_OPTIONS, ids=lambda v: str(v))
@pytest.mark.parametrize("fault", sorted(BAD_URLS))
def test_a_refused_url_never_shows_its_secrets(where, option, fault):
    tool, *path = where.split()
    result = CliRunner().invoke(TREES[tool], [*path, option, BAD_URLS[fault]])
    assert result.exit_code == 2, result.output
    assert not any(s in result.output for s in SECRETS), result.output
    assert "Traceback" not in result.output


BAD_ENDPOINTS = {
    "ipv6-unclosed": "http://user:hunter2pw@[::1",
    "port-range": "http://user:hunter2pw@127.0.0.1:99999",
    "port-negative": "http://127.0.0.1:-1/?token=SECRET9tok",
    "scheme": "ftp://user:hunter2pw@hub.example.org",
}
COMMANDS = [where for where, _ in cli_tree.commands()]


@pytest.mark.parametrize("where", COMMANDS)
@pytest.mark.parametrize("fault", sorted(BAD_ENDPOINTS))
def test_a_bad_hf_endpoint_is_one_line_on_every_command(where, fault, tmp_path, monkeypatch):
    """huggingface_hub parses HF_ENDPOINT when it is imported: every command says so first, in one line."""
    monkeypatch.chdir(tmp_path)
    tool, *path = where.split()
    result = CliRunner(env={"HF_ENDPOINT": BAD_ENDPOINTS[fault]}).invoke(TREES[tool], path)
    assert result.exit_code == 2, result.output
    assert "HF_ENDPOINT" in result.output and "Traceback" not in result.output
    assert not any(s in result.output for s in SECRETS), result.output
    assert list(tmp_path.iterdir()) == []
    helped = CliRunner(env={"HF_ENDPOINT": BAD_ENDPOINTS[fault]}).invoke(TREES[tool], [*path, "--help"])
    assert helped.exit_code == 0, helped.output
