"""The proxy configurations docs/install.md hands operators, run as they are shipped.

packaging/nginx/plaza.conf (with plaza-proxy-headers.conf) and packaging/Caddyfile are put in
front of a real Plaza on loopback, changed only where an operator changes them: the host name,
the certificate (a self-signed one for 127.0.0.1 here; Caddy makes its own with `tls internal`),
the ports, and Plaza's address. Through each, over HTTPS:
- a photo above nginx's 1 MB default body limit is taken;
- a live update arrives on the event stream while it is open (not held in a buffer);
- Mastodon's streaming WebSocket upgrades;
- Plaza sees the proxy's address for the client, whatever X-Forwarded-For the client sent.
"""

from __future__ import annotations

import base64
import contextlib
import os
import re
import shutil
import socket
import ssl
import subprocess
import time
import zlib
from pathlib import Path
from types import SimpleNamespace

import pytest
import requests

from conftest import ROOT, Client, PlazaServer, expect, free_port, png
from sse import EventStream

PACKAGING = ROOT / "packaging"
SPOOFED = "203.0.113.9"


def self_signed(folder: Path) -> tuple[Path, Path]:
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    return cert, key


def nginx_conf(plaza_port: int, https_port: int, http_port: int, cert: Path, key: Path) -> str:
    """packaging/nginx/plaza.conf as an operator fills it in, inside the http block of a minimal
    nginx.conf (Debian's /etc/nginx/nginx.conf includes conf.d/*.conf there)."""
    site = (PACKAGING / "nginx" / "plaza.conf").read_text()
    replacements = [
        ("server 127.0.0.1:8080;", f"server 127.0.0.1:{plaza_port};"),
        ("listen 80;", f"listen 127.0.0.1:{http_port};"),
        ("listen [::]:80;", ""),
        ("listen 443 ssl http2;", f"listen 127.0.0.1:{https_port} ssl http2;"),
        ("listen [::]:443 ssl http2;", ""),
        ("/etc/letsencrypt/live/plaza.example.com/fullchain.pem", str(cert)),
        ("/etc/letsencrypt/live/plaza.example.com/privkey.pem", str(key)),
        ("/etc/nginx/plaza-proxy-headers.conf", str(PACKAGING / "nginx" / "plaza-proxy-headers.conf")),
        ("server_name plaza.example.com;", "server_name 127.0.0.1;"),
    ]
    for old, new in replacements:
        assert old in site, f"packaging/nginx/plaza.conf no longer has {old!r}: update this test and docs/install.md"
        site = site.replace(old, new)
    # Run as root (CI), nginx's workers would be nobody, who cannot write the test's folder.
    user = "user root;\n" if os.geteuid() == 0 else ""
    return (f"{user}daemon off;\nworker_processes 1;\npid nginx.pid;\nerror_log nginx-error.log;\n"
            "events { worker_connections 256; }\n"
            "http {\n  access_log off;\n  client_body_temp_path body;\n  proxy_temp_path proxy;\n"
            f"{site}\n}}\n")


def caddyfile(plaza_port: int, https_port: int, folder: Path) -> str:
    site = (PACKAGING / "Caddyfile").read_text()
    for old, new in [("plaza.example.com {", f"https://127.0.0.1:{https_port} {{\n\tbind 127.0.0.1\n\ttls internal"),
                     ("reverse_proxy 127.0.0.1:8080", f"reverse_proxy 127.0.0.1:{plaza_port}")]:
        assert old in site, f"packaging/Caddyfile no longer has {old!r}: update this test and docs/install.md"
        site = site.replace(old, new)
    # Caddy's own state in the test's folder; no admin port, no trust store touched, no redirect
    # listener on port 80, no ACME (tls internal is Caddy's local CA).
    return (f"{{\n\tadmin off\n\tskip_install_trust\n\tauto_https disable_redirects\n"
            f"\tstorage file_system {folder / 'caddy-data'}\n}}\n\n{site}")


def wait_for(url: str, process: subprocess.Popen, log: Path, verify) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text(errors="replace")[-3000:]
        try:
            if requests.get(url + "/healthz", timeout=2, verify=verify).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.2)
    raise AssertionError("the proxy did not answer: " + log.read_text(errors="replace")[-3000:])


def stop(proxy: subprocess.Popen) -> None:
    """Asks the proxy to stop; one that waits for the test's open streams is killed."""
    proxy.terminate()
    try:
        proxy.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proxy.kill()
        proxy.wait()


@pytest.fixture
def plaza_behind_proxy(tmp_path: Path):
    env = {"PLAZA_TRUSTED_PROXIES": "127.0.0.1,::1"}
    with PlazaServer(tmp_path / "data", tmp_path / "plaza.log", env=env).running() as server:
        yield server


