"""A seeded mutation fuzzer against the real binary (SQLite, rate limits off so 429s hide nothing).

Valid requests of most operations (API JSON bodies, query strings with cursors and dates, path
ids, cookies and Authorization, Last-Event-ID, the web app's forms, multipart uploads of a real
PNG and JPEG) are mutated structurally (wrong JSON types, huge numbers, unicode, duplicated or
missing headers, broken framing, corrupt images) and at the byte level (bit flips, inserted
CR/LF/NUL/0x80-0xFF, deletions, truncation), and sent over a bare socket. Every answer must be
well-formed HTTP with a status below 500 (503 only as `images_unavailable`, the documented
answer when libvips cannot be loaded); after every batch /healthz answers 200 and the process
lives. A failure prints the request's exact bytes as a Python literal (send them with
`rawhttp.exchange`; the tokens in them belong to the run's accounts).

PLAZA_FUZZ_REQUESTS sets the count (default 2,000; `make fuzz` runs 100,000) and
PLAZA_FUZZ_SEED the seed (default: a new one, printed); PLAZA_FUZZ_ONLY=media.upload,web.login
sends only those templates' requests.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import os
import random
import re
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable
from urllib.parse import quote


from conftest import PlazaServer, expect, png
from rawhttp import Malformed, exchange, parse_responses

COUNT = int(os.environ.get("PLAZA_FUZZ_REQUESTS", "2000"))
ONLY = {name for name in os.environ.get("PLAZA_FUZZ_ONLY", "").split(",") if name}  # template names, e.g. media.upload
SEED = int(os.environ.get("PLAZA_FUZZ_SEED") or random.SystemRandom().randrange(2**32))
BATCH = 250
TIMEOUT = 15.0  # seconds for one answer: only a hang takes this long (a debug build on two busy cores)
MAX_CRASHES = 5  # restarts after the server died before the run gives up
PASSWORD = "correct horse battery"
HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def csrf(secret: str) -> str:
    """The web app's CSRF token for a cookie secret (WebSession.csrfToken)."""
    digest = hashlib.sha256(f"plaza-csrf:{secret}".encode()).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


# MARK: requests


@dataclass
class Part:
    headers: list[bytes]
    content: bytes


@dataclass
class Req:
    """A request before it becomes bytes; structured mutations change these fields."""
    name: str
    method: str
    path: str
    query: list[tuple[str, str]] = field(default_factory=list)  # already percent-encoded
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    kind: str = "none"  # none, json, form, multipart, bytes
    body: Any = None
    boundary: bytes = b""
    version: bytes = b"HTTP/1.1"
    framing: str = "length"  # length, chunked, chunked-broken, short, long, none, two-lengths
    framed: bool = True  # the server can tell where the request ends: it owes an answer
    mutations: list[str] = field(default_factory=list)

    def header(self, name: bytes, value: bytes | str) -> "Req":
        self.headers.append((name, value.encode() if isinstance(value, str) else value))
        return self


