#!/usr/bin/env python3
"""How many open streams one Plaza server holds, and how fast a post reaches them.

    python3 bench/streams.py [--bin .build/release/plaza] [--streams 5000] [--users 250] [--posts 20]
                             [--kind plaza|mastodon-sse|mastodon-ws]

Starts `plaza serve` (SQLite, temp dir, loopback), registers an author and --users readers who
follow them, opens --streams connections spread over the readers (asyncio, one process), then the
author posts --posts times, one every --interval seconds. For every post and every stream it
records the time from sending the POST to the event arriving, and prints the count delivered,
latency percentiles and the server's resident memory. The client runs on the same machine, so its
own work is part of the latency it measures.

The streams (--kind): Plaza's `GET /api/v1/stream` (Server-Sent Events, `post.created`), Mastodon's
`GET /api/v1/streaming/user` (Server-Sent Events, `update`) or Mastodon's WebSocket
(`/api/v1/streaming?stream=user`, `update`; aiohttp's client).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(base: str, method: str, path: str, token: str | None = None, body: dict | None = None) -> dict | None:
    request = urllib.request.Request(base + path, method=method, data=json.dumps(body).encode() if body is not None else None)
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=60) as response:
        text = response.read()
        return json.loads(text) if text else None


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Stream:
    def __init__(self, token: str):
        self.token = token
        self.arrivals: dict[str, float] = {}
        self.ready = asyncio.Event()
        self.ended = False

    async def run(self, port: int, kind: str) -> None:
        if kind == "mastodon-ws":
            return await self.run_websocket(port)
        path, created = ("/api/v1/stream", "post.created") if kind == "plaza" else ("/api/v1/streaming/user", "update")
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {self.token}\r\nAccept: text/event-stream\r\n\r\n".encode())
        await writer.drain()
        status = await reader.readline()
        if b" 200 " not in status:
            raise RuntimeError(f"stream refused: {status!r}")
        while (await reader.readline()) not in (b"\r\n", b""):
            pass
        event = None
        loop = asyncio.get_running_loop()
        try:
            while True:
                line = await reader.readline()
                if not line:
                    break
                # Chunk-size lines of the chunked encoding are hex digits only; events are text lines.
                if line.startswith(b"event: "):
                    event = line[7:].strip().decode()
                    if event == "ready":
                        self.ready.set()
                elif line.startswith(b"data: ") and event == created:
                    self.arrivals[json.loads(line[6:])["id"]] = loop.time()
                elif kind != "plaza" and line.startswith(b":"):
                    self.ready.set()  # Mastodon's streams begin with a comment line, not a ready event
        finally:
            self.ended = True
            writer.close()

    async def run_websocket(self, port: int) -> None:
        import aiohttp
        loop = asyncio.get_running_loop()
        try:
            async with aiohttp.ClientSession() as http:
                async with http.ws_connect(f"http://127.0.0.1:{port}/api/v1/streaming?stream=user",
                                           headers={"Authorization": f"Bearer {self.token}"}, heartbeat=None) as ws:
                    self.ready.set()
                    async for message in ws:
                        if message.type != aiohttp.WSMsgType.TEXT:
                            break
                        doc = json.loads(message.data)
                        if doc.get("event") == "update":
                            self.arrivals[json.loads(doc["payload"])["id"]] = loop.time()
        finally:
            self.ended = True


async def measure(args, port: int, tokens: list[str], author: str, server_pid: int) -> None:
    base = f"http://127.0.0.1:{port}"
    streams = [Stream(tokens[i % len(tokens)]) for i in range(args.streams)]
    tasks = []
    started = time.monotonic()
    for i in range(0, len(streams), 200):
        batch = streams[i:i + 200]
        tasks += [asyncio.create_task(s.run(port, args.kind)) for s in batch]
        await asyncio.wait_for(asyncio.gather(*(s.ready.wait() for s in batch)), 60)
    print(f"{len(streams)} streams open in {time.monotonic() - started:.1f} s; server RSS {rss_kib(server_pid) / 1024:.1f} MB")
    loop = asyncio.get_running_loop()
    sent: dict[str, float] = {}
    with ThreadPoolExecutor(1) as pool:
        for i in range(args.posts):
            t0 = loop.time()
            post = await loop.run_in_executor(pool, lambda: call(base, "POST", "/api/v1/posts", author, {"kind": "text", "body": f"bench {i}"}))
            sent[post["id"]] = t0
            await asyncio.sleep(args.interval)
    await asyncio.sleep(2)
    latencies = sorted((s.arrivals[pid] - t0) * 1000 for s in streams for pid, t0 in sent.items() if pid in s.arrivals)
    expected = len(streams) * len(sent)
    ended = sum(s.ended for s in streams)
    print(f"delivered {len(latencies)} of {expected} (streams ended early: {ended}); server RSS {rss_kib(server_pid) / 1024:.1f} MB")
    if latencies:
        q = statistics.quantiles(latencies, n=100)
        print(f"latency from POST sent to event read: p50 {q[49]:.1f} ms, p90 {q[89]:.1f} ms, p99 {q[98]:.1f} ms, max {latencies[-1]:.1f} ms")
    for task in tasks:
        task.cancel()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=".build/release/plaza")
    parser.add_argument("--streams", type=int, default=5000)
    parser.add_argument("--users", type=int, default=250)
    parser.add_argument("--posts", type=int, default=20)
    parser.add_argument("--interval", type=float, default=0.25)
    parser.add_argument("--kind", choices=["plaza", "mastodon-sse", "mastodon-ws"], default="plaza")
    args = parser.parse_args()
    port = free_port()
    data = tempfile.mkdtemp(prefix="plaza-streams.")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLAZA_")}
    env.update(PLAZA_BCRYPT_COST="10", PLAZA_RATE_LIMITS="off", PLAZA_LINK_PREVIEW_PUBLIC="off", PLAZA_LOG_LEVEL="warning",
               PLAZA_STREAMS_PER_USER=str(args.streams), PLAZA_STREAMS_MAX=str(args.streams + 100))
    server = subprocess.Popen([args.bin, "serve", "--port", str(port), "--data-dir", data], env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                call(base, "GET", "/healthz")
                break
            except OSError:
                time.sleep(0.1)
        register = lambda name: call(base, "POST", "/api/v1/auth/register", body={"username": name, "email": f"{name}@example.com", "password": "bench-password"})["token"]
        author = register("author")
        with ThreadPoolExecutor(8) as pool:
            tokens = list(pool.map(register, [f"reader{i}" for i in range(args.users)]))
            list(pool.map(lambda token: call(base, "PUT", "/api/v1/users/author/follow", token), tokens))
        print(f"idle server RSS {rss_kib(server.pid) / 1024:.1f} MB with {args.users} readers following the author")
        asyncio.run(measure(args, port, tokens, author, server.pid))
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
