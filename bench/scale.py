#!/usr/bin/env python3
"""Plaza scaled out, the way an operator runs it: nginx on loopback in front of three
`plaza serve` on one PostgreSQL, media in S3 (moto). See docs/operations.md, "Several app
servers behind nginx".

    make scale                                   # scripts/with-postgres.sh python3 bench/scale.py --postgres URL
    python3 bench/scale.py --postgres URL --quick --no-wrk   # the short form e2e/test_scale.py runs

Phases, each reported with its figures:
1. throughput: the benchmark's read and write mix with wrk through nginx (3 servers, PostgreSQL),
   then straight at one server on PostgreSQL, then at one server on SQLite (same data);
2. kill: load through nginx and live streams; one server gets SIGKILL; only requests that were in
   flight on it may fail (at most one per load thread), and every stream reconnects through nginx
   and resumes with Last-Event-ID, missing no event;
3. rolling restart: each server in turn gets SIGTERM, drains, starts again, under load: 0 failed
   requests, 0 lost events;
4. limits: the servers restarted with rate limits on; the sign-up budget and the sign-in throttle
   hold across the three servers, and clients' addresses arrive through X-Forwarded-For from the
   trusted proxy (and only from it).

Everything listens on loopback: nginx on 127.0.0.1, talking to Plaza from 127.0.0.2 (the only
trusted proxy); clients of phase 4 connect from 127.0.0.3. Exit status 1 when a check fails.
"""

from __future__ import annotations

import argparse
import datetime as dt
import http.client
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import servers, wrk  # noqa: E402
from benchlib.dataset import Dataset, Sizes, PASSWORD  # noqa: E402
from benchlib.seed import PlazaSeeder  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "e2e"))
from sse import EventStream  # noqa: E402

HOST = "127.0.0.1"
PROXY_ADDRESS = "127.0.0.2"  # nginx's source address towards Plaza: the one trusted proxy
CLIENT_ADDRESS = "127.0.0.3"  # phase 4's clients
RESULTS = servers.BENCH_DIR / "results"


def log(message: str) -> None:
    print(f"scale: {message}", flush=True)


def free_port() -> int:
    return servers.free_port()


# ---- the pieces ---------------------------------------------------------------------------