def body_bytes(req: Req, rng: random.Random) -> bytes:
    if req.kind == "json":
        return json.dumps(req.body, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")
    if req.kind == "form":
        return "&".join(f"{k}={v}" for k, v in req.body).encode("utf-8", "surrogatepass")
    if req.kind == "multipart":
        out = bytearray()
        for part in req.body:
            out += b"--" + req.boundary + b"\r\n" + b"".join(h + b"\r\n" for h in part.headers) + b"\r\n" + part.content + b"\r\n"
        return bytes(out + b"--" + req.boundary + b"--\r\n")
    if req.kind == "bytes":
        return req.body
    return b""


def serialize(req: Req, rng: random.Random) -> bytes:
    body = body_bytes(req, rng)
    target = req.path + ("?" + "&".join(f"{k}={v}" if v is not None else k for k, v in req.query) if req.query else "")
    head = [req.method.encode("utf-8", "surrogatepass") + b" " + target.encode("utf-8", "surrogatepass") + b" " + req.version]
    head += [n + b": " + v for n, v in req.headers]
    if req.method in ("POST", "PUT", "PATCH") or body:
        if req.framing == "length":
            head.append(b"Content-Length: %d" % len(body))
        elif req.framing == "two-lengths":
            head += [b"Content-Length: %d" % len(body), b"Content-Length: %d" % (len(body) + rng.randint(1, 9))]
        elif req.framing == "short":
            head.append(b"Content-Length: %d" % max(0, len(body) - rng.randint(1, max(1, len(body)))))
        elif req.framing == "long":
            head.append(b"Content-Length: %d" % (len(body) + rng.choice([1, 100, 10**6, 10**12])))
        elif req.framing in ("chunked", "chunked-broken"):
            head.append(b"Transfer-Encoding: chunked")
            chunks, position = bytearray(), 0
            while position < len(body):
                size = rng.randint(1, 700)
                chunks += b"%x\r\n" % len(body[position:position + size]) + body[position:position + size] + b"\r\n"
                position += size
            chunks += b"0\r\n\r\n"
            if req.framing == "chunked-broken":
                cut = rng.randrange(len(chunks))
                chunks = chunks[:cut] + rng.choice([b"", b"zz\r\n", b"ffffffffffffffffff\r\n", b"\r\n", b"-1\r\n"]) + chunks[cut + rng.randint(0, 3):]
            body = bytes(chunks)
    return b"\r\n".join(head) + b"\r\n\r\n" + body


# MARK: fixtures


class World:
    """The accounts, objects, ids and cursors the templates point at."""

    def __init__(self, server: PlazaServer):
        self.server = server
        self.users: dict[str, tuple[dict, Any]] = {}
        for name in ("ana", "ben", "vic", "lou", "pat"):
            self.users[name] = server.register(name)
        ana, ben = self.client("ana"), self.client("ben")
        self.token = ana.token
        self.ben_token = ben.token
        self.pat_token = self.client("pat").token
        self.space = expect(ana.post("/api/v1/spaces", json={"slug": "fuzz", "name": "Fuzz", "description": "a space"}), 201)["slug"]
        expect(ben.put("/api/v1/users/ana/follow"), 200)
        self.png = png(24, 16)
        upload = expect(ana.post("/api/v1/me/media", files={"file": ("a.png", self.png, "image/png")}), 201)
        thumbnail = ana.get(upload["variants"]["thumbnail"])
        assert thumbnail.status_code == 200 and thumbnail.headers["Content-Type"] == "image/jpeg", thumbnail.headers
        self.jpeg = thumbnail.content
        for i in range(3):
            expect(ana.post("/api/v1/posts", json={"kind": "text", "body": f"post {i} #fuzz"}), 201)
        self.event_id = self.first_event_id()
        self.batch = 0
        self.refresh()

    def client(self, name: str):
        return self.users[name][1]

    def first_event_id(self) -> str:
        """The id of the first event on Ben's stream (Ana's posts are in his home feed)."""
        import socket
        with socket.create_connection(("127.0.0.1", self.server.port), timeout=10) as sock:
            sock.sendall(f"GET /api/v1/stream?lastEventId=0 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {self.ben_token}\r\n\r\n".encode())
            data = b""
            while not (found := re.search(rb"\nid: ?([0-9]+)\r?\n", data)):
                chunk = sock.recv(65536)
                assert chunk, data
                data += chunk
        return found.group(1).decode()

    def refresh(self) -> None:
        """The objects the templates point at, made again for each batch: a mutated method or
        path may delete, revoke or use up any of them (a throwaway account's session, an upload
        not attached yet, posts, comments, collections and items)."""
        self.batch += 1
        ana, ben = self.client("ana"), self.client("ben")

        def upload() -> dict:
            return expect(ana.post("/api/v1/me/media", files={"file": ("f.png", self.png, "image/png")}), 201)

        photo = upload()
        self.media_paths = list(photo["variants"].values())
        self.post_id = expect(ana.post("/api/v1/posts", json={"kind": "photo", "body": "a photo", "mediaIds": [photo["id"]], "spaces": [self.space]}), 201)["id"]
        self.ben_post_id = expect(ben.post("/api/v1/posts", json={"kind": "text", "title": "Ben's", "body": "hello"}), 201)["id"]
        for i in range(2):
            expect(ben.post(f"/api/v1/posts/{self.post_id}/comments", json={"body": f"comment {i}"}), 201)
        expect(ben.put(f"/api/v1/posts/{self.post_id}/like"), 200)
        self.collection_id = expect(ana.post("/api/v1/collections", json={"name": f"Saved {self.batch}"}), 201)["id"]
        self.item_id = expect(ana.post(f"/api/v1/collections/{self.collection_id}/items", json={"postId": self.ben_post_id, "note": "n"}), 201)["id"]
        self.feed_cursor = expect(ana.get("/api/v1/feed/global?limit=1"), 200)["nextCursor"]
        self.comments_cursor = expect(ana.get(f"/api/v1/posts/{self.post_id}/comments?limit=1"), 200)["nextCursor"]
        assert self.feed_cursor and self.comments_cursor
        self.notification_ids = [n["id"] for n in expect(ana.get("/api/v1/me/notifications?limit=2"), 200)["items"]]
        self.victim_post = expect(ana.post("/api/v1/posts", json={"kind": "text", "body": "to delete"}), 201)["id"]
        self.victim_comment = expect(ana.post(f"/api/v1/posts/{self.post_id}/comments", json={"body": "to delete"}), 201)["id"]
        self.victim_collection = expect(ana.post("/api/v1/collections", json={"name": f"To delete {self.batch}"}), 201)["id"]
        self.victim_item = expect(ana.post(f"/api/v1/collections/{self.victim_collection}/items", json={"url": "http://127.0.0.1:9/x", "note": "x"}), 201)["id"]
        self.fresh_media = upload()["id"]
        _, throwaway = self.server.register(f"tmp{self.batch}")
        self.throwaway_token = throwaway.token
        self.throwaway_session = expect(throwaway.get("/api/v1/me/sessions"), 200)["items"][0]["id"]


# MARK: templates: one valid request each


def api(name: str, method: str, path: str, world: World, rng: random.Random, token: str | None = "", body: Any = None, query=None) -> Req:
    req = Req(name, method, path, query=list(query or []))
    req.header(b"Host", b"127.0.0.1").header(b"User-Agent", b"plaza-fuzz").header(b"Accept", b"application/json")
    token = world.token if token == "" else token
    if token:
        if rng.random() < 0.2:  # the web app's way: the session cookie, plus the CSRF header on unsafe methods
            req.header(b"Cookie", f"theme=dark; plaza_session={token}")
            if method not in ("GET", "HEAD"):
                req.header(b"X-CSRF-Token", csrf(token))
        else:
            req.header(b"Authorization", f"Bearer {token}")
    if body is not None:
        req.kind, req.body = "json", body
        req.header(b"Content-Type", b"application/json")
    return req


def page_query(world: World, rng: random.Random, cursor: str | None = None, dates: bool = False) -> list[tuple[str, str]]:
    query = [("limit", str(rng.choice([1, 5, 20, 100])))]
    if cursor and rng.random() < 0.6:
        query.append(("cursor", cursor))
    if dates and rng.random() < 0.6:
        query += [("since", "2020-01-01T00:00:00.000Z"), ("until", quote(time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() + 60))))]
    if dates and rng.random() < 0.3:
        query.append(("kind", rng.choice(["text", "photo", "link", "activity"])))
    return query


def post_body(world: World, rng: random.Random) -> dict:
    kind = rng.choice(["text", "photo", "link", "activity", "text"])
    body: dict[str, Any] = {"kind": kind, "title": "Title ✨", "body": "Body with #tag and @ben"}
    if kind == "photo":
        body["mediaIds"] = [world.fresh_media]  # an upload can be attached once
    if kind == "link":
        body["link"] = {"url": "http://127.0.0.1:9/page"}
    if kind == "activity":
        body["activity"] = {"type": "run", "emoji": "🏃", "color": "#ff8800", "progress": 40}
    if rng.random() < 0.4:
        body["location"] = {"latitude": 52.52, "longitude": 13.405, "name": "Berlin"}
    if rng.random() < 0.3:
        body["price"] = "12.50 EUR"
    if rng.random() < 0.5:
        body["spaces"] = [world.space]
    return body


def upload(world: World, rng: random.Random) -> Req:
    req = api("media.upload", "POST", "/api/v1/me/media", world, rng)
    req.boundary = b"----plaza" + str(rng.randrange(10**9)).encode()
    req.header(b"Content-Type", b"multipart/form-data; boundary=" + req.boundary)
    name, kind, content = rng.choice([(b"a.png", b"image/png", world.png), (b"b.jpg", b"image/jpeg", world.jpeg)])
    req.kind = "multipart"
    req.body = [Part([b'Content-Disposition: form-data; name="file"; filename="' + name + b'"', b"Content-Type: " + kind], content)]
    return req


def web(name: str, method: str, path: str, world: World, rng: random.Random, signed_in: bool = True, form=None, query=None) -> Req:
    req = Req(name, method, path, query=list(query or []))
    req.header(b"Host", b"127.0.0.1").header(b"Accept", b"text/html")
    nonce = "n" * 8 + str(rng.randrange(10**12)).zfill(12)
    secret = world.token if signed_in else nonce
    req.header(b"Cookie", f"plaza_session={world.token}" if signed_in else f"plaza_csrf={nonce}")
    if form is not None:
        req.kind, req.body = "form", list(form) + [("_csrf", csrf(secret))]
        req.header(b"Content-Type", b"application/x-www-form-urlencoded")
        req.header(b"Origin", b"http://127.0.0.1")
    return req


def throwaway_web_logout(world: World, rng: random.Random) -> Req:
    req = web("web.logout", "POST", "/logout", world, rng, form=[])
    req.headers = [(n, v.replace(world.token.encode(), world.throwaway_token.encode())) for n, v in req.headers]
    req.body = [("_csrf", csrf(world.throwaway_token))]
    return req


