"""The cost of push (`bench.py --push`): the write scenarios that notify someone (like, comment)
with no push device anywhere, then with every person's browser subscribed to a loopback Web
Push service, alternating; then how fast the queue drains and how soon a push arrives.

The push service here answers 201 to everything and keeps only counts and arrival times (Plaza
encrypts and signs each push as for a real service; nothing is decrypted here)."""

from __future__ import annotations

import http.server
import statistics
import threading
import time

import requests

# A valid P-256 public key and auth secret (RFC 8291's example): what a browser sends.
P256DH = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
AUTH = "BTBZMqHH6r4Tts7J_aSIgg"


class PushSink:
    """A Web Push service on loopback: 201 for every push; the arrival times per path."""

    def __init__(self):
        self.arrivals: list[tuple[float, str]] = []
        lock = threading.Lock()
        arrivals = self.arrivals

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with lock:
                    arrivals.append((time.monotonic(), self.path))
                self.send_response(201)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def count(self) -> int:
        return len(self.arrivals)

    def close(self) -> None:
        self.server.shutdown()

    def wait_quiet(self, quiet: float = 2.0, limit: float = 600) -> float:
        """Waits until no push arrived for `quiet` seconds; the time of the last arrival."""
        started = time.monotonic()
        while time.monotonic() - started < limit:
            last = self.arrivals[-1][0] if self.arrivals else started
            if time.monotonic() - max(last, started) >= quiet:
                return last
            time.sleep(0.2)
        return self.arrivals[-1][0] if self.arrivals else started


def subscribe_all(base: str, tokens: list[str], sink: PushSink) -> list[tuple[str, str]]:
    """One browser subscription per person; (token, device id) pairs, to remove them again."""
    session = requests.Session()
    devices = []
    for i, token in enumerate(tokens):
        r = session.post(f"{base}/api/v1/me/push-devices", headers={"Authorization": token}, timeout=30, json={
            "platform": "webpush", "endpoint": f"{sink.base}/wp/u{i}", "keys": {"p256dh": P256DH, "auth": AUTH}})
        r.raise_for_status()
        devices.append((token, r.json()["id"]))
    return devices


def unsubscribe_all(base: str, devices: list[tuple[str, str]]) -> None:
    session = requests.Session()
    for token, device in devices:
        session.delete(f"{base}/api/v1/me/push-devices/{device}", headers={"Authorization": token},
                       timeout=30).raise_for_status()


def latency(base: str, tokens: list[str], sink: PushSink, samples: int = 50) -> list[float]:
    """Milliseconds from sending a like to its push arriving, one at a time on an idle server:
    person i posts, person i + 1 likes it."""
    out = []
    session = requests.Session()
    for i in range(samples):
        author, liker = tokens[i % len(tokens)], tokens[(i + 1) % len(tokens)]
        post = session.post(f"{base}/api/v1/posts", headers={"Authorization": author}, timeout=30,
                            json={"kind": "text", "body": f"latency probe {i}"})
        post.raise_for_status()
        sink.wait_quiet(quiet=0.3)
        before = sink.count()
        sent = time.monotonic()
        session.put(f"{base}/api/v1/posts/{post.json()['id']}/like", headers={"Authorization": liker},
                    timeout=30).raise_for_status()
        deadline = time.monotonic() + 30
        while sink.count() == before and time.monotonic() < deadline:
            time.sleep(0.0005)
        if sink.count() > before:
            out.append(1000 * (sink.arrivals[before][0] - sent))
    return out


def summary(values: list[float]) -> str:
    if not values:
        return "none arrived"
    values = sorted(values)
    p90 = values[min(len(values) - 1, int(len(values) * 0.9))]
    return f"median {statistics.median(values):.1f} ms, p90 {p90:.1f} ms, max {values[-1]:.1f} ms ({len(values)} samples)"