class PlazaNode(servers.Plaza):
    """One app server; `rate_limits` decides `--rate-limits`."""

    def __init__(self, binary: Path, data_dir: Path, node: int, env: dict[str, str], rate_limits: bool = False):
        super().__init__(binary, data_dir, bcrypt_cost=10, extra_env=env)
        self.name = f"plaza-{node}"
        self.log_path = data_dir.parent / f"{self.name}.log"
        self.rate_limits = rate_limits

    def command(self) -> list[str]:
        return [str(self.binary), "serve", "--host", HOST, "--port", str(self.port), "--data-dir", str(self.data_dir),
                "--rate-limits", "on" if self.rate_limits else "off"]

    def kill(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None:
            proc.kill()
            proc.wait(timeout=10)


class Moto:
    def __init__(self, workdir: Path):
        self.port = free_port()
        self.log = open(workdir / "moto.log", "ab")
        self.proc = subprocess.Popen(["moto_server", "-H", HOST, "-p", str(self.port)], stdout=self.log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if requests.get(self.url + "/moto-api/", timeout=1).ok:
                    return
            except requests.RequestException:
                time.sleep(0.1)
        raise RuntimeError("moto_server did not start")

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)
        self.log.close()


NGINX_CONF = """\
# Written by bench/scale.py; the configuration docs/operations.md describes.
worker_processes 1;
daemon off;
pid {work}/nginx.pid;
error_log {work}/nginx-error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {work}/nginx-body;
    proxy_temp_path {work}/nginx-proxy;
    fastcgi_temp_path {work}/nginx-fastcgi;
    uwsgi_temp_path {work}/nginx-uwsgi;
    scgi_temp_path {work}/nginx-scgi;
    client_max_body_size 110m;

    upstream plaza {{
{upstreams}
    }}
    map $http_upgrade $connection_upgrade {{ default upgrade; "" ""; }}

    server {{
        listen {host}:{port};
        proxy_http_version 1.1;
        proxy_set_header Host $host;
        proxy_set_header X-Forwarded-For $remote_addr;
        proxy_set_header X-Forwarded-Proto $scheme;
        proxy_bind {proxy};
        proxy_connect_timeout 2s;
        # A server that refuses the connection (stopping, or dead) is skipped; a request already
        # sent is never sent twice (POST stays with the server that got it).
        proxy_next_upstream error timeout;

        location / {{
            proxy_pass http://plaza;
            proxy_read_timeout 60s;
        }}
        # Streams: never buffered, held open, and WebSocket upgrades passed on.
        location ~ ^/api/v1/(stream|streaming) {{
            proxy_pass http://plaza;
            proxy_buffering off;
            proxy_cache off;
            proxy_read_timeout 1h;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
        }}
    }}
}}
"""


class Nginx:
    def __init__(self, workdir: Path, upstream_ports: list[int]):
        self.port = free_port()
        self.binary = shutil.which("nginx") or "/usr/sbin/nginx"
        self.workdir, self.upstream_ports = workdir, upstream_ports
        self.conf = workdir / "nginx.conf"
        self.write_conf(down=set())
        self.log = open(workdir / "nginx.log", "ab")
        self.proc = subprocess.Popen([self.binary, "-c", str(self.conf), "-p", str(workdir)], stdout=self.log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if requests.get(self.base + "/healthz", timeout=1).status_code == 200:
                    return
            except requests.RequestException:
                pass
            if self.proc.poll() is not None:
                raise RuntimeError("nginx exited: " + (workdir / "nginx-error.log").read_text(errors="replace")[-2000:])
            time.sleep(0.1)
        raise RuntimeError("nginx did not answer")

    @property
    def base(self) -> str:
        return f"http://{HOST}:{self.port}"

    def write_conf(self, down: set[int]) -> None:
        upstreams = "\n".join(
            f"        server {HOST}:{p} max_fails=1 fail_timeout=2s{' down' if p in down else ''};"
            for p in self.upstream_ports)
        self.conf.write_text(NGINX_CONF.format(work=self.workdir, upstreams=upstreams, host=HOST, port=self.port,
                                               proxy=PROXY_ADDRESS))

    def workers(self) -> set[int]:
        """The master's worker processes that take new connections (not those shutting down)."""
        pids = set()
        for entry in Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split():
            try:
                if Path(f"/proc/{entry}/cmdline").read_bytes().rstrip(b"\0") == b"nginx: worker process":
                    pids.add(int(entry))
            except OSError:
                continue
        return pids

    def set_down(self, down: set[int]) -> None:
        """Takes the servers on these ports out of rotation (or puts them back): a graceful reload,
        waited for until only new workers take connections."""
        before = self.workers()
        self.write_conf(down)
        self.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 30
        while (workers := self.workers()) & before or not workers:
            if time.monotonic() > deadline:
                raise RuntimeError("nginx did not reload")
            time.sleep(0.05)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)
        self.log.close()


def create_database(admin_url: str, name: str) -> str:
    """A fresh database on the PostgreSQL of `admin_url`; returns its URL."""
    subprocess.run(["psql", admin_url, "-v", "ON_ERROR_STOP=1", "-qc", f'CREATE DATABASE "{name}"'], check=True,
                   capture_output=True)
    parts = urlsplit(admin_url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, ""))


# ---- load -----------------------------------------------------------------------------------