Template = Callable[[World, random.Random], Req]
TEMPLATES: list[tuple[str, float, Template]] = [
    ("auth.register", 2, lambda w, r: api("auth.register", "POST", "/api/v1/auth/register", w, r, token=None,
        body={"username": f"u{r.randrange(10**9)}", "email": f"u{r.randrange(10**9)}@example.com", "password": PASSWORD, "displayName": "Zoë"})),
    ("auth.login", 2, lambda w, r: api("auth.login", "POST", "/api/v1/auth/login", w, r, token=None,
        body={"login": r.choice(["lou", "lou@example.com"]), "password": PASSWORD})),
    ("auth.logout", 1, lambda w, r: api("auth.logout", "POST", "/api/v1/auth/logout", w, r, token=w.throwaway_token)),
    ("me.get", 1, lambda w, r: api("me.get", "GET", "/api/v1/me", w, r)),
    ("me.patch", 3, lambda w, r: api("me.patch", "PATCH", "/api/v1/me", w, r,
        body={"displayName": "Ana ✨", "bio": "I write.", "status": r.choice([{"kind": "reading", "text": "a book"}, None])})),
    ("me.password", 1, lambda w, r: api("me.password", "PUT", "/api/v1/me/password", w, r, token=w.pat_token,
        body={"currentPassword": PASSWORD, "newPassword": PASSWORD})),
    ("me.avatar", 1, lambda w, r: api("me.avatar", "PUT", "/api/v1/me/avatar", w, r, body={"mediaId": None})),
    ("me.preferences", 2, lambda w, r: api("me.preferences", "PUT", "/api/v1/me/preferences", w, r,
        body={"lastSpace": w.space, "theme": "dark", "nested": {"a": [1, 2, 3]}})),
    ("me.sessions", 1, lambda w, r: api("me.sessions", "GET", "/api/v1/me/sessions", w, r)),
    ("me.session.delete", 1, lambda w, r: api("me.session.delete", "DELETE", f"/api/v1/me/sessions/{w.throwaway_session}", w, r, token=w.throwaway_token)),
    ("users.get", 1, lambda w, r: api("users.get", "GET", f"/api/v1/users/{r.choice(['ben', 'vic', 'ana'])}", w, r)),
    ("users.posts", 2, lambda w, r: api("users.posts", "GET", "/api/v1/users/ana/posts", w, r, query=page_query(w, r, w.feed_cursor, dates=True))),
    ("users.followers", 1, lambda w, r: api("users.followers", "GET", f"/api/v1/users/ana/{r.choice(['followers', 'following'])}", w, r, query=page_query(w, r))),
    ("users.activity", 1, lambda w, r: api("users.activity", "GET", "/api/v1/users/ana/activity", w, r, query=[("days", str(r.choice([7, 30, 365])))])),
    ("users.follow", 2, lambda w, r: api("users.follow", r.choice(["PUT", "DELETE"]), "/api/v1/users/vic/follow", w, r)),
    ("users.block", 1, lambda w, r: api("users.block", r.choice(["PUT", "DELETE"]), "/api/v1/users/vic/block", w, r)),
    ("users.friends", 1, lambda w, r: api("users.friends", "GET", "/api/v1/users/ana/friends", w, r, query=page_query(w, r))),
    ("users.mute", 1, lambda w, r: api("users.mute", r.choice(["PUT", "DELETE"]), "/api/v1/users/vic/mute", w, r)),
    ("me.follow_requests", 1, lambda w, r: api("me.follow_requests", "GET", "/api/v1/me/follow-requests", w, r, query=page_query(w, r))),
    ("posts.create", 5, lambda w, r: api("posts.create", "POST", "/api/v1/posts", w, r, body=post_body(w, r))),
    ("posts.get", 2, lambda w, r: api("posts.get", "GET", f"/api/v1/posts/{r.choice([w.post_id, w.ben_post_id])}", w, r)),
    ("posts.patch", 3, lambda w, r: api("posts.patch", "PATCH", f"/api/v1/posts/{w.post_id}", w, r,
        body={"title": "Edited", "body": "edited body", "location": r.choice([None, {"latitude": -33.9, "longitude": 151.2}]), "price": None, "spaces": [w.space]})),
    ("posts.delete", 1, lambda w, r: api("posts.delete", "DELETE", f"/api/v1/posts/{w.victim_post}", w, r)),
    ("comments.list", 2, lambda w, r: api("comments.list", "GET", f"/api/v1/posts/{w.post_id}/comments", w, r, query=page_query(w, r, w.comments_cursor))),
    ("comments.create", 3, lambda w, r: api("comments.create", "POST", f"/api/v1/posts/{r.choice([w.post_id, w.ben_post_id])}/comments", w, r, body={"body": "a comment 👍"})),
    ("comments.delete", 1, lambda w, r: api("comments.delete", "DELETE", f"/api/v1/comments/{w.victim_comment}", w, r)),
    ("posts.like", 2, lambda w, r: api("posts.like", r.choice(["PUT", "DELETE"]), f"/api/v1/posts/{w.ben_post_id}/like", w, r)),
    ("posts.likes", 1, lambda w, r: api("posts.likes", "GET", f"/api/v1/posts/{w.post_id}/likes", w, r, query=page_query(w, r))),
    ("posts.view", 1, lambda w, r: api("posts.view", "POST", f"/api/v1/posts/{w.ben_post_id}/view", w, r)),
    ("feed.home", 2, lambda w, r: api("feed.home", "GET", "/api/v1/feed/home", w, r, query=page_query(w, r, w.feed_cursor, dates=True))),
    ("feed.global", 2, lambda w, r: api("feed.global", "GET", "/api/v1/feed/global", w, r, token=r.choice([None, ""]), query=page_query(w, r, w.feed_cursor, dates=True))),
    ("spaces.feed", 1, lambda w, r: api("spaces.feed", "GET", f"/api/v1/spaces/{w.space}/feed", w, r, query=page_query(w, r, w.feed_cursor, dates=True))),
    ("spaces.list", 1, lambda w, r: api("spaces.list", "GET", "/api/v1/spaces", w, r, query=[("q", "fu"), ("member", "true")][:r.randint(0, 2)])),
    ("spaces.create", 1, lambda w, r: api("spaces.create", "POST", "/api/v1/spaces", w, r,
        body={"slug": f"s{r.randrange(10**8)}", "name": "A space", "description": "about things"})),
    ("spaces.patch", 1, lambda w, r: api("spaces.patch", "PATCH", f"/api/v1/spaces/{w.space}", w, r, body={"name": "Fuzz", "description": "edited"})),
    ("spaces.membership", 1, lambda w, r: api("spaces.membership", r.choice(["PUT", "DELETE"]), f"/api/v1/spaces/{w.space}/membership", w, r, token=w.ben_token)),
    ("collections.list", 1, lambda w, r: api("collections.list", "GET", "/api/v1/collections", w, r, query=page_query(w, r))),
    ("collections.create", 1, lambda w, r: api("collections.create", "POST", "/api/v1/collections", w, r, body={"name": f"List {r.randrange(10**6)}"})),
    ("collections.patch", 1, lambda w, r: api("collections.patch", "PATCH", f"/api/v1/collections/{w.collection_id}", w, r, body={"name": "Saved"})),
    ("collections.delete", 1, lambda w, r: api("collections.delete", "DELETE", f"/api/v1/collections/{w.victim_collection}", w, r)),
    ("items.list", 1, lambda w, r: api("items.list", "GET", f"/api/v1/collections/{w.collection_id}/items", w, r, query=page_query(w, r))),
    ("items.create", 2, lambda w, r: api("items.create", "POST", f"/api/v1/collections/{w.collection_id}/items", w, r,
        body=r.choice([{"postId": w.post_id, "note": "mine"}, {"url": "http://127.0.0.1:9/saved", "note": "a link"}]))),
    ("items.patch", 1, lambda w, r: api("items.patch", "PATCH", f"/api/v1/collections/items/{w.item_id}", w, r, body={"collectionId": w.collection_id, "note": "moved"})),
    ("items.delete", 1, lambda w, r: api("items.delete", "DELETE", f"/api/v1/collections/items/{w.victim_item}", w, r)),
    ("media.upload", 12, upload),  # the parser of a whole body of untrusted bytes gets the most
    ("media.list", 1, lambda w, r: api("media.list", "GET", "/api/v1/me/media", w, r, query=page_query(w, r))),
    ("media.get", 2, lambda w, r: api("media.get", "GET", r.choice(w.media_paths), w, r, token=None)),
    ("search.posts", 3, lambda w, r: api("search.posts", "GET", "/api/v1/search/posts", w, r, query=[("q", r.choice(["post", "hello", "t%C3%ADtulo", "fuzz"]))] + r.choice([
        [], [("in", "title")], [("space", w.space)], [("kind", "text")], [("near", "52.5,13.4"), ("radiusKm", "10")], page_query(w, r)]))),
    ("search.users", 1, lambda w, r: api("search.users", "GET", "/api/v1/search/users", w, r, query=[("q", "an")])),
    ("search.saved", 1, lambda w, r: api("search.saved", "GET", "/api/v1/search/saved", w, r, query=[("q", "hello")])),
    ("history", 1, lambda w, r: api("history", "GET", "/api/v1/me/history", w, r, query=[("sort", r.choice(["viewedAt", "postedAt", "views"])), ("q", "hello"), ("in", "all")][:r.randint(0, 3)])),
    ("history.click", 1, lambda w, r: api("history.click", "POST", f"/api/v1/me/history/{w.ben_post_id}/click", w, r)),
    ("recommended", 1, lambda w, r: api("recommended", "GET", "/api/v1/me/recommended", w, r)),
    ("notifications", 1, lambda w, r: api("notifications", "GET", "/api/v1/me/notifications", w, r, query=[("unread", "true")][:r.randint(0, 1)])),
    ("notifications.read", 1, lambda w, r: api("notifications.read", "POST", "/api/v1/me/notifications/read", w, r, body={"ids": w.notification_ids[:2]})),
    ("stream", 3, lambda w, r: api("stream", "GET", "/api/v1/stream", w, r, token=w.ben_token).header(b"Last-Event-ID", w.event_id)),
    ("healthz", 0.5, lambda w, r: api("healthz", "GET", "/healthz", w, r, token=None)),
    ("openapi", 0.2, lambda w, r: api("openapi", "GET", "/api/v1/openapi.json", w, r, token=None)),
    ("web.page", 4, lambda w, r: web("web.page", "GET", r.choice(["/", "/explore", f"/p/{w.post_id}", f"/p/{w.post_id}/comments", f"/p/{w.post_id}/likes",
        f"/p/{w.post_id}/edit", f"/fragments/post/{w.post_id}", "/u/ben", "/u/ana/followers", "/u/ana/friends", "/follow-requests", f"/s/{w.space}", "/spaces", "/compose", "/collections",
        f"/collections/{w.collection_id}", "/history", "/recommended", "/notifications", "/settings"]), w, r)),
    ("web.search", 1, lambda w, r: web("web.search", "GET", "/search", w, r, query=[("q", "hello+world"), ("type", "posts"), ("in", "all")])),
    ("web.login", 2, lambda w, r: web("web.login", "POST", "/login", w, r, signed_in=False,
        form=[("login", "lou"), ("password", "correct+horse+battery"), ("next", "%2Fexplore")])),
    ("web.signup", 1, lambda w, r: web("web.signup", "POST", "/signup", w, r, signed_in=False,
        form=[("username", f"w{r.randrange(10**9)}"), ("email", f"w{r.randrange(10**9)}%40example.com"), ("password", "correct+horse+battery"), ("displayName", "W")])),
    ("web.logout", 1, throwaway_web_logout),
]
# Templates that use up the batch's throwaway session or objects (the seed check refreshes them for each).
CONSUMING = {"auth.logout", "me.session.delete", "web.logout", "posts.delete", "comments.delete", "collections.delete", "items.delete"}


