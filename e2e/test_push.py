"""Push from the real binary to loopback push services, and the installable web app in Chromium.

- Web Push: a push service in a thread here that checks each push's VAPID token (ES256 over the
  key the server publishes, `aud` the service's origin) and decrypts the body with `http_ece`,
  an implementation independent of Plaza's; answers 410 for `gone…` subscriptions and 503 the
  first time for `flaky…` ones.
- APNs: scripts/fake-apns.py (hypercorn over HTTP/2 and TLS, trusted through PLAZA_APNS_CA_FILE),
  which checks the provider token against the team key's public half, the headers and the
  payload, and answers 410 for `dead…` tokens and 429 once for `beef…` ones.
- Chromium: the manifest has no errors and the app is installable (DevTools), the service
  worker takes over, pages read before still open with the server stopped, and the share target
  saves a link.

Retries wait 15 s and coalesced pushes a minute; the tests move those times in the SQLite file
instead of waiting.
"""

from __future__ import annotations

import base64
import http.server
import importlib.util
import json
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import quote

import pytest

from conftest import ROOT, LocalSite, PlazaServer, expect, free_port
from web import click, fill, sign_in, wait_for, wait_text

API = "/api/v1"
PUSH_TIMEOUT = 30  # seconds for a push to arrive (the worker is woken at once; a debug build, busy cores)
KEY_ID, TEAM_ID, TOPIC = "KEY1234567", "TEAM123456", "com.example.plaza"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def verify_es256(token: str, public_key) -> dict:
    """The claims of an ES256 JWT whose signature `public_key` verifies (raises otherwise)."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
    header_b64, claims_b64, signature_b64 = token.split(".")
    assert json.loads(unb64url(header_b64))["alg"] == "ES256"
    signature = unb64url(signature_b64)
    der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
    public_key.verify(der, f"{header_b64}.{claims_b64}".encode(), ec.ECDSA(hashes.SHA256()))
    return json.loads(unb64url(claims_b64))


class Subscription:
    """A browser's side of a subscription: its P-256 key and auth secret."""

    def __init__(self, endpoint: str):
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
        import os
        self.endpoint = endpoint
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.auth = os.urandom(16)
        self.public = self.key.public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)

    def registration(self) -> dict:
        return {"platform": "webpush", "endpoint": self.endpoint,
                "keys": {"p256dh": b64url(self.public), "auth": b64url(self.auth)}}

    def decrypt(self, body: bytes) -> dict:
        import http_ece
        return json.loads(http_ece.decrypt(body, private_key=self.key, auth_secret=self.auth, version="aes128gcm"))


class WebPushService:
    """A push service on loopback: keeps each push (path, headers, body, when) and answers as
    the big services do."""

    def __init__(self):
        pushes, seen = [], set()
        self.pushes, lock = pushes, threading.Lock()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                name = self.path.rsplit("/", 1)[-1]
                with lock:
                    pushes.append({"path": self.path, "headers": dict(self.headers), "body": body,
                                   "at": time.monotonic()})
                    first = name not in seen
                    seen.add(name)
                status = 410 if name.startswith("gone") else 503 if name.startswith("flaky") and first else 201
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def wait(self, path: str, count: int = 1, timeout: float = PUSH_TIMEOUT) -> list[dict]:
        deadline = time.monotonic() + timeout
        while True:
            matching = [p for p in self.pushes if p["path"] == path]
            if len(matching) >= count:
                return matching
            assert time.monotonic() < deadline, f"{count} pushes to {path} within {timeout} s; got {[p['path'] for p in self.pushes]}"
            time.sleep(0.05)


class FakeAPNs:
    """scripts/fake-apns.py in a folder of its own, with a fresh team key."""

    def __init__(self, folder: Path):
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.key_path = folder / "AuthKey.p8"
        self.key_path.write_bytes(ec.generate_private_key(ec.SECP256R1()).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
        self.log = open(folder / "fake-apns.log", "w")
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "scripts" / "fake-apns.py"), str(folder), str(self.key_path), KEY_ID, TEAM_ID,
             TOPIC], stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.process.stdout.readline()
        assert line, f"fake-apns.py said nothing: {(folder / 'fake-apns.log').read_text()}"
        self.port = json.loads(line)["port"]
        self.cert = folder / "cert.pem"

    def requests(self) -> list[dict]:
        path = self.folder / "requests.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def wait(self, token: str, count: int = 1, timeout: float = PUSH_TIMEOUT) -> list[dict]:
        deadline = time.monotonic() + timeout
        while True:
            matching = [r for r in self.requests() if r["path"] == f"/3/device/{token}"]
            if len(matching) >= count:
                return matching
            assert time.monotonic() < deadline, f"{count} pushes to {token} within {timeout} s; got {self.requests()}"
            time.sleep(0.05)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


