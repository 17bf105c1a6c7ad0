"""The `plaza` command line as a client (built on PlazaKit): login, post, feed, logout."""

from __future__ import annotations

import json
import subprocess

from conftest import BINARY, plaza_env


def run_client(plaza, *args: str, credentials, input: str | None = None) -> subprocess.CompletedProcess:
    env = {**plaza_env(), "PLAZA_CREDENTIALS": str(credentials), "PLAZA_SERVER": plaza.url}
    return subprocess.run([str(BINARY), *args], env=env, capture_output=True, text=True, input=input, timeout=60)


def test_login_post_feed_and_logout(plaza, tmp_path):
    plaza.register("ana", password="correct horse battery")
    credentials = tmp_path / "credentials.json"

    wrong = run_client(plaza, "login", "ana", "--password-stdin", credentials=credentials, input="nope nope nope\n")
    assert wrong.returncode == 1 and "Wrong username, email or password." in wrong.stderr, wrong
    assert not credentials.exists()

    ok = run_client(plaza, "login", "ana", "--password-stdin", credentials=credentials, input="correct horse battery\n")
    assert ok.returncode == 0 and "@ana" in ok.stdout, ok
    assert oct(credentials.stat().st_mode & 0o777) == "0o600"
    assert list(json.loads(credentials.read_text())) == [plaza.url], "one token, filed under the server"

    posted = run_client(plaza, "post", "hello from the shell", "--title", "CLI", credentials=credentials)
    assert posted.returncode == 0, posted
    post_id = posted.stdout.split()[0]
    assert posted.stdout.strip().endswith(f"/p/{post_id}")

    feed = run_client(plaza, "feed", "global", "--json", credentials=credentials)
    assert feed.returncode == 0, feed
    posts = [json.loads(line) for line in feed.stdout.splitlines()]
    assert [p["id"] for p in posts] == [post_id] and posts[0]["title"] == "CLI"
    mine = run_client(plaza, "feed", "@ana", credentials=credentials)
    assert "hello from the shell" in mine.stdout and post_id in mine.stdout

    bad = run_client(plaza, "post", "x", "--space", "nowhere", credentials=credentials)
    assert bad.returncode == 1 and "error:" in bad.stderr, bad

    out = run_client(plaza, "logout", credentials=credentials)
    assert out.returncode == 0, out
    assert json.loads(credentials.read_text()) == {}, "the token is forgotten"
    after = run_client(plaza, "feed", "home", credentials=credentials)
    assert after.returncode == 1 and "(unauthorized)" in after.stderr, after
