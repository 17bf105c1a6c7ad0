"""Uploads against the real binary: decompression bombs in parallel must not cost memory,
and the server keeps answering while it refuses or processes them."""

from __future__ import annotations

import concurrent.futures
import struct
import threading
import time
import zlib

import requests

from conftest import PlazaServer, describe, expect, png

MEMORY_LIMIT_MB = 300


def zero_png(width: int, height: int) -> bytes:
    """A real image of width × height black pixels: megabytes decoded, kilobytes on disk."""
    compressor = zlib.compressobj(9)
    row = b"\x00" * (1 + 3 * width)
    data = b"".join(compressor.compress(row) for _ in range(height)) + compressor.flush()
    return png(width, height, pixels=data)


def gif_claiming(width: int, height: int) -> bytes:
    """A GIF whose logical screen and only frame claim width × height, with one pixel of data."""
    header = b"GIF89a" + struct.pack("<HHBBB", width, height, 0x80, 0, 0) + b"\x00\x00\x00\xff\xff\xff"
    image = b"\x2c" + struct.pack("<HHHHB", 0, 0, width, height, 0) + b"\x02\x02\x44\x01\x00"
    return header + image + b"\x3b"


def peak_rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM in /proc/PID/status")


def test_ten_bombs_in_parallel_cost_no_memory_and_the_server_keeps_answering(plaza: PlazaServer):
    _, ana = plaza.register("ana")
    bombs = [("claims-30000x30000.png", png(30000, 30000, pixels=zlib.compress(b"\x00" * 4)))] * 4
    bombs += [("claims-65535x65535.gif", gif_claiming(65535, 65535))] * 3
    # At the 40-megapixel cap: decoded in full it would be 120 MB each; it is processed in strips.
    real = zero_png(8000, 5000)
    assert len(real) < 1_000_000
    bombs += [("black-8000x5000.png", real)] * 3

    stop = threading.Event()
    health: list[float] = []

    def watch_health():
        while not stop.is_set():
            started = time.monotonic()
            response = requests.get(plaza.url + "/healthz", timeout=10)
            assert response.status_code == 200, describe(response)
            health.append(time.monotonic() - started)
            time.sleep(0.05)

    def upload(item):
        name, data = item
        return name, ana.post("/api/v1/me/media", files={"file": (name, data, "image/png")})

    watcher = concurrent.futures.ThreadPoolExecutor(1).submit(watch_health)
    with concurrent.futures.ThreadPoolExecutor(len(bombs)) as pool:
        results = list(pool.map(upload, bombs))
    stop.set()
    watcher.result()

    for name, response in results:
        if name.startswith("claims"):
            assert response.status_code == 422, describe(response)
            assert response.json()["error"]["code"] == "image_too_large", describe(response)
        else:
            media = expect(response, 201)
            assert (media["width"], media["height"]) == (4096, 2560), media
    assert health, "the health check never ran"
    assert max(health) < 2.0, f"/healthz took up to {max(health):.2f} s during the uploads"
    peak = peak_rss_mb(plaza.process.pid)
    print(f"peak RSS {peak:.1f} MB; /healthz max {max(health) * 1000:.0f} ms over {len(health)} checks")
    assert peak < MEMORY_LIMIT_MB, f"peak RSS {peak:.1f} MB"


def test_a_photo_post_end_to_end(plaza: PlazaServer):
    _, ana = plaza.register("ana")
    media = expect(ana.post("/api/v1/me/media", files={"file": ("a.png", zero_png(640, 480), "image/png")}), 201)
    post = expect(ana.post("/api/v1/posts", json={"kind": "photo", "body": "black", "mediaIds": [media["id"]]}), 201)
    assert [m["id"] for m in post["media"]] == [media["id"]]
    for variant in ("thumbnail", "medium", "original"):
        response = requests.get(plaza.url + media["variants"][variant], timeout=10)
        assert response.status_code == 200, describe(response)
        assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"
        assert response.headers["X-Content-Type-Options"] == "nosniff"
    plaza.restart()
    assert requests.get(plaza.url + media["variants"]["original"], timeout=10).status_code == 200
    expect(ana.delete(f"/api/v1/posts/{post['id']}"), 204)
    assert requests.get(plaza.url + media["variants"]["original"], timeout=10).status_code == 404