@dataclass
class Mix:
    """The read and write mix: 80% reads (feeds, a post, its comments), 20% writes (comments, likes, posts)."""
    lines: list[tuple[str, str, str, str]]

    @staticmethod
    def make(seeded, rng: random.Random, count: int = 4000) -> "Mix":
        tokens, posts = seeded.tokens, seeded.post_ids
        lines = []
        for _ in range(count):
            token = rng.choice(tokens)
            post = rng.choice(posts)
            roll = rng.random()
            if roll < 0.25:
                lines.append(("GET", "/api/v1/feed/global?limit=20", "", ""))
            elif roll < 0.45:
                lines.append(("GET", "/api/v1/feed/home?limit=20", token, ""))
            elif roll < 0.65:
                lines.append(("GET", f"/api/v1/posts/{post}", token, ""))
            elif roll < 0.80:
                lines.append(("GET", f"/api/v1/posts/{post}/comments?limit=20", "", ""))
            elif roll < 0.90:
                body = json.dumps({"body": f"scale comment {rng.randrange(10**9)}"})
                lines.append(("POST", f"/api/v1/posts/{post}/comments", token, body))
            elif roll < 0.96:
                lines.append(("PUT", f"/api/v1/posts/{post}/like", token, ""))
            else:
                body = json.dumps({"kind": "text", "body": f"scale post {rng.randrange(10**9)}"})
                lines.append(("POST", "/api/v1/posts", token, body))
        return Mix(lines)


@dataclass
class Failure:
    at: float  # time.monotonic()
    request: str
    outcome: str


@dataclass
class LoadResult:
    requests: int = 0
    failures: list[Failure] = field(default_factory=list)
    # Requests sent again on a new connection because the kept-alive one was closed before any
    # answer (as browsers and HTTP libraries do: nginx closes idle connections when it reloads).
    retried: int = 0


class Client:
    """One kept-alive connection to nginx. Like a browser, it sends a request once more on a new
    connection when the kept-alive one was closed before any answer (nginx closes idle connections
    when it reloads: the request never reached it)."""

    def __init__(self, port: int):
        self.port = port
        self.conn = http.client.HTTPConnection(HOST, port, timeout=30)
        self.retried = 0

    def request(self, method: str, path: str, headers: dict, body: str | None) -> tuple[int, bytes]:
        """(status, body); raises on a failure that is not a closed kept-alive connection."""
        for attempt in (1, 2):
            reused = self.conn.sock is not None
            try:
                self.conn.request(method, path, body=body, headers=headers)
                response = self.conn.getresponse()
                data = response.read()
                if response.getheader("Connection", "").lower() == "close":
                    self.conn.close()
                return response.status, data
            except (OSError, http.client.HTTPException) as error:
                self.conn.close()
                self.conn = http.client.HTTPConnection(HOST, self.port, timeout=30)
                closed = isinstance(error, (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError))
                if attempt == 1 and reused and closed:
                    self.retried += 1
                    continue
                raise
        raise AssertionError("unreachable")