# MARK: mutations

HUGE = ["18446744073709551616", "9223372036854775807", "9223372036854775808", "-9223372036854775809", "1" + "0" * 400,
        "1e309", "-1e309", "1e-400", "0x7fffffff", "2147483648", "-1", "-0", "0", "00000000000000000000001", "1.0", "NaN", "Infinity"]
STRINGS = ["", " ", "\u0000", "\x00abc", "\t\r\n", "é", "é", "💥" * 50, "\u202e\u2066evil", "\ufeff", "\ud800", "\udfff\ud800",
           "a" * 10_000, "%", "%zz", "%00", "%C0%80", "%FF%FE", "..%2F..%2F", "../../etc/passwd", "<script>alert(1)</script>",
           "' OR 1=1 --", "\" AND \"", "NEAR(a b)", "*", "a* OR b*", "^x", "-", "()", "\\", "{}", "[]", "null", "true",
           "2026-13-45T25:61:61.000Z", "2026-11-23T22:49:45.187Z", "0000-00-00", "9999-12-31T23:59:59.999Z", "1700000000", "-62135596800000",
           "http://127.0.0.1:9/", "javascript:alert(1)", "file:///etc/passwd", "http://[::1]:9/", "http://0x7f.1/", "A" * 300 + "@x.y"]