@pytest.fixture
def push_world(data_dir: Path, tmp_path: Path):
    for module in ("http_ece", "hypercorn", "cryptography"):
        if importlib.util.find_spec(module) is None:
            pytest.fail(f"the push tests need {module}: run scripts/install-deps.sh test", pytrace=False)
    web_push = WebPushService()
    apns = FakeAPNs(tmp_path / "apns")
    plaza = PlazaServer(data_dir, tmp_path / "plaza.log", env={
        "PLAZA_PUSH_ALLOW": "127.0.0.1",
        "PLAZA_APNS_KEY_FILE": str(apns.key_path), "PLAZA_APNS_KEY_ID": KEY_ID, "PLAZA_APNS_TEAM_ID": TEAM_ID,
        "PLAZA_APNS_TOPIC": TOPIC, "PLAZA_APNS_URL": f"https://localhost:{apns.port}",
        "PLAZA_APNS_CA_FILE": str(apns.cert),
    })
    plaza.start()
    try:
        yield plaza, web_push, apns
    finally:
        plaza.stop()
        apns.stop()
        web_push.server.shutdown()


def delivery_states(data_dir: Path) -> list[tuple[str, str | None]]:
    """(state, last error) of every delivery, oldest first."""
    with sqlite3.connect(data_dir / "plaza.sqlite", timeout=30) as db:
        return db.execute("SELECT state, last_error FROM push_deliveries ORDER BY created_at").fetchall()


def wait_recorded(data_dir: Path) -> None:
    """Waits until no delivery is pending without an outcome recorded (sent, or failed once)."""
    wait_until("every delivery recorded", lambda: all(
        state != "pending" or error is not None for state, error in delivery_states(data_dir)))


def move_due(data_dir: Path) -> None:
    """Makes every waiting push due now (a retry's wait, a coalescing minute) in the SQLite file."""
    with sqlite3.connect(data_dir / "plaza.sqlite", timeout=30) as db:
        db.execute("UPDATE push_deliveries SET next_attempt_at = 0 WHERE state = 'pending'")


def wait_until(what: str, check, timeout: float = PUSH_TIMEOUT):
    deadline = time.monotonic() + timeout
    while not (result := check()):
        assert time.monotonic() < deadline, f"{what} within {timeout} s"
        time.sleep(0.1)
    return result


def test_web_push_is_signed_encrypted_coalesced_and_retried(push_world, data_dir: Path):
    plaza, service, _ = push_world
    _, ana = plaza.register("ana")
    _, bob = plaza.register("bob")
    _, carl = plaza.register("carl")
    _, dave = plaza.register("dave")
    browser = Subscription(service.origin + "/wp/ana")
    device = expect(ana.post(f"{API}/me/push-devices", json=browser.registration()), 201)
    assert device["platform"] == "webpush" and device["label"] == service.origin
    post = expect(ana.post(f"{API}/posts", json={"kind": "text", "body": "first ramen of the winter"}), 201)

    started = time.monotonic()
    expect(bob.put(f"{API}/posts/{post['id']}/like"), 200)
    push = service.wait("/wp/ana")[0]
    print(f"\nweb push delivered {1000 * (push['at'] - started):.0f} ms after the like was answered")
    message = browser.decrypt(push["body"])
    assert message["body"] == "bob liked your post: “first ramen of the winter”", message
    assert message["url"] == f"/p/{post['id']}" and message["kind"] == "like"
    headers = {k.lower(): v for k, v in push["headers"].items()}
    assert headers["content-encoding"] == "aes128gcm" and headers["ttl"] == "86400"
    assert headers["topic"] == message["tag"]
    # VAPID: signed by the key the server publishes, for this service's origin.
    from cryptography.hazmat.primitives.asymmetric import ec
    published = expect(plaza.client().get(f"{API}/push/web-push-key"), 200)["publicKey"]
    token, key = headers["authorization"].removeprefix("vapid t=").split(", k=")
    assert key == published
    claims = verify_es256(token, ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(key)))
    assert claims["aud"] == service.origin and claims["sub"].startswith(("mailto:", "https://"))
    assert time.time() < claims["exp"] <= time.time() + 24 * 3600

    # Two more likes: one push a minute after the first (the minute moved), naming all three.
    wait_recorded(data_dir)
    expect(carl.put(f"{API}/posts/{post['id']}/like"), 200)
    expect(dave.put(f"{API}/posts/{post['id']}/like"), 200)
    time.sleep(1)
    assert len(service.wait("/wp/ana")) == 1
    move_due(data_dir)
    second = service.wait("/wp/ana", count=2)[1]
    assert browser.decrypt(second["body"])["body"] == "dave and 2 others liked your post: “first ramen of the winter”"
    assert {k.lower(): v for k, v in second["headers"].items()}["topic"] == headers["topic"]

    # A service that fails once gets the push again after the wait.
    flaky = Subscription(service.origin + "/wp/flaky-bob")
    expect(bob.post(f"{API}/me/push-devices", json=flaky.registration()), 201)
    expect(ana.put(f"{API}/users/bob/follow"), 200)
    service.wait("/wp/flaky-bob")
    wait_recorded(data_dir)
    move_due(data_dir)
    retried = service.wait("/wp/flaky-bob", count=2)[1]
    assert flaky.decrypt(retried["body"])["body"] == "ana followed you"

    # A subscription the service says is gone is forgotten.
    expect(carl.post(f"{API}/me/push-devices", json=Subscription(service.origin + "/wp/gone-carl").registration()), 201)
    expect(ana.put(f"{API}/users/carl/follow"), 200)
    service.wait("/wp/gone-carl")
    wait_until("carl's gone device removed", lambda: expect(carl.get(f"{API}/me/push-devices"), 200)["items"] == [])

    # Nothing reaches Ana from someone she blocked; the next push is the only other one.
    expect(ana.put(f"{API}/users/dave/block"), 200)
    assert dave.post(f"{API}/posts/{post['id']}/comments", json={"body": "hi"}).status_code == 404
    expect(bob.post(f"{API}/posts/{post['id']}/comments", json={"body": "looks good"}), 201)
    pushes = service.wait("/wp/ana", count=3)
    time.sleep(1)
    assert [browser.decrypt(p["body"])["body"] for p in service.pushes if p["path"] == "/wp/ana"][2:] == [
        "bob commented on your post: “looks good”"]


