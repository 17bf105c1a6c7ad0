"""Many HTTP requests to one loopback server, fast: worker processes x threads, keep-alive.

The seeding client must not be the bottleneck, so it avoids `requests` here: each thread of each
worker process owns one persistent `http.client` connection. Results come back in request order.
"""

from __future__ import annotations

import http.client
import json
import threading
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

# A request: (method, path, authorization header value or None, JSON body or None)
Req = tuple[str, str, "str | None", Any]

_state: dict[str, Any] = {}


@dataclass
class Result:
    status: int
    value: Any  # the picked field on success, else the error text (truncated)


def _init_worker(host: str, port: int, threads: int) -> None:
    _state["host"] = host
    _state["port"] = port
    _state["pool"] = ThreadPoolExecutor(max_workers=threads)
    _state["local"] = threading.local()


def _conn(fresh: bool = False) -> http.client.HTTPConnection:
    local = _state["local"]
    if fresh or getattr(local, "conn", None) is None:
        if getattr(local, "conn", None) is not None:
            local.conn.close()
        local.conn = http.client.HTTPConnection(_state["host"], _state["port"], timeout=300)
    return local.conn


def _pick(doc: Any, path: Sequence[str] | None) -> Any:
    if path is None:
        return None
    for key in path:
        doc = doc[key]
    return doc


def _one(req: Req, pick: Sequence[str] | None) -> Result:
    method, path, auth, body = req
    headers = {"Accept": "application/json"}
    payload = None
    if body is not None:
        payload = json.dumps(body, separators=(",", ":")).encode()
        headers["Content-Type"] = "application/json"
    if auth:
        headers["Authorization"] = auth
    for attempt in range(2):  # one retry on a connection the server closed between requests
        conn = _conn(fresh=attempt > 0)
        try:
            conn.request(method, path, body=payload, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            break
        except (ConnectionError, http.client.HTTPException, OSError) as exc:
            if attempt == 1:
                return Result(0, f"{type(exc).__name__}: {exc}")
    if 200 <= resp.status < 300:
        try:
            return Result(resp.status, _pick(json.loads(data), pick) if pick else None)
        except (ValueError, KeyError, TypeError) as exc:
            return Result(-resp.status, f"bad response ({exc}): {data[:300]!r}")
    return Result(resp.status, data[:500].decode("utf-8", "replace"))


def _chunk(reqs: list[Req], pick: Sequence[str] | None) -> list[Result]:
    return list(_state["pool"].map(lambda r: _one(r, pick), reqs))


class Loader:
    """`with Loader(port, processes=2, threads=8) as load: results = load(requests, pick=("id",))`"""

    def __init__(self, port: int, *, processes: int = 2, threads: int = 8, host: str = "127.0.0.1",
                 chunk: int = 256):
        self.chunk = chunk
        self.executor = ProcessPoolExecutor(max_workers=processes, initializer=_init_worker,
                                            initargs=(host, port, threads))
        self.inflight = processes * 2

    def __enter__(self) -> "Loader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.executor.shutdown(wait=True, cancel_futures=True)

    def __call__(self, reqs: Iterable[Req], pick: Sequence[str] | None = None) -> list[Result]:
        """Sends every request; returns the results in order. Bounded: a few chunks in flight."""
        out: list[Result] = []
        pending = []
        batch: list[Req] = []

        def drain(limit: int) -> None:
            while len(pending) > limit:
                out.extend(pending.pop(0).result())

        for req in reqs:
            batch.append(req)
            if len(batch) == self.chunk:
                pending.append(self.executor.submit(_chunk, batch, pick))
                batch = []
                drain(self.inflight)
        if batch:
            pending.append(self.executor.submit(_chunk, batch, pick))
        drain(0)
        return out


def failures(results: list[Result]) -> list[Result]:
    return [r for r in results if not (200 <= r.status < 300)]


def check(what: str, results: list[Result]) -> None:
    bad = failures(results)
    if bad:
        sample = "; ".join(f"{r.status}: {str(r.value)[:200]}" for r in bad[:3])
        raise RuntimeError(f"{what}: {len(bad)} of {len(results)} requests failed ({sample})")