WEIRD_JSON: list[Any] = [None, True, False, 0, -1, 1.5, -0.0, 1e308, 2**31, 2**53 + 1, 2**63, 2**64, -(2**63) - 1, 10**40, [], {}, [None],
                         {"a": {"b": {"c": []}}}, [1, "2", None, {}], *STRINGS]
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "CONNECT", "PRI", "get", "G ET", "GÉT", "X" * 100, ""]
WEIRD_HEADERS: list[tuple[bytes, bytes]] = [
    (b"Content-Type", b"application/json; charset=latin1"), (b"Content-Type", b"text/plain"), (b"Content-Type", b""),
    (b"Content-Type", b"multipart/form-data"), (b"Content-Type", b"multipart/form-data; boundary="), (b"Content-Type", b'multipart/form-data; boundary="a b"'),
    (b"Content-Type", b"multipart/form-data; boundary=" + b"x" * 300), (b"Content-Type", b"application/x-www-form-urlencoded"),
    (b"Content-Type", b"application/json\x00"), (b"Content-Type", b"\xff\xfe"),
    (b"Authorization", b"Bearer"), (b"Authorization", b"Bearer "), (b"Authorization", b"bearer x"), (b"Authorization", b"Basic YTpi"),
    (b"Authorization", b"Bearer " + b"A" * 129), (b"Authorization", b"Bearer \xff\xfe"), (b"Authorization", b"Bearer a\x00b"),
    (b"Authorization", b"Bearer ../../x"), (b"Authorization", b"Bearer =====+/~"), (b"Authorization", b"Negotiate " + b"Y" * 5000),
    (b"Cookie", b"plaza_session="), (b"Cookie", b"plaza_session=" + b"x" * 129), (b"Cookie", b"plaza_session=\xff\xfe; plaza_csrf=\x00"),
    (b"Cookie", b";;;=;=x;plaza_session"), (b"Cookie", b"plaza_csrf=" + b"n" * 16), (b"Cookie", b"a=" + b"b" * 8000),
    (b"Cookie", b"; ".join(b"c%d=%d" % (i, i) for i in range(500))), (b"Cookie", b'plaza_session="quoted"'),
    (b"X-CSRF-Token", b""), (b"X-CSRF-Token", b"x" * 43), (b"Sec-Fetch-Site", b"cross-site"),
    (b"Last-Event-ID", b""), (b"Last-Event-ID", b"-1"), (b"Last-Event-ID", b"18446744073709551616"), (b"Last-Event-ID", b"abc"),
    (b"Last-Event-ID", b"1" * 1000), (b"Last-Event-ID", b"\xff\xfe"), (b"Last-Event-ID", b"0"), (b"Last-Event-ID", b"9223372036854775807"),
    (b"X-Forwarded-For", b"1.2.3.4, ::1, garbage, 999.999.999.999"), (b"Forwarded", b'for="[::1]:80";proto=https, for=unknown'),
    (b"X-Forwarded-Proto", b"https"), (b"Host", b""), (b"Host", b"\xff"), (b"Host", b"a" * 2000), (b"Expect", b"100-continue"),
    (b"Expect", b"nonsense"), (b"Connection", b"close"), (b"Connection", b"upgrade"), (b"Upgrade", b"websocket"), (b"Upgrade", b"h2c"),
    (b"Transfer-Encoding", b"gzip"), (b"Transfer-Encoding", b"identity"), (b"Content-Encoding", b"gzip"), (b"Range", b"bytes=0-0,-1,5-1"),
    (b"If-None-Match", b'"' + b"x" * 500 + b'"'), (b"If-Modified-Since", b"yesterday"), (b"Accept", b"text/event-stream"),
    (b"Accept-Language", b"\xff" * 50), (b"X-Empty", b""), (b"X-Long", b"v" * 20_000), (b"X-Huge", b"v" * 200_000),
    (b"X-\xffName", b"v"), (b"Bad Name", b"v"), (b"", b"no name"), (b"X-Obs", b"folded\r\n continued"),
]


def pick_json_path(value: Any, rng: random.Random) -> list:
    """A random path into a JSON value (possibly the root)."""
    path: list = []
    while isinstance(value, (dict, list)) and value and rng.random() < 0.75:
        key = rng.choice(list(value.keys())) if isinstance(value, dict) else rng.randrange(len(value))
        path.append(key)
        value = value[key]
    return path


def json_replace(obj: Any, path: list, new: Any) -> Any:
    if not path:
        return new
    target = obj
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return obj


def mutate_json(req: Req, rng: random.Random) -> str:
    obj = copy.deepcopy(req.body)
    path = pick_json_path(obj, rng)
    choice = rng.random()
    if choice < 0.5:
        req.body = json_replace(obj, path, copy.deepcopy(rng.choice(WEIRD_JSON)))
        return f"json {path} = weird"
    if choice < 0.65 and path:
        parent = obj
        for key in path[:-1]:
            parent = parent[key]
        del parent[path[-1]]
        req.body = obj
        return f"json del {path}"
    if choice < 0.75 and isinstance(obj, dict):
        obj[rng.choice(["extra", "__proto__", "kind", "id", "author", "💥", ""])] = copy.deepcopy(rng.choice(WEIRD_JSON))
        req.body = obj
        return "json add key"
    # The text: things json.dumps never writes.
    text = json.dumps(obj)
    edits = [
        lambda t: t.replace(":", ": 1e99999,\"x\":", 1),
        lambda t: t.replace("{", '{"kind":"text","kind":"photo",', 1),
        lambda t: t[:-1] + ",}" if t.endswith("}") else t + ",",
        lambda t: "[" * 100_000 + "]" * 100_000,
        lambda t: '{"a":' * 5000 + "1" + "}" * 5000,
        lambda t: t[: rng.randrange(len(t) + 1)],
        lambda t: "\ufeff" + t,
        lambda t: t + " garbage",
        lambda t: t.replace('"', "'"),
        lambda t: t.replace(" ", "\u00a0"),
        lambda t: t.replace("1", "1" * 400, 1),
        lambda t: t.replace('"', '"\\ud800', 1),
        lambda t: t.replace('"', '"\\u0000', 1),
        lambda t: t.replace('"', '"\\x41', 1),
        lambda t: "NaN", lambda t: "-Infinity", lambda t: "", lambda t: "null", lambda t: '"a string"', lambda t: "1" * 5000,
        lambda t: "/* c */" + t,
    ]
    req.kind = "bytes"
    text = rng.choice(edits)(text)
    req.body = text.encode("utf-8", "surrogatepass") if rng.random() < 0.9 else text.encode("utf-8", "surrogatepass").replace(b"a", b"\xff\xfe", 1)
    return "json text"


def mutate_form(req: Req, rng: random.Random) -> str:
    form = list(req.body)
    if form and rng.random() < 0.6:
        i = rng.randrange(len(form))
        form[i] = (form[i][0], rng.choice(STRINGS + HUGE))
    else:
        form.insert(rng.randrange(len(form) + 1), rng.choice([("", ""), ("=", "="), ("a", None), ("%zz", "%"), ("login", "x"), ("_csrf", ""),
                                                              ("next", "//evil.example"), ("next", "/\t/evil"), ("x" * 5000, "y")]))
    req.body = [(k, v if v is not None else "") for k, v in form]
    return "form field"


