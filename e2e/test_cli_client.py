"""The `plaza` command line as a client (built on PlazaKit): login, post, feed, logout; posts
made while the server cannot be reached are queued and sent once by `plaza sync`."""

from __future__ import annotations

import json
import socket
import subprocess
import threading

from conftest import BINARY, plaza_env, png


def run_client(plaza, *args: str, credentials, input: str | None = None) -> subprocess.CompletedProcess:
    env = {
        **plaza_env(), "PLAZA_CREDENTIALS": str(credentials), "PLAZA_SERVER": plaza.url,
        "PLAZA_OUTBOX": str(credentials.parent / "outbox"),
    }
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
    kept = json.loads(credentials.read_text())
    assert sorted(kept) == [plaza.url, plaza.url + " user"], "the token and who it is, filed under the server"

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


class Forwarder:
    """A loopback port that forwards to the server while `up`, and refuses connections while down."""

    def __init__(self, target_port: int):
        self.target_port = target_port
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port = probe.getsockname()[1]
        probe.close()
        self.listener: socket.socket | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def up(self) -> None:
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", self.port))
        self.listener.listen(16)
        threading.Thread(target=self._accept, args=(self.listener,), daemon=True).start()

    def down(self) -> None:
        if self.listener:
            # shutdown wakes the thread blocked in accept() and stops listening at once (Linux).
            self.listener.shutdown(socket.SHUT_RDWR)
            self.listener.close()
            self.listener = None

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.target_port))
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


def test_posts_made_offline_are_queued_and_synced_once(plaza, tmp_path):
    _, bea = plaza.register("bea", password="correct horse battery")
    credentials = tmp_path / "credentials.json"
    port = int(plaza.url.rsplit(":", 1)[1])
    forwarder = Forwarder(port)
    forwarder.up()

    class Through:
        url = forwarder.url

    login = run_client(Through, "login", "bea", "--password-stdin", credentials=credentials,
                       input="correct horse battery\n")
    assert login.returncode == 0, login

    # The server cannot be reached: each post is queued, said so, and the exit status is 75.
    forwarder.down()
    photo = tmp_path / "dot.png"
    photo.write_bytes(png(16, 16))
    first = run_client(Through, "post", "written offline", credentials=credentials)
    assert first.returncode == 75 and "offline: 1 write(s) queued" in first.stderr, first
    second = run_client(Through, "post", "with a photo", "--photo", str(photo), credentials=credentials)
    assert second.returncode == 75 and "offline: 3 write(s) queued" in second.stderr, second
    assert bea.get("/api/v1/users/bea/posts").json()["items"] == []

    # Back online: one sync sends them in order, once; a second has nothing to send.
    forwarder.up()
    synced = run_client(Through, "sync", credentials=credentials)
    assert synced.returncode == 0, synced
    posts = bea.get("/api/v1/users/bea/posts").json()["items"]
    assert [p["body"] for p in posts] == ["with a photo", "written offline"]
    assert len(posts[0]["media"]) == 1
    assert [line.split()[0] for line in synced.stdout.splitlines()] == [posts[1]["id"], posts[0]["id"]]
    again = run_client(Through, "sync", credentials=credentials)
    assert again.returncode == 0 and "Nothing to send." in again.stdout, again
    assert len(bea.get("/api/v1/users/bea/posts").json()["items"]) == 2

    # Online, a post goes at once, and one the server refuses is an error, not queued.
    now = run_client(Through, "post", "online now", credentials=credentials)
    assert now.returncode == 0 and now.stdout.split()[0].isdigit(), now
    refused = run_client(Through, "post", "x", "--space", "nowhere", credentials=credentials)
    assert refused.returncode == 1 and "error:" in refused.stderr, refused
    assert "Nothing to send." in run_client(Through, "sync", credentials=credentials).stdout

    # Signed out, nothing is queued: it is an error.
    assert run_client(Through, "logout", credentials=credentials).returncode == 0
    out = run_client(Through, "post", "after logout", credentials=credentials)
    assert out.returncode == 1 and "not signed in" in out.stderr, out
    forwarder.down()
