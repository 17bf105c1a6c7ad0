"""Realtime against the real binary: a stream that survives a server restart, and (with
PostgreSQL) two `plaza serve` processes on one database sharing events through LISTEN/NOTIFY."""

from __future__ import annotations

import os
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from conftest import PlazaServer, expect
from sse import EventStream

POSTGRES_URL = os.environ.get("PLAZA_TEST_DATABASE_URL", "")


def test_a_stream_resumes_after_the_server_restarts(plaza):
    ana, ana_client = plaza.register("ana")
    ben, ben_client = plaza.register("ben")
    expect(ben_client.put("/api/v1/users/ana/follow"), 200)
    stream = EventStream(plaza.url, ben_client.token)
    assert stream.status == 200
    assert stream.next().event == "ready"
    expect(ana_client.post("/api/v1/posts", json={"kind": "text", "body": "before the restart"}), 201)
    seen = stream.next()
    assert seen.event == "post.created" and seen.json()["body"] == "before the restart"
    # A graceful stop ends the open stream (stop() asserts exit 0 within 10 s).
    plaza.stop()
    assert stream.next() is None
    plaza.start()
    ana_client.server = ben_client.server = plaza
    missed = [expect(ana_client.post("/api/v1/posts", json={"kind": "text", "body": f"missed {i}"}), 201)["id"] for i in range(3)]
    resumed = EventStream(plaza.url, ben_client.token, last_event_id=seen.id)
    events = resumed.take(4)
    assert [e.event for e in events] == ["post.created"] * 3 + ["ready"]
    assert [e.json()["id"] for e in events[:3]] == missed
    assert resumed.quiet()
    resumed.close()


@pytest.mark.skipif(not POSTGRES_URL, reason="needs PLAZA_TEST_DATABASE_URL (make test runs this under scripts/with-postgres.sh)")
def test_two_servers_on_one_postgres_share_events(tmp_path: Path):
    url = urlsplit(POSTGRES_URL)
    database = urlunsplit((url.scheme, url.netloc, url.path, url.query, ""))
    servers = []
    for name in ("a", "b"):
        data = tmp_path / name
        data.mkdir()
        servers.append(PlazaServer(data, tmp_path / f"{name}.log", env={"PLAZA_DATABASE_URL": database, "PLAZA_NODE_ID": str(len(servers) + 1)}))
    a, b = servers
    for server in servers:
        server.start()
    try:
        ana, ana_on_a = a.register("ana")
        ben, ben_on_a = a.register("ben")
        ben_on_b = b.client(ben_on_a.token)  # one database: the session is valid on both
        expect(ben_on_b.put("/api/v1/users/ana/follow"), 200)

        stream = EventStream(b.url, ben_on_b.token)
        assert stream.status == 200 and stream.next().event == "ready"
        # MUT: a post through A reaches Ben's stream on B within a second.
        latencies = []
        for i in range(5):
            started = time.monotonic()
            post = expect(ana_on_a.post("/api/v1/posts", json={"kind": "text", "body": f"from A {i}"}), 201)
            event = stream.next(timeout=2)
            assert event.event == "post.created" and event.json()["id"] == post["id"]
            latencies.append(event.received - started)
        assert max(latencies) < 1.0, latencies
        print(f"cross-server delivery latency: max {max(latencies) * 1000:.1f} ms")
        last = event.id
        stream.close()

        # Missed while away: made on A, replayed by B, exactly once, in order.
        missed = [expect(ana_on_a.post("/api/v1/posts", json={"kind": "text", "body": f"missed {i}"}), 201)["id"] for i in range(3)]
        expect(ana_on_a.put(f"/api/v1/posts/{missed[0]}/like"), 200)  # Ana's own like: not for Ben
        resumed = EventStream(b.url, ben_on_b.token, last_event_id=last)
        events = resumed.take(4)
        assert [e.event for e in events] == ["post.created"] * 3 + ["ready"]
        assert [e.json()["id"] for e in events[:3]] == missed
        assert resumed.quiet()
        # Live again, and notifications made on B reach Ana's stream on A.
        ana_stream = EventStream(a.url, ana_on_a.token)
        assert ana_stream.next().event == "ready"
        expect(ben_on_b.put(f"/api/v1/posts/{missed[1]}/like"), 200)
        kinds = {e.event for e in ana_stream.take(2, timeout=2)}
        assert kinds == {"notification", "like.changed"}
        assert resumed.quiet(), "Ben does not hear of likes on Ana's post"
        resumed.close()
        ana_stream.close()
    finally:
        for server in servers:
            try:
                if server.process is not None:
                    server.stop()
            finally:
                server.kill()