def corrupt_image(data: bytes, rng: random.Random) -> bytes:
    data = bytearray(data)
    choice = rng.random()
    if not data:
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
    if choice < 0.3:
        for _ in range(rng.randint(1, 8)):  # bit flips, mostly in the header where sizes live
            position = rng.randrange(min(len(data), 64) if rng.random() < 0.7 else len(data))
            data[position] ^= 1 << rng.randrange(8)
    elif choice < 0.5:
        data = data[: rng.randrange(len(data))]
    elif choice < 0.6 and data[:4] == b"\x89PNG":  # IHDR claiming a huge or zero size
        data[16:24] = rng.choice([b"\xff\xff\xff\xff\xff\xff\xff\xff", b"\x00" * 8, b"\x00\x00\xff\xff\x00\x00\xff\xff", b"\x7f\xff\xff\xff\x00\x00\x00\x01"])
    elif choice < 0.7:
        data = bytearray(rng.choice([b"GIF89a\xff\xff\xff\xff\x80\x00\x00", b"RIFF\xff\xff\xff\xffWEBPVP8 ", b"\x00\x00\x00\x18ftypheic", b"\xff\xd8\xff", b"",
                                     b"<svg xmlns='http://www.w3.org/2000/svg'/>", b"%PDF-1.4", b"\x89PNG\r\n\x1a\n"]))
    else:
        position = rng.randrange(len(data) + 1)
        data[position:position] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
    return bytes(data)


def mutate_multipart(req: Req, rng: random.Random) -> str:
    parts = [Part(list(p.headers), p.content) for p in req.body] or [Part([b'Content-Disposition: form-data; name="file"'], b"")]
    part = rng.choice(parts)
    choice = rng.random()
    if choice < 0.3:
        part.content = corrupt_image(part.content, rng)
        return "image"
    if choice < 0.55:
        # A part's head, where a parser decides what a line, a name and a value are: its line
        # breaks changed (bare LF, bare CR, doubled), or bytes put in (CR, LF, NUL, 0x80-0xFF, ':').
        body = bytearray(body_bytes(req, rng))
        heads = [m.end() for m in re.finditer(re.escape(b"--" + req.boundary) + b"\r\n", body)]
        if heads:
            start = rng.choice(heads)
            end = body.find(b"\r\n\r\n", start)
            end = end + 4 if end >= 0 else len(body)
            for _ in range(rng.randint(1, 3)):
                breaks = [m.start() for m in re.finditer(b"\r\n", body[start:end])]
                if breaks and rng.random() < 0.5:
                    position = start + rng.choice(breaks)
                    body[position:position + 2] = rng.choice([b"\n", b"\r", b"\n\n", b"\r\r\n", b"\n\r\n", b"", b"\r\n\r\n", b"\r\n "])
                else:
                    position = rng.randint(start, end)
                    body[position:position + rng.choice([0, 0, 1, 2])] = rng.choice([
                        b"\n", b"\r", b"\r\n", b"\n\n", b":", b"\x00", b"\t", b" ", b";", b'"', bytes([rng.randrange(0x80, 0x100)]), b"\xc3\xa9", b"\x80:y\r\n"])
                end = min(end, len(body))
        req.kind, req.body = "bytes", bytes(body)
        return "part head bytes"
    if choice < 0.7:
        header = rng.randrange(len(part.headers) + 1)
        weird = rng.choice([b'Content-Disposition: form-data; name="file"\n', b"Content-Disposition: form-data", b'Content-Disposition: form-data; name="other"',
                            b'Content-Disposition: form-data; name="file"; filename="../../\xff\x80.png"', b'Content-Disposition: form-data; name=file; filename=a',
                            b"\x80:y", b"X-\xc3\xa9: v", b": empty", b"NoColon", b"Content-Type: image/png; charset=\xff", b"Content-Type: ",
                            b"Content-Disposition: " + b"a" * 10_000, b"Content-Disposition: attachment; name=\"file\"", b" leading-space: x",
                            b"Content-Disposition: form-data; name=\"file\"; filename*=UTF-8''%E2%9C%A8.png", b"Content-Transfer-Encoding: base64"])
        if header < len(part.headers) and rng.random() < 0.5:
            part.headers[header] = weird
        else:
            part.headers.insert(header, weird)
        req.body = parts
        return "part header"
    if choice < 0.8:
        req.boundary = rng.choice([req.boundary + b"x", req.boundary[:-1], b"", b" ", b"a" * 200, b"\x80", b"B\r\nX: y"])
        return "boundary"
    if choice < 0.9:
        extra = Part([b'Content-Disposition: form-data; name="' + rng.choice([b"file", b"note", b"\xff", b""]) + b'"'], rng.choice([b"", b"x" * 1000, part.content]))
        parts.insert(rng.randrange(len(parts) + 1), extra) if rng.random() < 0.7 else parts.clear()
        req.body = parts
        return "parts"
    body = body_bytes(req, rng)  # the whole body: no final boundary, junk around it, LF-only lines
    req.kind = "bytes"
    req.body = rng.choice([body[: body.rfind(b"--" + req.boundary + b"--")], b"preamble\r\n" + body + b"epilogue", body.replace(b"\r\n", b"\n"),
                           body.replace(b"\r\n\r\n", b"\r\n", 1), body * 2])
    return "multipart text"


def mutate_path(req: Req, rng: random.Random) -> str:
    segments = req.path.split("/")
    i = rng.randrange(1, len(segments)) if len(segments) > 1 else 0
    segments[i] = rng.choice(HUGE + STRINGS[:30] + ["%2F", "%2e%2e", "..", ".", "a%00b", "%FF", "0" * 5000, "💥", "1 1", "+1", "1e3", segments[i] * 2])
    req.path = "/".join(segments) + rng.choice(["", "", "/", "//", "#frag", "?", "%"])
    return "path"


def mutate_query(req: Req, rng: random.Random) -> str:
    query = list(req.query)
    choice = rng.random()
    if query and choice < 0.5:
        i = rng.randrange(len(query))
        name, value = query[i]
        if name == "cursor" and rng.random() < 0.5:  # a cursor that is almost right
            raw = bytearray((value or "").encode("utf-8", "surrogatepass")) or bytearray(b"A")
            raw[rng.randrange(len(raw))] = rng.choice(b"AZaz09-_=+/.%")
            value = raw.decode("latin-1")
        else:
            value = rng.choice(HUGE + STRINGS + [quote(s, safe="", errors="surrogatepass") for s in STRINGS[:20]])
        query[i] = (name, value)
    elif choice < 0.8:
        query.append((rng.choice(["limit", "cursor", "since", "until", "kind", "q", "in", "near", "radiusKm", "days", "unread", "member", "sort",
                                  "space", "lastEventId", "fragment", "next", "type", "", "=", "%zz"]), rng.choice(HUGE + STRINGS + [None])))
    elif query:
        query.append(rng.choice(query) if rng.random() < 0.5 else query.pop(rng.randrange(len(query))))
    else:
        query = [("q", "&&&===??")]
    req.query = query
    return "query"


