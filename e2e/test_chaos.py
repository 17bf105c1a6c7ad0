"""Durability under SIGKILL: writers keep posting, commenting, liking and following while the
server is killed with SIGKILL again and again and restarted on the same data; afterwards every
write that was answered 2xx is there, the kept counts agree with the rows, and (SQLite)
`PRAGMA integrity_check` is ok. The same with one app server on PostgreSQL.

A write whose connection was cut by a kill has an unknown outcome: it is not counted either way
(a like or follow whose outcome is unknown is not checked until a later answered write on the
same pair settles it). PLAZA_CHAOS_KILLS sets the number of kills (default 50; `make chaos`
runs 1,000) and PLAZA_CHAOS_SEED the seed for the writers' choices and the kill timing
(default: a new one, printed).
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import subprocess
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from glob import glob
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
import requests

from conftest import PlazaServer, expect

KILLS = int(os.environ.get("PLAZA_CHAOS_KILLS", "50"))
SEED = int(os.environ.get("PLAZA_CHAOS_SEED") or random.SystemRandom().randrange(2**32))
POSTGRES_URL = os.environ.get("PLAZA_TEST_DATABASE_URL", "")
WRITERS = ("ada", "bob", "cyd", "dee")
UP_MIN, UP_MAX = 0.05, 0.4  # seconds the server runs between a restart and the next kill
REQUEST_TIMEOUT = 10


@dataclass
class Ledger:
    """One writer's answered writes. Likes and follows map a target to its last known state
    (True, False, or None when the last write on it had no answer)."""
    posts: list[str] = field(default_factory=list)
    comments: list[tuple[str, str]] = field(default_factory=list)  # (post id, comment id)
    likes: dict[str, bool | None] = field(default_factory=dict)
    follows: dict[str, bool | None] = field(default_factory=dict)
    answered: int = 0
    unanswered: int = 0
    refused: Counter = field(default_factory=Counter)  # non-2xx answers by status


class Writers:
    """One thread per account, each writing as fast as the server answers, until stopped."""

    def __init__(self, server: PlazaServer, tokens: dict[str, str], seed_posts: list[str]):
        self.server = server
        self.tokens = tokens
        self.ledgers = {name: Ledger() for name in tokens}
        self.pool: deque[str] = deque(seed_posts, maxlen=40)  # recent answered posts, the shared targets
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.errors: list[str] = []  # what went wrong inside a writer (an exception there would end it silently)
        self.threads = [threading.Thread(target=self.guarded, args=(name, i), daemon=True) for i, name in enumerate(tokens)]

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def finish(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=2 * REQUEST_TIMEOUT)
            assert not thread.is_alive(), "a writer did not stop"
        assert not self.errors, self.errors

    def guarded(self, name: str, index: int) -> None:
        try:
            self.run(name, index)
        except BaseException as error:  # noqa: BLE001 (reported by finish())
            self.errors.append(f"writer {name}: {error!r}")
            self.stop.set()

    def run(self, name: str, index: int) -> None:
        rng = random.Random(f"{SEED}:writer:{index}")
        ledger = self.ledgers[name]
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {self.tokens[name]}"
        others = [other for other in self.tokens if other != name]
        number = 0
        while not self.stop.is_set():
            number += 1
            with self.lock:
                target = rng.choice(self.pool)
            op = rng.choices(["post", "comment", "like", "unlike", "follow", "unfollow"], [3, 3, 3, 1, 1, 1])[0]
            if op == "post":
                method, path, body = "POST", "/api/v1/posts", {"kind": "text", "body": f"{name} {number}"}
            elif op == "comment":
                method, path, body = "POST", f"/api/v1/posts/{target}/comments", {"body": f"{name} says {number}"}
            elif op in ("like", "unlike"):
                method, path, body = ("PUT" if op == "like" else "DELETE"), f"/api/v1/posts/{target}/like", None
            else:
                target = rng.choice(others)
                method, path, body = ("PUT" if op == "follow" else "DELETE"), f"/api/v1/users/{target}/follow", None
            try:
                response = session.request(method, self.server.url + path, json=body, timeout=REQUEST_TIMEOUT)
            except requests.RequestException:
                # Cut by a kill, or refused while the server restarts: the outcome is unknown.
                ledger.unanswered += 1
                if op in ("like", "unlike"):
                    ledger.likes[target] = None
                elif op in ("follow", "unfollow"):
                    ledger.follows[target] = None
                session.close()
                time.sleep(0.03)
                continue
            if not 200 <= response.status_code < 300:
                ledger.refused[response.status_code] += 1
                if op in ("like", "unlike"):
                    ledger.likes[target] = None  # say a 5xx came after the commit: settle it later
                elif op in ("follow", "unfollow"):
                    ledger.follows[target] = None
                continue
            ledger.answered += 1
            if op == "post":
                post = response.json()["id"]
                ledger.posts.append(post)
                if len(ledger.posts) % 4 == 0:  # a quarter become targets: fewer posts for verify() to read
                    with self.lock:
                        self.pool.append(post)
            elif op == "comment":
                ledger.comments.append((target, response.json()["id"]))
            elif op in ("like", "unlike"):
                ledger.likes[target] = response.json()["liked"]
                if ledger.likes[target] != (op == "like"):
                    raise AssertionError(f"{method} {path} answered {response.text}")
            else:
                ledger.follows[target] = op == "follow"


def all_pages(client, path: str) -> list[dict]:
    items, cursor = [], None
    while True:
        page = expect(client.get(path, params={"limit": 100, **({"cursor": cursor} if cursor else {})}), 200)
        items += page["items"]
        cursor = page["nextCursor"]
        if not cursor:
            return items


def verify(server: PlazaServer, writers: Writers, seed_posts: list[str]) -> dict[str, int]:
    """Every answered write is stored and the kept counts agree with the rows. Returns figures."""
    client = server.client(next(iter(writers.tokens.values())))
    lost: list[str] = []
    checked = Counter()
    stored_posts: dict[str, set[str]] = {}
    for name, ledger in writers.ledgers.items():
        profile = expect(client.get(f"/api/v1/users/{name}"), 200)
        posts = {p["id"] for p in all_pages(client, f"/api/v1/users/{name}/posts")}
        stored_posts[name] = posts
        lost += [f"post {p} by {name}" for p in ledger.posts if p not in posts]
        checked["posts"] += len(ledger.posts)
        assert profile["counts"]["posts"] == len(posts), f"{name}: counts.posts {profile['counts']['posts']}, listed {len(posts)}"
        followers = {u["username"] for u in all_pages(client, f"/api/v1/users/{name}/followers")}
        following = {u["username"] for u in all_pages(client, f"/api/v1/users/{name}/following")}
        assert profile["counts"]["followers"] == len(followers), f"{name}: counts.followers vs {followers}"
        assert profile["counts"]["following"] == len(following), f"{name}: counts.following vs {following}"
        for other, state in ledger.follows.items():
            if state is not None:
                checked["follows"] += 1
                if (other in following) != state:
                    lost.append(f"{name} {'follows' if state else 'unfollowed'} {other}, but the server says otherwise")

    touched = set(seed_posts) | {p for ledger in writers.ledgers.values() for p in ledger.likes} \
        | {p for ledger in writers.ledgers.values() for p, _ in ledger.comments}
    for post in sorted(touched):
        detail = expect(client.get(f"/api/v1/posts/{post}"), 200)
        comments = {c["id"] for c in all_pages(client, f"/api/v1/posts/{post}/comments")}
        likers = {u["username"] for u in all_pages(client, f"/api/v1/posts/{post}/likes")}
        assert detail["counts"]["comments"] == len(comments), f"post {post}: counts.comments {detail['counts']['comments']}, listed {len(comments)}"
        assert detail["counts"]["likes"] == len(likers), f"post {post}: counts.likes {detail['counts']['likes']}, likers {likers}"
        for name, ledger in writers.ledgers.items():
            for commented, comment in ledger.comments:
                if commented == post:
                    checked["comments"] += 1
                    if comment not in comments:
                        lost.append(f"comment {comment} by {name} on {post}")
            state = ledger.likes.get(post)
            if state is not None:
                checked["likes"] += 1
                if (name in likers) != state:
                    lost.append(f"{name} {'liked' if state else 'unliked'} {post}, but the server says otherwise")
    assert not lost, f"{len(lost)} answered writes lost (seed {SEED}): {lost[:20]}"
    return dict(checked)


def integrity_check(database: Path) -> None:
    with sqlite3.connect(database) as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    db.close()


def run_chaos(server: PlazaServer, label: str, after_kill=None) -> None:
    """Accounts and a few posts, then KILLS rounds of: let the writers run a random while,
    SIGKILL, restart; then checks everything answered is there."""
    rng = random.Random(f"{SEED}:kills")
    server.start()
    print(f"\nchaos ({label}): seed {SEED} (PLAZA_CHAOS_SEED), {KILLS} kills (PLAZA_CHAOS_KILLS), server log {server.log_path}")
    tokens = {name: server.register(name)[1].token for name in WRITERS}
    first = server.client(tokens[WRITERS[0]])
    seed_posts = [expect(first.post("/api/v1/posts", json={"kind": "text", "body": f"shared {i}"}), 201)["id"] for i in range(8)]
    writers = Writers(server, tokens, seed_posts)
    started = time.monotonic()
    restarts: list[float] = []
    writers.start()
    try:
        for _ in range(KILLS):
            if writers.stop.is_set():
                break  # a writer failed: finish() says why
            time.sleep(rng.uniform(UP_MIN, UP_MAX))
            server.kill()  # SIGKILL, and waits for the process to end
            if after_kill:
                after_kill()
            restart = time.monotonic()
            server.start()
            restarts.append(time.monotonic() - restart)
        time.sleep(0.5)  # one last stretch of answered writes on the final server
    finally:
        writers.finish()
    chaos_seconds = time.monotonic() - started
    verifying = time.monotonic()
    checked = verify(server, writers, seed_posts)
    verify_seconds = time.monotonic() - verifying
    server.stop()  # a graceful stop after all that: exit 0
    ledgers = writers.ledgers.values()
    refused = sum((ledger.refused for ledger in ledgers), Counter())
    print(f"chaos ({label}): {KILLS} kills in {chaos_seconds:.1f} s (restart {sum(restarts) / max(len(restarts), 1):.2f} s on average, "
          f"max {max(restarts, default=0):.2f} s); writes answered 2xx {sum(l.answered for l in ledgers)}, without an answer "
          f"{sum(l.unanswered for l in ledgers)}, refused {dict(refused)}; checked {checked} in {verify_seconds:.1f} s; lost 0")
    assert not [status for status in refused if status >= 500], f"writes answered 5xx: {dict(refused)}\n{server.log()}"
    assert checked.get("posts", 0) > 0 and checked.get("comments", 0) > 0 and checked.get("likes", 0) > 0


def test_answered_writes_survive_sigkill_on_sqlite(tmp_path: Path):
    data = tmp_path / "data"
    data.mkdir()
    server = PlazaServer(data, tmp_path / "plaza.log", env={"PLAZA_RATE_LIMITS": "off"})
    kills = {"n": 0}

    def check_after_kill():
        # The files exactly as a kill left them, every tenth time (python's sqlite3 recovers the WAL).
        kills["n"] += 1
        if kills["n"] % 10 == 0:
            integrity_check(data / "plaza.sqlite")

    try:
        run_chaos(server, "SQLite", after_kill=check_after_kill)
    finally:
        server.kill()
    integrity_check(data / "plaza.sqlite")


def psql() -> str:
    found = shutil.which("psql") or next(iter(sorted(glob("/usr/lib/postgresql/*/bin/psql"), reverse=True)), None)
    assert found, "psql not found (scripts/install-deps.sh test installs PostgreSQL)"
    return found


@pytest.mark.skipif(not POSTGRES_URL, reason="needs PLAZA_TEST_DATABASE_URL (make test runs this under scripts/with-postgres.sh)")
def test_answered_writes_survive_sigkill_on_postgres(tmp_path: Path):
    url = urlsplit(POSTGRES_URL)
    name = f"chaos_{os.getpid()}_{random.randrange(10**6)}"
    subprocess.run([psql(), POSTGRES_URL, "-qAt", "-v", "ON_ERROR_STOP=1", "-c", f"CREATE DATABASE {name}"], check=True, capture_output=True, timeout=60)
    database = urlunsplit((url.scheme, url.netloc, f"/{name}", url.query, ""))
    data = tmp_path / "data"
    data.mkdir()
    server = PlazaServer(data, tmp_path / "plaza.log", env={"PLAZA_RATE_LIMITS": "off", "PLAZA_DATABASE_URL": database})
    try:
        run_chaos(server, "PostgreSQL")
    finally:
        server.kill()
        subprocess.run([psql(), POSTGRES_URL, "-qAt", "-c", f"DROP DATABASE IF EXISTS {name}"], capture_output=True, timeout=60)