def check_through(proxy_url: str, ca: Path | None, monkeypatch: pytest.MonkeyPatch) -> None:
    # requests (and sse.EventStream) trust the proxy's certificate through this variable.
    if ca is not None:
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(ca))
    front = SimpleNamespace(url=proxy_url)
    signed_up = expect(Client(front).post("/api/v1/auth/register", headers={"X-Forwarded-For": SPOOFED}, json={
        "username": "ana", "email": "ana@example.com", "password": "correct horse battery"}), 201)
    ana = Client(front, signed_up["token"])
    # The client's own X-Forwarded-For is replaced with the address the proxy saw.
    sessions = expect(ana.get("/api/v1/me/sessions", headers={"X-Forwarded-For": SPOOFED}), 200)["items"]
    assert [s["ip"] for s in sessions if s["current"]] == ["127.0.0.1"], sessions

    # A 3 MB photo: above nginx's default 1 MB body limit, below Plaza's.
    rows = b"".join(b"\x00" + os.urandom(1000 * 3) for _ in range(1000))
    photo = png(1000, 1000, pixels=zlib.compress(rows, 1))
    assert len(photo) > 2_000_000
    media = expect(ana.post("/api/v1/me/media", files={"file": ("noise.png", photo, "image/png")}), 201)

    # A live update reaches an open stream through the proxy.
    stream = EventStream(proxy_url, ana.token)
    assert stream.status == 200 and stream.next().event == "ready"
    expect(ana.post("/api/v1/posts", json={"kind": "photo", "body": "through the proxy", "mediaIds": [media["id"]]}), 201)
    event = stream.next(timeout=20)
    assert event is not None and event.event == "post.created", event
    assert event.json()["body"] == "through the proxy"
    stream.response.close()

    # Mastodon's streaming API: the WebSocket upgrade gets through.
    port = int(proxy_url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=20) as raw, \
            (ssl.create_default_context(cafile=str(ca)).wrap_socket(raw, server_hostname="127.0.0.1") if ca
             else contextlib.nullcontext(raw)) as tls:
        key = base64.b64encode(os.urandom(16)).decode()
        tls.sendall((f"GET /api/v1/streaming?stream=user&access_token={ana.token} HTTP/1.1\r\n"
                     f"Host: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = tls.recv(4096)
            assert chunk, head
            head += chunk
        assert re.match(rb"HTTP/1\.1 101 ", head), head.decode(errors="replace")


@pytest.mark.skipif(shutil.which("nginx") is None and not Path("/usr/sbin/nginx").exists(),
                    reason="needs nginx (scripts/install-deps.sh test)")
def test_the_shipped_nginx_configuration(plaza_behind_proxy: PlazaServer, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch):
    cert, key = self_signed(tmp_path)
    https_port = free_port()
    conf = tmp_path / "nginx.conf"
    conf.write_text(nginx_conf(plaza_behind_proxy.port, https_port, free_port(), cert, key))
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    log = tmp_path / "nginx-error.log"
    log.touch()
    proxy = subprocess.Popen([binary, "-c", str(conf), "-p", str(tmp_path)], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        url = f"https://127.0.0.1:{https_port}"
        wait_for(url, proxy, log, str(cert))
        check_through(url, cert, monkeypatch)
    finally:
        stop(proxy)


@pytest.mark.skipif(shutil.which("nginx") is None and not Path("/usr/sbin/nginx").exists(),
                    reason="needs nginx (scripts/install-deps.sh test)")
def test_the_compose_nginx_configuration(plaza_behind_proxy: PlazaServer, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch):
    """compose.yaml's nginx.conf, its two app servers' names pointed at the one Plaza here."""
    site = (PACKAGING / "compose" / "nginx.conf").read_text()
    port = free_port()
    for old, new in [("server plaza-1:8080", f"server 127.0.0.1:{plaza_behind_proxy.port}"),
                     ("server plaza-2:8080", f"server 127.0.0.1:{plaza_behind_proxy.port}"),
                     ("listen 80;", f"listen 127.0.0.1:{port};"),
                     ("/etc/nginx/plaza-proxy-headers.conf", str(PACKAGING / "nginx" / "plaza-proxy-headers.conf"))]:
        assert old in site, f"packaging/compose/nginx.conf no longer has {old!r}: update this test"
        site = site.replace(old, new)
    user = "user root;\n" if os.geteuid() == 0 else ""
    conf = tmp_path / "nginx.conf"
    conf.write_text(f"{user}daemon off;\nworker_processes 1;\npid nginx.pid;\nerror_log nginx-error.log;\n"
                    "events { worker_connections 256; }\nhttp {\n  access_log off;\n"
                    f"  client_body_temp_path body;\n  proxy_temp_path proxy;\n{site}\n}}\n")
    log = tmp_path / "nginx-error.log"
    log.touch()
    proxy = subprocess.Popen([shutil.which("nginx") or "/usr/sbin/nginx", "-c", str(conf), "-p", str(tmp_path)],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_for(url, proxy, log, True)
        check_through(url, None, monkeypatch)
    finally:
        stop(proxy)


@pytest.mark.skipif(shutil.which("caddy") is None, reason="needs caddy (scripts/install-deps.sh test)")
def test_the_shipped_caddyfile(plaza_behind_proxy: PlazaServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    https_port = free_port()
    conf = tmp_path / "Caddyfile"
    conf.write_text(caddyfile(plaza_behind_proxy.port, https_port, tmp_path))
    log = tmp_path / "caddy.log"
    with open(log, "wb") as out:
        proxy = subprocess.Popen(["caddy", "run", "--config", str(conf), "--adapter", "caddyfile"],
                                 env={**os.environ, "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "xdg")},
                                 stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    try:
        url = f"https://127.0.0.1:{https_port}"
        # Caddy's local CA signs the site's certificate; its root is trusted here only.
        root = tmp_path / "caddy-data" / "pki" / "authorities" / "local" / "root.crt"
        wait_for(url, proxy, log, False)
        check_through(url, root, monkeypatch)
    finally:
        stop(proxy)