def mutate_headers(req: Req, rng: random.Random) -> str:
    choice = rng.random()
    if choice < 0.2 and req.headers:
        del req.headers[rng.randrange(len(req.headers))]
        return "header removed"
    if choice < 0.35 and req.headers:
        name, value = rng.choice(req.headers)
        req.headers.insert(rng.randrange(len(req.headers) + 1), (name, value if rng.random() < 0.5 else rng.choice(WEIRD_HEADERS)[1]))
        return "header duplicated"
    if choice < 0.5 and req.headers:
        i = rng.randrange(len(req.headers))
        req.headers[i] = (req.headers[i][0], rng.choice(WEIRD_HEADERS)[1])
        return "header value"
    if choice < 0.55:
        req.headers += [(b"X-Many-%d" % i, b"v") for i in range(rng.choice([100, 1000]))]
        return "many headers"
    name, value = rng.choice(WEIRD_HEADERS)
    req.headers.insert(rng.randrange(len(req.headers) + 1), (name, value))
    return f"header {name[:20]!r}"


def mutate_request_line(req: Req, rng: random.Random) -> str:
    if rng.random() < 0.6:
        req.method = rng.choice(METHODS)
        return "method"
    req.version = rng.choice([b"HTTP/1.0", b"HTTP/2.0", b"HTTP/0.9", b"HTTP/1.1x", b"HTTP/1.10", b"http/1.1", b"", b"HTTP/9.9"])
    return "version"


def mutate_framing(req: Req, rng: random.Random) -> str:
    req.framing = rng.choice(["chunked", "chunked-broken", "short", "long", "none", "two-lengths"])
    return f"framing {req.framing}"


RAW_BYTES = b"\r\n\x00\x80\xff\xc0\xfe\t :;=\"%?#/\\"