def test_apns_over_http2_with_provider_tokens(push_world, data_dir: Path):
    plaza, _, apns = push_world
    _, ana = plaza.register("ana")
    _, bob = plaza.register("bob")
    token = "ab" * 32
    expect(ana.post(f"{API}/me/push-devices", json={"platform": "apns", "token": token}), 201)
    started = time.monotonic()
    expect(bob.put(f"{API}/users/ana/follow"), 200)
    request = apns.wait(token)[0]
    print(f"\nAPNs push delivered within {1000 * (time.monotonic() - started):.0f} ms of the follow")
    assert request["http_version"] == "2" and request["problem"] is None and request["status"] == 200, request
    headers = request["headers"]
    assert headers["apns-topic"] == TOPIC and headers["apns-push-type"] == "alert" and headers["apns-priority"] == "10"
    assert headers["apns-collapse-id"].startswith("n")
    payload = json.loads(request["body"])
    assert payload["aps"]["alert"]["body"] == "bob followed you" and payload["aps"]["badge"] == 1
    assert payload["plaza"]["path"] == "/u/bob"

    # Too many requests: tried again after the wait (moved).
    busy = "beef" + "0" * 60
    expect(bob.post(f"{API}/me/push-devices",
                    json={"platform": "apns", "token": busy, "environment": "sandbox", "bundleId": "com.example.other"}),
           201)
    expect(ana.put(f"{API}/users/bob/follow"), 200)
    assert apns.wait(busy)[0]["status"] == 429
    wait_recorded(data_dir)
    move_due(data_dir)
    again = apns.wait(busy, count=2)[1]
    assert again["status"] == 200 and again["headers"]["apns-topic"] == "com.example.other"

    # Unregistered: the token is forgotten.
    dead = "dead" + "0" * 60
    _, carl = plaza.register("carl")
    expect(carl.post(f"{API}/me/push-devices", json={"platform": "apns", "token": dead}), 201)
    expect(ana.put(f"{API}/users/carl/follow"), 200)
    assert apns.wait(dead)[0]["status"] == 410
    wait_until("carl's dead token removed", lambda: expect(carl.get(f"{API}/me/push-devices"), 200)["items"] == [])