class Load:
    """`threads` clients (`Client`) sending the mix through nginx, one request at a time each, until
    stopped; every answer that is not 2xx, and every error, is a failure (with when it happened)."""

    def __init__(self, base: str, mix: Mix, threads: int):
        self.port = urlsplit(base).port
        self.mix, self.threads = mix, threads
        self.stop_flag = threading.Event()
        self.result = LoadResult()
        self.lock = threading.Lock()
        self.workers = [threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(threads)]

    def __enter__(self) -> "Load":
        for worker in self.workers:
            worker.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop_flag.set()
        for worker in self.workers:
            worker.join(timeout=30)

    def _run(self, index: int) -> None:
        lines = self.mix.lines
        i = index * (len(lines) // self.threads)
        client = Client(self.port)
        while not self.stop_flag.is_set():
            method, path, auth, body = lines[i % len(lines)]
            i += 1
            headers = {"Accept": "application/json"}
            if auth:
                headers["Authorization"] = auth
            if body:
                headers["Content-Type"] = "application/json"
            outcome = None
            retried = client.retried
            try:
                status, _ = client.request(method, path, headers, body or None)
                if not 200 <= status < 300:
                    outcome = f"{status}"
            except (OSError, http.client.HTTPException) as error:
                outcome = f"{type(error).__name__}: {error}"
            with self.lock:
                self.result.requests += 1
                self.result.retried += client.retried - retried
                if outcome:
                    self.result.failures.append(Failure(time.monotonic(), f"{method} {path}", outcome))


class Subscriber:
    """A person's stream (`/api/v1/stream`, read by e2e/sse.py's `EventStream`) through nginx that
    reconnects with Last-Event-ID whenever it ends, and records the ids of the posts it was told of."""

    def __init__(self, base: str, token: str):
        self.base, self.token = base, token.removeprefix("Bearer ")
        self.seen: set[str] = set()
        self.reconnects = 0
        self.last_id: str | None = None
        self.stream: EventStream | None = None
        self.ready = threading.Event()
        self.stop_flag = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop_flag.is_set():
            try:
                self.stream = EventStream(self.base, self.token, last_event_id=self.last_id)
            except requests.RequestException:
                self.stream = None
            if self.stream is not None and self.stream.status == 200:
                while (event := self.stream.events.get()) is not None:
                    if event.event == "ready":
                        self.ready.set()
                    elif event.event == "post.created":
                        self.seen.add(event.json()["id"])
                    if event.id:
                        self.last_id = event.id
            if self.stream is not None:
                self.stream.close()
            if not self.stop_flag.is_set():
                self.reconnects += 1
                time.sleep(0.1)

    def close(self) -> None:
        self.stop_flag.set()
        if self.stream is not None:
            self.stream.close()


class Poster:
    """Posts steadily through nginx as one person; keeps the ids of the posts answered 201."""

    def __init__(self, base: str, token: str, interval: float = 0.05):
        self.base, self.token, self.interval = base, token, interval
        self.created: list[str] = []
        self.failed = 0
        self.stop_flag = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        client = Client(urlsplit(self.base).port)
        headers = {"Authorization": self.token, "Content-Type": "application/json"}
        n = 0
        while not self.stop_flag.is_set():
            n += 1
            try:
                status, data = client.request("POST", "/api/v1/posts", headers,
                                              json.dumps({"kind": "text", "body": f"live {n}"}))
                if status == 201:
                    self.created.append(json.loads(data)["id"])
                else:
                    self.failed += 1
            except (OSError, http.client.HTTPException):
                self.failed += 1
            time.sleep(self.interval)

    def close(self) -> None:
        self.stop_flag.set()
        self.thread.join(timeout=30)


# ---- the run ----------------------------------------------------------------------------------

class Run:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.work = Path(args.workdir or tempfile.mkdtemp(prefix="plaza-scale-"))
        self.work.mkdir(parents=True, exist_ok=True)
        self.binary = self.work / "plaza"
        shutil.copy2(args.plaza_bin, self.binary)
        self.report: list[str] = []
        self.problems: list[str] = []
        self.nodes: list[PlazaNode] = []
        self.extra: list = []  # other processes to stop

    def check(self, ok: bool, what: str) -> None:
        log(("ok: " if ok else "FAILED: ") + what)
        if not ok:
            self.problems.append(what)

    def start_nodes(self, rate_limits: bool) -> None:
        for node in self.nodes:
            node.rate_limits = rate_limits
            node.start()

    def setup(self) -> None:
        args = self.args
        self.moto = Moto(self.work)
        self.extra.append(self.moto)
        bucket = "plaza-scale"
        requests.put(f"{self.moto.url}/{bucket}", timeout=10).raise_for_status()
        database = create_database(args.postgres, f"plaza_scale_{os.getpid()}_{int(time.time())}")
        for node in (1, 2, 3):
            env = {
                "PLAZA_DATABASE_URL": database, "PLAZA_NODE_ID": str(node),
                "PLAZA_MEDIA_S3_ENDPOINT": self.moto.url, "PLAZA_MEDIA_S3_BUCKET": bucket,
                "PLAZA_MEDIA_S3_ACCESS_KEY_ID": "scale", "PLAZA_MEDIA_S3_SECRET_ACCESS_KEY": "scale",
                "PLAZA_TRUSTED_PROXIES": PROXY_ADDRESS,
                "PLAZA_LINK_PREVIEW_PUBLIC": "off", "PLAZA_PUSH_PUBLIC": "off",
            }
            self.nodes.append(PlazaNode(self.binary, self.work / f"data-{node}", node, env))
        self.start_nodes(rate_limits=False)
        self.nginx = Nginx(self.work, [n.port for n in self.nodes])
        self.extra.append(self.nginx)
        log(f"nginx on {self.nginx.base} in front of {', '.join(n.base for n in self.nodes)}; S3 on {self.moto.url}")

        sizes = Sizes(users=args.users, posts=args.posts, follows=min(args.follows, args.users - 1),
                      comments=args.comments)
        self.dataset = Dataset(sizes, seed=42)
        self.seeded = self.seed(self.nginx, "Plaza via nginx")
        subprocess.run(["psql", database, "-qc", "ANALYZE"], check=True, capture_output=True)
        self.mix = Mix.make(self.seeded, random.Random(7))

    def seed(self, target, system: str):
        seeder = PlazaSeeder(target, self.dataset, processes=2, threads=8, system=system)
        try:
            seeder.users_and_follows()
            seeder.posts(0, self.dataset.sizes.posts)
            seeder.comments()
        finally:
            seeder.close()
        return seeder.seeded

    # phase 1
    def throughput(self) -> None:
        args = self.args
        if args.no_wrk:
            self.report.append("## Throughput\n\nNot measured (`--no-wrk`).\n")
            return
        requests_file = wrk.write_requests(self.work / "mix.tsv", self.mix.lines)
        settings = wrk.WrkSettings(threads=2, timeout=10)
        rows = []

        def measure(label: str, base: str, pid: int | None) -> None:
            wrk.run(base, "rotate.lua", wrk.rotate_args(requests_file, 2), settings, connections=args.connections,
                    duration=3)
            result = wrk.run(base, "rotate.lua", wrk.rotate_args(requests_file, 2), settings,
                             connections=args.connections, duration=args.duration, pid=pid)
            errors = result.non2xx + result.socket_errors
            rows.append(f"| {label} | {result.rps:,.0f} | {result.p50_ms:.1f} | {result.p99_ms:.1f} | {errors} |")
            log(f"{label}: {result.rps:,.0f} req/s, p99 {result.p99_ms:.1f} ms, {errors} errors")
            self.check(errors == 0, f"{label}: no failed request in the mix ({errors})")

        measure("nginx → 3 servers, PostgreSQL, S3", self.nginx.base, None)
        measure("1 server, PostgreSQL (direct)", self.nodes[0].base, self.nodes[0].pid)
        # The same mix on SQLite: its own server, seeded with the same dataset.
        sqlite = servers.Plaza(self.binary, self.work / "data-sqlite", 10)
        sqlite.start()
        self.extra.append(sqlite)
        try:
            seeded = self.seed(sqlite, "Plaza on SQLite")
            lines = Mix.make(seeded, random.Random(7)).lines
            wrk.write_requests(requests_file, lines)
            measure("1 server, SQLite (direct)", sqlite.base, sqlite.pid)
        finally:
            sqlite.stop()
            self.extra.remove(sqlite)
        wrk.write_requests(requests_file, self.mix.lines)
        self.report.append(
            "## Throughput: the read and write mix\n\n"
            f"wrk, {args.connections} connections, {args.duration} s after 3 s of warm-up; 80% reads (global and "
            "home feeds, a post, its comments), 20% writes (comments, likes, posts).\n\n"
            "| target | req/s | p50 ms | p99 ms | failed |\n|---|---:|---:|---:|---:|\n" + "\n".join(rows) + "\n")

    def subscribers(self) -> tuple[list[Subscriber], Poster]:
        """Streams of a few people who follow the poster, through nginx, and the poster."""
        poster_token = self.seeded.tokens[0]
        poster_name = self.seeded.user_ids[0]
        subs = []
        for token in self.seeded.tokens[1:1 + self.args.streams]:
            requests.put(f"{self.nginx.base}/api/v1/users/{poster_name}/follow", headers={"Authorization": token},
                         timeout=30).raise_for_status()
            subs.append(Subscriber(self.nginx.base, token))
        for sub in subs:
            if not sub.ready.wait(20):
                raise RuntimeError("a stream did not start")
        return subs, Poster(self.nginx.base, poster_token)

    def lost_events(self, subs: list[Subscriber], poster: Poster) -> int:
        """Posts answered 201 that some stream never told of (waits up to 10 s for the last ones)."""
        created = set(poster.created)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(created - s.seen for s in subs):
            time.sleep(0.2)
        return sum(len(created - s.seen) for s in subs)

    # phase 2
    def kill_one(self) -> None:
        args = self.args
        subs, poster = self.subscribers()
        victim = self.nodes[1]
        with Load(self.nginx.base, self.mix, args.load_threads) as load:
            time.sleep(args.phase_seconds / 2)
            killed_at = time.monotonic()
            victim.kill()
            log(f"SIGKILL {victim.name}")
            time.sleep(args.phase_seconds / 2)
        poster.close()
        lost = self.lost_events(subs, poster)
        reconnects = sum(s.reconnects for s in subs)
        for sub in subs:
            sub.close()
        victim.start()
        failures = load.result.failures
        late = [f for f in failures if f.at - killed_at > 1.0]
        self.check(len(failures) <= args.load_threads,
                   f"kill: failed requests ({len(failures)}) at most the {args.load_threads} that can be in flight")
        self.check(not late, f"kill: no request fails later than 1 s after the kill ({len(late)})")
        self.check(lost == 0, f"kill: streams missed no event ({lost} missed, {reconnects} reconnections)")
        self.check(poster.failed <= 1, f"kill: the poster's failed posts ({poster.failed}) at most its one in flight")
        kinds = sorted({f.outcome for f in failures})
        self.report.append(
            "## One server killed (SIGKILL) under load\n\n"
            f"{args.load_threads} clients sending the mix through nginx, {len(subs)} live streams through nginx, "
            f"one person posting every 50 ms; `{victim.name}` got SIGKILL half-way through {args.phase_seconds} s.\n\n"
            f"- requests: {load.result.requests:,}; failed: **{len(failures)}** ({', '.join(kinds) or 'none'}), all "
            f"within 1 s of the kill: {'yes' if not late else 'no'}\n"
            f"- posts made during the run: {len(poster.created)} (failed: {poster.failed}); stream events lost: "
            f"**{lost}**; reconnections through nginx with Last-Event-ID: {reconnects}\n")

    # phase 3
    def rolling_restart(self, through_nginx: bool) -> None:
        """Each server in turn: taken out of nginx (`through_nginx`), SIGTERM, drained, started,
        put back. Without taking it out of nginx first, a request nginx sends in the instant the
        server's listener closes can fail, and a POST is not retried: that variant is measured, not
        checked."""
        args = self.args
        subs, poster = self.subscribers()
        drains = []
        with Load(self.nginx.base, self.mix, args.load_threads) as load:
            time.sleep(1)
            for node in self.nodes:
                if through_nginx:
                    self.nginx.set_down({node.port})
                started = time.monotonic()
                node.stop(timeout=60)
                drains.append(time.monotonic() - started)
                node.start()
                if through_nginx:
                    self.nginx.set_down(set())
                log(f"restarted {node.name} (stopped in {drains[-1]:.1f} s)")
                time.sleep(1)
        poster.close()
        lost = self.lost_events(subs, poster)
        reconnects = sum(s.reconnects for s in subs)
        for sub in subs:
            sub.close()
        failures = load.result.failures
        name = "rolling restart" + (" (out of nginx first)" if through_nginx else " (SIGTERM alone)")
        if through_nginx:
            self.check(not failures, f"{name}: 0 failed requests ({len(failures)}: "
                       f"{sorted({f.outcome for f in failures})[:5]})")
            self.check(poster.failed == 0, f"{name}: every post answered ({poster.failed} failed)")
        self.check(lost == 0, f"{name}: streams missed no event ({lost} missed)")
        how = ("taken out of nginx (`down`, graceful reload), SIGTERM, graceful drain (in-flight requests finish, "
               "streams end), start, healthy, back into nginx" if through_nginx else
               "SIGTERM while nginx still sends it requests, graceful drain, start, healthy")
        self.report.append(
            f"## Rolling restart under load: {'out of nginx first' if through_nginx else 'SIGTERM alone'}\n\n"
            f"Each server in turn: {how}; then the next.\n\n"
            f"- requests: {load.result.requests:,}; failed: **{len(failures)}** "
            f"({', '.join(sorted({f.outcome + ' ' + f.request.split(' ')[0] for f in failures})) or 'none'}); "
            f"sent again after nginx closed a kept-alive connection: {load.result.retried}\n"
            f"- drain (SIGTERM to exit): {', '.join(f'{d:.1f} s' for d in drains)}\n"
            f"- posts made during the run: {len(poster.created)} (failed: {poster.failed}); stream events lost: "
            f"**{lost}**; reconnections: {reconnects}\n")

    # phase 4
    def limits(self) -> None:
        for node in self.nodes:
            node.stop()
        self.start_nodes(rate_limits=True)

        def call(method: str, path: str, body: dict | None = None, token: str | None = None,
                 port: int | None = None, source: str = CLIENT_ADDRESS, headers: dict | None = None):
            conn = http.client.HTTPConnection(HOST, port or self.nginx.port, timeout=30, source_address=(source, 0))
            all_headers = {"Content-Type": "application/json", **(headers or {})}
            if token:
                all_headers["Authorization"] = "Bearer " + token
            conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=all_headers)
            response = conn.getresponse()
            text = response.read()
            conn.close()
            return response.status, (json.loads(text) if text else None)

        # Sign-ups: 10 per address, whichever server takes them.
        stamp = int(time.time()) % 100000
        statuses = []
        tokens = []
        for i in range(12):
            status, body = call("POST", "/api/v1/auth/register", {
                "username": f"lim{stamp}x{i}", "email": f"lim{stamp}x{i}@example.com", "password": PASSWORD})
            statuses.append(status)
            if status == 201:
                tokens.append(body["token"])
        self.check(statuses == [201] * 10 + [429] * 2, f"limits: sign-ups from one address across 3 servers {statuses}")
        # The client's address came through X-Forwarded-For from the trusted proxy.
        status, sessions = call("GET", "/api/v1/me/sessions", token=tokens[0])
        ips = {s.get("ip") for s in (sessions or {}).get("items", [])}
        self.check(status == 200 and ips == {CLIENT_ADDRESS}, f"limits: the session's address is the client's {ips}")
        # A client talking to a server directly cannot pick its address with the header.
        status, body = call("POST", "/api/v1/auth/register", {
            "username": f"direct{stamp}", "email": f"direct{stamp}@example.com", "password": PASSWORD},
            port=self.nodes[0].port, source=HOST, headers={"X-Forwarded-For": "203.0.113.9"})
        direct_ips = set()
        if status == 201:
            _, sessions = call("GET", "/api/v1/me/sessions", token=body["token"], port=self.nodes[0].port, source=HOST)
            direct_ips = {s.get("ip") for s in (sessions or {}).get("items", [])}
        self.check(direct_ips == {HOST}, f"limits: a forged X-Forwarded-For from an untrusted peer is ignored {direct_ips}")
        # Sign-in throttle: wrong passwords for one account, spread over the servers by nginx.
        target = f"lim{stamp}x0"
        throttled_after = None
        for attempt in range(1, 13):
            status, _ = call("POST", "/api/v1/auth/login", {"login": target, "password": "wrong password 1"})
            if status == 429:
                throttled_after = attempt - 1
                break
        self.check(throttled_after is not None and throttled_after <= 5,
                   f"limits: the sign-in throttle holds across servers (locked after {throttled_after} failures)")
        self.report.append(
            "## Limits and client addresses across servers\n\n"
            "The three servers restarted with rate limits on; every request through nginx, which connects from "
            f"{PROXY_ADDRESS} (the only trusted proxy) and sets `X-Forwarded-For` to the client's address; the "
            f"clients connect from {CLIENT_ADDRESS}.\n\n"
            f"- sign-ups from one address: {statuses.count(201)} accepted, then {statuses.count(429)} refused (429): "
            "the budget of 10 is shared, not 10 per server\n"
            f"- wrong passwords for one account: refused (429) after {throttled_after} failures\n"
            f"- the session's recorded address: {', '.join(sorted(i or '?' for i in ips))}; a client with a forged "
            f"`X-Forwarded-For` straight at a server: {', '.join(sorted(i or '?' for i in direct_ips))}\n")

    def stop_all(self) -> None:
        for node in self.nodes:
            try:
                node.stop()
            except Exception as error:  # noqa: BLE001 - stopping the rest matters more
                log(f"stopping {node.name}: {error}")
        for thing in reversed(self.extra):
            try:
                thing.stop()
            except Exception as error:  # noqa: BLE001
                log(f"stopping {thing}: {error}")

    def write_report(self) -> str:
        args = self.args
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=servers.REPO).stdout.strip()
        header = (
            f"# Plaza scaled out: nginx, 3 app servers, PostgreSQL, S3\n\n"
            f"{dt.datetime.now():%Y-%m-%d %H:%M}, commit {commit}, {os.cpu_count()} cores (everything on this one "
            f"machine: nginx, the servers, PostgreSQL, moto and the load). Dataset: {args.users} users, {args.posts:,} "
            f"posts, {args.comments:,} comments.\n\n"
            + ("**Result: every check passed.**\n" if not self.problems else
               "**Result: failed checks:**\n" + "".join(f"- {p}\n" for p in self.problems))
        )
        text = header + "\n" + "\n".join(self.report)
        if not args.quick:
            RESULTS.mkdir(exist_ok=True)
            (RESULTS / f"scale-{dt.datetime.now():%Y-%m-%d-%H%M}.md").write_text(text)
            (RESULTS / "scale-latest.md").write_text(text)
        return text


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--postgres", required=True, metavar="URL", help="a PostgreSQL server (a database is made on it)")
    ap.add_argument("--plaza-bin", type=Path, default=servers.REPO / ".build" / "release" / "plaza")
    ap.add_argument("--users", type=int, default=300)
    ap.add_argument("--posts", type=int, default=10_000)
    ap.add_argument("--follows", type=int, default=20)
    ap.add_argument("--comments", type=int, default=2_500)
    ap.add_argument("--duration", type=int, default=15, help="seconds per throughput run")
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--load-threads", type=int, default=16, help="clients of the kill and restart phases")
    ap.add_argument("--streams", type=int, default=5, help="live streams through nginx in those phases")
    ap.add_argument("--phase-seconds", type=float, default=10, help="length of the kill phase")
    ap.add_argument("--no-wrk", action="store_true", help="skip the throughput phase (wrk)")
    ap.add_argument("--quick", action="store_true", help="small sizes, no report file (the e2e test)")
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args(argv)
    if args.quick:
        args.users, args.posts, args.comments, args.follows = 30, 300, 100, 5
        args.duration, args.load_threads, args.streams, args.phase_seconds = 3, 6, 3, 4
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if not shutil.which("nginx") and not Path("/usr/sbin/nginx").exists():
        log("nginx is missing: scripts/install-deps.sh test installs it")
        return 2
    run = Run(args)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        run.setup()
        run.throughput()
        run.kill_one()
        run.rolling_restart(through_nginx=True)
        if not args.quick:
            run.rolling_restart(through_nginx=False)
        run.limits()
    finally:
        run.stop_all()
        if not args.workdir:
            shutil.rmtree(run.work, ignore_errors=True)
    print(run.write_report())
    return 1 if run.problems else 0


if __name__ == "__main__":
    sys.exit(main())