def mutate_raw(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    data = bytearray(data)
    if not data:
        return bytes(data), "empty"
    # Half the time aim at the head, where the parser's decisions are.
    head_end = data.find(b"\r\n\r\n")
    span = head_end + 4 if head_end >= 0 and rng.random() < 0.5 else len(data)
    position = rng.randrange(span)
    choice = rng.random()
    if choice < 0.25:
        data[position] ^= 1 << rng.randrange(8)
        return bytes(data), "bit flip"
    if choice < 0.45:
        insert = bytes([rng.choice(RAW_BYTES)]) if rng.random() < 0.7 else bytes([rng.randrange(0x80, 0x100)] * rng.randint(1, 4))
        data[position:position] = insert
        return bytes(data), f"insert {insert[:4]!r}"
    if choice < 0.6:
        del data[position:position + rng.randint(1, 8)]
        return bytes(data), "delete"
    if choice < 0.7:
        return bytes(data[:position]), "truncate"
    if choice < 0.8:
        length = rng.randint(1, 64)
        data[position:position] = data[position:position + length]
        return bytes(data), "duplicate slice"
    if choice < 0.9:
        crlf = data.find(b"\r\n", position)
        if crlf >= 0:
            data[crlf:crlf + 2] = rng.choice([b"\n", b"\r", b"\r\r\n", b"\n\r", b"\r\n "])
        return bytes(data), "line ending"
    data[position:position] = rng.choice([b"\r\n", b"\r\n\r\n", b"\r\nX: y\r\n", b"\r\nContent-Length: 5\r\n", b"\r\nTransfer-Encoding: chunked\r\n",
                                          b"GET / HTTP/1.1\r\n\r\n"])
    return bytes(data), "inserted line"


@dataclass
class Case:
    number: int
    template: str
    data: bytes
    method: bytes
    framed: bool
    mutations: list[str]


def make_case(number: int, world: World, mutate: bool = True) -> Case:
    rng = random.Random(f"{SEED}:{number}")
    chosen = [t for t in TEMPLATES if not ONLY or t[0] in ONLY]
    names, weights = [t[0] for t in chosen], [t[1] for t in chosen]
    name = rng.choices(names, weights)[0]
    req = dict((t[0], t[2]) for t in TEMPLATES)[name](world, rng)
    framed = True
    if mutate:
        structured = [mutate_headers, mutate_path, mutate_query, mutate_request_line]
        if req.kind == "json":
            structured += [mutate_json] * 4
        elif req.kind == "form":
            structured += [mutate_form] * 3
        elif req.kind == "multipart":
            structured += [mutate_multipart] * 5
        if req.method in ("POST", "PUT", "PATCH"):
            structured.append(mutate_framing)
        raw = rng.random() < 0.35
        for _ in range(rng.choice([0, 1, 1, 2, 3]) if raw else rng.choice([1, 1, 2, 3])):
            mutation = rng.choice(structured)
            if mutation is mutate_multipart and req.kind != "multipart":
                continue
            if mutation is mutate_json and req.kind != "json":
                continue
            req.mutations.append(mutation(req, rng))
        framed = req.framing in ("length", "chunked")
    data = serialize(req, rng)
    if mutate and raw:
        framed = False
        for _ in range(rng.choice([1, 1, 2, 3])):
            data, what = mutate_raw(data, rng)
            req.mutations.append(what)
    return Case(number, name, data, request_line(data).split(b" ", 1)[0], framed, req.mutations)


def request_line(data: bytes) -> bytes:
    """The request line as the server reads it: empty lines before it are skipped (RFC 9112,
    section 2.2), so a mutation that inserts one before a HEAD leaves a HEAD."""
    return data.lstrip(b"\r\n").split(b"\r\n", 1)[0]


# MARK: the run


# The paths of Mastodon's client API that Plaza serves (docs/mastodon.md), whose errors are Mastodon's.
MASTODON_PATH = re.compile(
    rb"/(api/v1/(accounts|apps|instance|statuses|timelines|media|notifications|markers|preferences|follow_requests"
    rb"|push/subscription|streaming|custom_emojis|lists|filters|followed_tags|announcements|trends|suggestions"
    rb"|conversations|scheduled_statuses|endorsements|featured_tags|domain_blocks)\b|api/v2/|oauth/)")


def request_target(case: Case) -> bytes:
    """The path the mutated request line names, with runs of slashes as one, as the router reads
    it (empty when it names none)."""
    parts = request_line(case.data).split(b" ")
    return re.sub(rb"/+", b"/", parts[1]) if len(parts) > 2 else b""


def check(case: Case, answer) -> str | None:
    """What is wrong with the answer to `case`, or None."""
    if answer.ended == "timeout":
        return f"no complete answer within {TIMEOUT:.0f} s ({len(answer.data)} bytes: {answer.data[:300]!r})"
    if not answer.data:
        # A request the server cannot delimit (cut, or garbled framing) may end without a word.
        return None if not case.framed else f"connection closed without an answer ({answer.ended})"
    try:
        responses = parse_responses(answer.data, case.method, complete=answer.ended in ("eof", "reset"))
    except Malformed as error:
        return f"malformed response: {error}"
    for response in responses:
        if response.status >= 500:
            if response.status == 503 and b'"images_unavailable"' in response.body:
                continue
            return f"status {response.status}: {response.body[:300]!r}"
        if (response.header("content-type") or "").startswith("application/json") and response.body:
            try:
                body = json.loads(response.body)
            except ValueError:
                return f"status {response.status} with a JSON content type but not JSON: {response.body[:300]!r}"
            if response.status >= 400:
                error = body.get("error") if isinstance(body, dict) else None
                # Mastodon's door answers Mastodon's `{"error": "…"}` (a mutation can turn one of
                # Plaza's paths into one of Mastodon's: /api/v1/me/media into /api/v1/media).
                if isinstance(error, str) and MASTODON_PATH.match(request_target(case)):
                    continue
                if not (isinstance(error, dict) and isinstance(error.get("code"), str) and isinstance(error.get("message"), str)):
                    return f"status {response.status} without the API's error body: {response.body[:300]!r}"
    return None


def signature(problem: str) -> str:
    """Failures alike (up to ids and sizes) share one signature."""
    return re.sub(r"[0-9]+", "N", problem[:70])


def unhandled_errors(log: str) -> Counter:
    """The server's own account of its 500s: `Unhandled error on METHOD PATH: ERROR` lines, by error."""
    return Counter(re.sub(r"[0-9]+", "N", m) for m in re.findall(r"Unhandled error on \S+ \S+: (.*)", log))


def test_mutated_requests_get_well_formed_answers_below_500(tmp_path: Path):
    data = tmp_path / "data"
    data.mkdir()
    # No general rate limits and no daily caps, so no 429 hides a bug (failed sign-ins stay throttled).
    server = PlazaServer(data, tmp_path / "plaza.log", env={
        "PLAZA_RATE_LIMITS": "off", "PLAZA_MEDIA_UPLOADS_PER_DAY": "0", "PLAZA_LINK_PREVIEWS_PER_DAY": "0", "PLAZA_MEDIA_QUOTA_BYTES": "0"})
    server.start()
    print(f"\nfuzz: seed {SEED} (PLAZA_FUZZ_SEED), {COUNT} requests (PLAZA_FUZZ_REQUESTS), server log {server.log_path}")
    started = time.monotonic()
    failures: dict[str, list[tuple[Case, str]]] = {}
    crashes: list[tuple[list[Case], str]] = []
    statuses: Counter = Counter()
    silent = 0
    sent = 0
    try:
        world = World(server)

        # The seeds themselves must be accepted, or the fuzzer only tests the first refusal.
        names = sorted((t[0] for t in TEMPLATES), key=lambda n: n in CONSUMING)
        for name in names:
            if name in CONSUMING:
                world.refresh()
            rng = random.Random(f"{SEED}:seed:{name}")
            req = dict((t[0], t[2]) for t in TEMPLATES)[name](world, rng)
            answer = exchange(server.port, serialize(req, rng), TIMEOUT)
            responses = parse_responses(answer.data, req.method.encode(), complete=answer.ended == "eof")
            assert responses and 200 <= responses[0].status < 400, f"unmutated {name}: {answer.data[:500]!r}"
        world.refresh()

        started = time.monotonic()
        number = 0
        while number < COUNT:
            recent: list[tuple[Case, bool]] = []  # the last cases, and whether each was answered
            for number in range(number, min(COUNT, number + BATCH)):
                case = make_case(number, world)
                answer = exchange(server.port, case.data, TIMEOUT)
                sent += 1
                answered = answer.data.startswith(b"HTTP/")
                recent = (recent + [(case, answered)])[-3:]
                down = answer.ended == "refused" or server.process.poll() is not None
                if not down and (answer.ended == "timeout" or not answered):
                    # No answer: is the server still there? (A trap in a debug build leaves the
                    # process alive for a while, printing its backtrace, and answering nothing.)
                    down = not exchange(server.port, HEALTHZ, 5.0).data.startswith(b"HTTP/1.1 200 ")
                if down:
                    # The culprit is this request, or (when this one found the door shut) the last
                    # one the server took but never answered. It goes last in the list.
                    cases = [c for c, _ in recent]
                    if answer.ended == "refused":
                        unanswered = [c for c, ok in recent[:-1] if not ok]
                        culprit = unanswered[-1] if unanswered else cases[-2] if len(cases) > 1 else case
                        cases = [c for c in cases if c is not culprit] + [culprit]
                    try:
                        server.process.wait(timeout=120)  # let the backtrace reach the log
                    except subprocess.TimeoutExpired:
                        pass
                    server.kill()
                    crashes.append((cases, server.log_path.read_text(errors="replace")))
                    break
                problem = check(case, answer)
                if problem:
                    failures.setdefault(signature(problem), []).append((case, problem))
                if answer.data[:9].startswith(b"HTTP/1."):
                    statuses[answer.data[9:12].decode("latin-1")] += 1
                elif not answer.data:
                    silent += 1
            number += 1
            if server.process is None:  # it died
                if len(crashes) >= MAX_CRASHES:
                    break
                server.start()  # on the same data: go on to find more
                continue
            health = exchange(server.port, HEALTHZ, TIMEOUT)
            assert health.data.startswith(b"HTTP/1.1 200 "), f"/healthz after {sent} requests: {health}\n{server.log()}"
            assert server.process.poll() is None
            world.refresh()
        health = exchange(server.port, HEALTHZ, TIMEOUT)
        assert crashes or health.data.startswith(b"HTTP/1.1 200 "), f"/healthz at the end: {health}"
    finally:
        elapsed = time.monotonic() - started
        alive = server.process is not None and server.process.poll() is None
        stop_problem = None
        if alive:
            try:
                server.stop()  # graceful: exit 0 within 10 s of SIGTERM
            except AssertionError as error:
                stop_problem = str(error)
        server.kill()
        print(f"fuzz: {sent} mutated requests in {elapsed:.1f} s ({sent / max(elapsed, 0.001):.0f}/s); statuses {dict(sorted(statuses.items()))}; "
              f"{silent} closed without an answer (cut or garbled framing); {sum(len(v) for v in failures.values())} failures "
              f"({len(failures)} kinds); {len(crashes)} crashes")

    report = [f"after the run: {stop_problem}"] if stop_problem else []
    for recent, log in crashes:
        # The log from the last fatal error on (a trap's message and backtrace), else its tail.
        mark = max(log.rfind("Fatal error"), log.rfind("*** Signal"))
        excerpt = log[mark:mark + 2500] if mark >= 0 else log[-2500:]
        report.append(f"SERVER DIED on case {recent[-1].number} ({recent[-1].template}; mutations {recent[-1].mutations}); the request:\n"
                      f"{recent[-1].data!r}\nthe cases before it, cut to 300 bytes: {[c.data[:300] for c in recent[:-1]]!r}\nthe server's log:\n{excerpt}")
    for sig, cases in sorted(failures.items(), key=lambda item: -len(item[1])):
        case, problem = min(cases, key=lambda c: len(c[0].data))  # the shortest reproducer
        templates = Counter(c.template for c, _ in cases)
        report.append(f"{len(cases)} x {sig} (in {dict(templates)})\n  e.g. case {case.number}, mutations {case.mutations}: {problem}\n"
                      f"  request: {case.data!r}")
    if report:
        causes = unhandled_errors(server.log_path.read_text(errors="replace"))
        report.insert(0, "server log, unhandled errors: " + (", ".join(f"{n} x {e!r}" for e, n in causes.most_common()) or "none"))
    assert not report, f"seed {SEED}:\n\n" + "\n\n".join(report[:12])