def test_installable_offline_and_share_target(plaza: PlazaServer, browser_factory):
    _, ana = plaza.register("ana")
    expect(ana.post(f"{API}/posts", json={"kind": "text", "body": "noodles to read on the train"}), 201)
    driver = browser_factory()
    sign_in(driver, plaza.url, "ana")
    # The service worker takes over the page.
    scope = driver.execute_async_script(
        "const done = arguments[0]; navigator.serviceWorker.ready.then((r) => done(r.active.scriptURL)).catch((e) => done(String(e)));")
    assert "/sw.js?v=" in scope, scope
    driver.get(plaza.url + "/")
    wait_text(driver, "main", "noodles to read on the train")
    assert driver.execute_script("return Boolean(navigator.serviceWorker.controller)")
    # The manifest parses without errors and the app can be installed.
    manifest = driver.execute_cdp_cmd("Page.getAppManifest", {})
    assert manifest["url"].endswith("/manifest.webmanifest") and manifest["errors"] == [], manifest
    installable = driver.execute_cdp_cmd("Page.getInstallabilityErrors", {})
    assert installable["installabilityErrors"] == [], installable

    # The network is gone (the server stopped): the page read before still opens, others say offline.
    plaza.stop()
    try:
        driver.get(plaza.url + "/")
        wait_text(driver, "main", "noodles to read on the train")
        driver.get(plaza.url + "/explore")
        wait_text(driver, "body", "You are offline")
    finally:
        plaza.start()

    # The share target: a link from another app is saved to a new collection.
    with LocalSite({"/ramen": (b"<html><head><title>Ramen guide</title></head></html>", "text/html")}) as site:
        link = site.url("/ramen")
        driver.get(f"{plaza.url}/share?title=Ramen%20guide&text={quote('see ' + link)}")
        wait_for(driver, "form[action='/share']")
        click(driver, "input[name=collection][value=new]")
        fill(driver, "input[name=newName]", "To read")
        click(driver, "form[action='/share'] button[type=submit]")
        wait_text(driver, "main", link)
        collections = expect(ana.get(f"{API}/collections"), 200)["items"]
        assert [c["name"] for c in collections] == ["To read"]
        items = expect(ana.get(f"{API}/collections/{collections[0]['id']}/items"), 200)["items"]
        assert [i["link"]["url"] for i in items] == [link]

    # Signing out drops the copies: offline, the home page is no longer there.
    driver.get(plaza.url + "/")
    wait_text(driver, "main", "noodles to read on the train")
    click(driver, "form.logout button[type=submit]")
    wait_for(driver, "form[action='/login']")
    plaza.stop()
    try:
        driver.get(plaza.url + "/")
        wait_text(driver, "body", "You are offline")
    finally:
        plaza.start()


def test_mastodon_apps_get_pushes_in_both_encodings(push_world, data_dir: Path):
    """A Mastodon app's push subscription (`/api/v1/push/subscription`), made by Mastodon.py:
    without `standard` the push is the legacy `aesgcm` coding that Ice Cubes decrypts, read
    here by Mastodon.py's own decryption; with `subscription[standard]` it is `aes128gcm`."""
    from test_mastodon import signed_in_client
    import requests
    plaza, service, _ = push_world
    _, ana = plaza.register("ana")
    _, bob = plaza.register("bob")
    app = signed_in_client(plaza, "ana")
    private, public = app.push_subscription_generate_keys()
    subscription = app.push_subscription_set(
        service.origin + "/wp/mastodon-ana", public, favourite_events=True, follow_events=False)
    assert subscription.alerts.favourite and not subscription.alerts.follow
    assert subscription.server_key == expect(plaza.client().get(f"{API}/push/web-push-key"), 200)["publicKey"]
    assert app.push_subscription().endpoint == service.origin + "/wp/mastodon-ana"

    post = expect(ana.post(f"{API}/posts", json={"kind": "text", "body": "pushed to an app"}), 201)
    expect(bob.put(f"{API}/users/ana/follow"), 200)  # not among the app's alerts
    expect(bob.put(f"{API}/posts/{post['id']}/like"), 200)
    push = service.wait("/wp/mastodon-ana")[0]
    headers = {k.lower(): v for k, v in push["headers"].items()}
    assert headers["content-encoding"] == "aesgcm"
    assert headers["authorization"].startswith("WebPush ")
    message = app.push_subscription_decrypt_push(push["body"], private, headers["encryption"], headers["crypto-key"])
    assert message.notification_type == "favourite"
    assert message.body == "pushed to an app" and message.title == "bob liked your post: “pushed to an app”"
    notification = app.notifications(id=message.notification_id)
    assert notification.type == "favourite" and notification.account.acct == "bob"
    wait_recorded(data_dir)
    assert len(service.wait("/wp/mastodon-ana")) == 1, "the follow was not pushed"

    # Standard (aes128gcm), by a client that asks for it.
    browser = Subscription(service.origin + "/wp/mastodon-standard")
    token = app.access_token
    made = requests.post(plaza.url + "/api/v1/push/subscription", timeout=30, headers={"Authorization": f"Bearer {token}"},
                         data={"subscription[endpoint]": browser.endpoint,
                               "subscription[keys][p256dh]": b64url(browser.public),
                               "subscription[keys][auth]": b64url(browser.auth), "subscription[standard]": "true",
                               "data[alerts][follow]": "true", "data[policy]": "all"})
    assert made.status_code == 200 and made.json()["standard"] is True, made.text
    _, carl = plaza.register("carl")
    expect(carl.put(f"{API}/users/ana/follow"), 200)
    standard = service.wait("/wp/mastodon-standard")[0]
    assert {k.lower(): v for k, v in standard["headers"].items()}["content-encoding"] == "aes128gcm"
    assert browser.decrypt(standard["body"])["notification_type"] == "follow"
    app.push_subscription_delete()
    with pytest.raises(Exception):
        app.push_subscription()
