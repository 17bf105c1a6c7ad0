"""A community's day: simulated people using the seed apps, each in a closed loop with think times
and a realtime stream open, against Plaza (its API and /stream) or PocketBase (its record API and
realtime). Runs in worker processes (asyncio + aiohttp); bench.py's `--day` steps the number of
people up and writes the report. bench/README.md, "A community's day", explains the mix.
"""

from __future__ import annotations

import asyncio
import json
import random
import resource
import subprocess
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

# What a person does once the app is open, with the share of actions each takes. Browsing is 92 %
# of what people do on a social network (Benevenuto et al., "Characterizing User Behavior in
# Online Social Networks", IMC 2009: 92 % of requests were browsing, 8 % were posting, commenting,
# liking and the like); among writes, likes far outnumber comments, and comments posts (Twitter's
# "Timelines at Scale", QCon 2012: ~4,600 tweets/s against ~300,000 timeline reads/s; Facebook's
# TAO paper, USENIX ATC 2013: 99.8 % of its requests are reads).
ACTIONS: list[tuple[str, float]] = [
    ("scroll", 38),         # the next page of the home feed
    ("open_post", 30),      # a post from the feed, with its comments
    ("profile", 10),        # someone's profile: the person, their posts and their heatmap
    ("notifications", 8),   # the notifications page
    ("search", 6),          # a search for a word
    ("like", 5),
    ("comment", 1.5),
    ("save", 1),
    ("post", 0.5),          # one in five with a photo
]
PHOTO_SHARE = 0.2
# Pages a person waits on for more than a page: the photo is sent and processed first.
UPLOADS = {"photo_post"}
# Pages that count: every action above, and opening the app (home feed, page 1, and the
# notifications), which starts each session.
PAGES = ["open_app"] + [name for name, _ in ACTIONS] + ["photo_post"]


@dataclass
class World:
    """Everything a worker needs to act as the people of one system (picklable)."""
    system: str  # "plaza" or "pocketbase"
    port: int
    tokens: list[str]  # Authorization header per user index
    user_ids: list[str]  # Plaza: username; PocketBase: record id
    followees: list[list[int]]
    words: list[str]  # search words
    texts: list[str]  # bodies for posts and comments
    photo: bytes
    think: float  # mean seconds between actions
    actions_per_session: float  # mean actions after opening the app
    seed: int


@dataclass
class Tally:
    """What one worker saw in the measured window."""
    latencies: dict[str, list[float]] = field(default_factory=lambda: {p: [] for p in PAGES})
    errors: dict[str, int] = field(default_factory=dict)
    error_samples: list[str] = field(default_factory=list)
    requests: int = 0
    events: int = 0
    streams_open: int = 0
    streams_failed: int = 0


def photo(directory: Path) -> bytes:
    """A phone photo as apps upload it: a 1600 x 1200 JPEG of about 300 KB (ffmpeg's test pattern
    with noise, so it compresses like a picture rather than a flat image)."""
    out = directory / "day-photo.jpg"
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=1600x1200",
                    "-vf", "noise=alls=12:allf=t", "-frames:v", "1", "-q:v", "5", str(out)], check=True, timeout=120)
    return out.read_bytes()


@dataclass
class Opened:
    id: str
    liked: bool
    saved: bool


class Person:
    """One person of `world`, signed in, with an app open."""

    def __init__(self, world: World, index: int, http: aiohttp.ClientSession, tally: Tally, window: tuple[float, float],
                 rng: random.Random):
        self.w, self.i, self.http, self.tally, self.window, self.rng = world, index, http, tally, window, rng
        self.auth = {"Authorization": world.tokens[index]}
        self.seen: list[tuple[str, str]] = []  # (post id, author id) from the pages read
        self.cursor: str | None = None
        # The post last opened, as the app showed it: a like or a save is of that post, once.
        self.opened: Opened | None = None
        self.collection: str | None = None
        self.base = f"http://127.0.0.1:{world.port}"

    # ---- plumbing ------------------------------------------------------------------------------
    def measuring(self, t0: float) -> bool:
        return self.window[0] <= t0 <= self.window[1]

    async def call(self, method: str, path: str, *, json_body=None, data=None, page: str) -> dict | None:
        t0 = time.time()
        try:
            async with self.http.request(method, self.base + path, headers=self.auth, json=json_body, data=data) as r:
                body = await r.read()
                status = r.status
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
            self.fail(page, t0, f"{method} {path}: {type(exc).__name__} {exc}")
            return None
        if self.measuring(t0):
            self.tally.requests += 1
        if not 200 <= status < 300:
            self.fail(page, t0, f"{method} {path}: {status} {body[:200]!r}")
            return None
        return json.loads(body) if body else {}

    def fail(self, page: str, t0: float, text: str) -> None:
        if self.measuring(t0):
            self.tally.errors[page] = self.tally.errors.get(page, 0) + 1
            if len(self.tally.error_samples) < 5:
                self.tally.error_samples.append(f"{page}: {text}")

    async def page(self, name: str, *calls) -> list:
        """Runs a page's requests together, as an app does, and records how long the page took."""
        t0 = time.time()
        results = await asyncio.gather(*calls)
        if self.measuring(t0):
            self.tally.latencies[name].append((time.time() - t0) * 1000)
        return results

    def remember(self, items: list[tuple[str, str]]) -> None:
        self.seen = (items + self.seen)[:200]

    def some_post(self) -> tuple[str, str] | None:
        return self.rng.choice(self.seen) if self.seen else None

    def text(self) -> str:
        return self.rng.choice(self.w.texts)

    # ---- the loop --------------------------------------------------------------------------------
    async def live(self, until: float) -> None:
        names = [n for n, _ in ACTIONS]
        weights = [w for _, w in ACTIONS]
        while time.time() < until:
            await self.open_app()
            for _ in range(max(1, round(self.rng.expovariate(1 / self.w.actions_per_session)))):
                await asyncio.sleep(self.rng.expovariate(1 / self.w.think))
                if time.time() >= until:
                    return
                await getattr(self, self.rng.choices(names, weights)[0])()
            await asyncio.sleep(self.rng.expovariate(1 / self.w.think))


class PlazaPerson(Person):
    def posts_of(self, doc: dict | None) -> list[tuple[str, str]]:
        return [(p["id"], p["author"]["username"]) for p in (doc or {}).get("items", [])]

    async def open_app(self) -> None:
        home, _ = await self.page("open_app", self.call("GET", "/api/v1/feed/home?limit=20", page="open_app"),
                                  self.call("GET", "/api/v1/me/notifications?limit=20", page="open_app"))
        self.cursor = (home or {}).get("nextCursor")
        self.remember(self.posts_of(home))

    async def scroll(self) -> None:
        path = "/api/v1/feed/home?limit=20" + (f"&cursor={urllib.parse.quote(self.cursor)}" if self.cursor else "")
        (home,) = await self.page("scroll", self.call("GET", path, page="scroll"))
        self.cursor = (home or {}).get("nextCursor")
        self.remember(self.posts_of(home))

    async def open_post(self) -> None:
        if (post := self.some_post()) is None:
            return await self.scroll()
        shown, _ = await self.page("open_post", self.call("GET", f"/api/v1/posts/{post[0]}", page="open_post"),
                                   self.call("GET", f"/api/v1/posts/{post[0]}/comments?limit=20", page="open_post"))
        if shown is not None:
            self.opened = Opened(post[0], shown["viewer"]["liked"], shown["viewer"]["saved"])

    async def profile(self) -> None:
        post = self.some_post()
        name = post[1] if post else self.w.user_ids[self.rng.choice(self.w.followees[self.i])]
        _, posts, _ = await self.page(
            "profile", self.call("GET", f"/api/v1/users/{name}", page="profile"),
            self.call("GET", f"/api/v1/users/{name}/posts?limit=20", page="profile"),
            self.call("GET", f"/api/v1/users/{name}/activity?days=365", page="profile"))
        self.remember(self.posts_of(posts))

    async def notifications(self) -> None:
        await self.page("notifications", self.call("GET", "/api/v1/me/notifications?limit=20", page="notifications"))

    async def search(self) -> None:
        word = self.rng.choice(self.w.words)
        (found,) = await self.page("search", self.call("GET", f"/api/v1/search/posts?q={word}&limit=20", page="search"))
        self.remember(self.posts_of(found))

    async def like(self) -> None:
        if (post := self.opened) is None or post.liked:
            return
        post.liked = True
        await self.page("like", self.call("PUT", f"/api/v1/posts/{post.id}/like", page="like"))

    async def comment(self) -> None:
        if (post := self.some_post()) is None:
            return
        await self.page("comment", self.call("POST", f"/api/v1/posts/{post[0]}/comments",
                                             json_body={"body": self.text()}, page="comment"))

    async def save(self) -> None:
        if (post := self.opened) is None or post.saved:
            return
        post.saved = True
        t0 = time.time()
        if self.collection is None:  # the app finds the person's "Saved" collection, or makes it
            mine = await self.call("GET", "/api/v1/collections", page="save")
            if mine is None:
                return
            found = [c["id"] for c in mine.get("items", []) if c["name"] == "Saved"]
            made = None if found else await self.call("POST", "/api/v1/collections", json_body={"name": "Saved"}, page="save")
            if not found and made is None:
                return
            self.collection = found[0] if found else made["id"]
        await self.call("POST", f"/api/v1/collections/{self.collection}/items", json_body={"postId": post.id}, page="save")
        if self.measuring(t0):
            self.tally.latencies["save"].append((time.time() - t0) * 1000)

    async def post(self) -> None:
        body = {"kind": "text", "title": self.text()[:80], "body": self.text()}
        if self.rng.random() >= PHOTO_SHARE:
            await self.page("post", self.call("POST", "/api/v1/posts", json_body=body, page="post"))
            return
        t0 = time.time()
        form = aiohttp.FormData()
        form.add_field("file", self.w.photo, filename="photo.jpg", content_type="image/jpeg")
        media = await self.call("POST", "/api/v1/me/media", data=form, page="photo_post")
        if media is None:
            return
        body.update(kind="photo", mediaIds=[media["id"]])
        await self.call("POST", "/api/v1/posts", json_body=body, page="photo_post")
        if self.measuring(t0):
            self.tally.latencies["photo_post"].append((time.time() - t0) * 1000)

    async def stream(self, until: float) -> None:
        await sse(self, "/api/v1/stream", until, subscribe=None)


def pb_filter(field: str, ids: list[str]) -> str:
    return "(" + " || ".join(f"{field} = '{i}'" for i in ids) + ")"


class PocketBasePerson(Person):
    """The same person on PocketBase: what an app built on its record API and realtime sends."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        me = self.w.user_ids[self.i]
        self.me = me
        self.home_filter = pb_filter("author", [me] + [self.w.user_ids[f] for f in self.w.followees[self.i]])
        self.before: str | None = None
        self.saved: set[str] = set()

    def posts_of(self, doc: dict | None) -> list[tuple[str, str]]:
        return [(p["id"], p["author"]) for p in (doc or {}).get("items", [])]

    def posts_path(self, filter_: str, sort: str = "-created", per_page: int = 20, extra: str = "&expand=author") -> str:
        return (f"/api/collections/posts/records?filter={urllib.parse.quote(filter_)}&sort={sort}&perPage={per_page}"
                f"&skipTotal=1{extra}")

    def notifications_calls(self, page: str) -> list:
        """PocketBase has no notifications: an app lists the newest comments and likes on the person's posts."""
        mine = urllib.parse.quote(f"post.author = '{self.me}'")
        return [self.call("GET", f"/api/collections/comments/records?filter={mine}&sort=-created&perPage=20&skipTotal=1"
                                 "&expand=author", page=page),
                self.call("GET", f"/api/collections/likes/records?filter={mine}&sort=-created&perPage=20&skipTotal=1"
                                 "&expand=user", page=page)]

    def home(self, page: str, before: str | None):
        f = self.home_filter + (f" && created < '{before}'" if before else "")
        return self.call("GET", self.posts_path(f), page=page)

    def note_home(self, doc: dict | None) -> None:
        items = (doc or {}).get("items", [])
        self.before = items[-1]["created"] if len(items) == 20 else None
        self.remember(self.posts_of(doc))

    async def open_app(self) -> None:
        # The person's saved posts come with the app's start: asking a post at a time would meet
        # PocketBase's randomized throttle (up to 150 ms) for filtered lists of a collection with a
        # list rule that come back empty, its guard against timing attacks.
        home, saves, *_ = await self.page(
            "open_app", self.home("open_app", None),
            self.call("GET", "/api/collections/saves/records?fields=post&sort=-created&perPage=500&skipTotal=1",
                      page="open_app"),
            *self.notifications_calls("open_app"))
        self.note_home(home)
        if saves is not None:
            self.saved = {s["post"] for s in saves["items"]}

    async def scroll(self) -> None:
        (home,) = await self.page("scroll", self.home("scroll", self.before))
        self.note_home(home)

    async def open_post(self) -> None:
        if (post := self.some_post()) is None:
            return await self.scroll()
        pid = post[0]
        comments = urllib.parse.quote(f"post = '{pid}'")
        mine = urllib.parse.quote(f"post = '{pid}' && user = '{self.me}'")
        shown, _, liked = await self.page(
            "open_post", self.call("GET", f"/api/collections/posts/records/{pid}?expand=author", page="open_post"),
            self.call("GET", f"/api/collections/comments/records?filter={comments}&sort=created&perPage=20"
                             "&skipTotal=1&expand=author", page="open_post"),
            # Plaza's post says whether the reader liked it; PocketBase's app asks (and knows its saves).
            self.call("GET", f"/api/collections/likes/records?filter={mine}&perPage=1&skipTotal=1", page="open_post"))
        if shown is not None and liked is not None:
            self.opened = Opened(pid, bool(liked["items"]), pid in self.saved)

    async def profile(self) -> None:
        post = self.some_post()
        uid = post[1] if post else self.w.user_ids[self.rng.choice(self.w.followees[self.i])]
        year_ago = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(time.time() - 365 * 86400))
        _, posts, _ = await self.page(
            "profile", self.call("GET", f"/api/collections/users/records/{uid}", page="profile"),
            self.call("GET", self.posts_path(f"author = '{uid}'"), page="profile"),
            # The heatmap: the app buckets a year of the person's post dates by day.
            self.call("GET", self.posts_path(f"author = '{uid}' && created >= '{year_ago}'", per_page=1000,
                                             extra="&fields=created"), page="profile"))
        self.remember(self.posts_of(posts))

    async def notifications(self) -> None:
        await self.page("notifications", *self.notifications_calls("notifications"))

    async def search(self) -> None:
        word = self.rng.choice(self.w.words)
        (found,) = await self.page("search", self.call(
            "GET", self.posts_path(f"(title ~ '{word}' || body ~ '{word}')"), page="search"))
        self.remember(self.posts_of(found))

    async def like(self) -> None:
        if (post := self.opened) is None or post.liked:
            return
        post.liked = True
        await self.page("like", self.call("POST", "/api/collections/likes/records",
                                          json_body={"post": post.id, "user": self.me}, page="like"))

    async def comment(self) -> None:
        if (post := self.some_post()) is None:
            return
        await self.page("comment", self.call("POST", "/api/collections/comments/records?expand=author",
                                             json_body={"post": post[0], "author": self.me, "body": self.text()},
                                             page="comment"))

    async def save(self) -> None:
        if (post := self.opened) is None or post.saved:
            return
        post.saved = True
        self.saved.add(post.id)
        await self.page("save", self.call("POST", "/api/collections/saves/records",
                                          json_body={"post": post.id, "user": self.me}, page="save"))

    async def post(self) -> None:
        fields = {"author": self.me, "title": self.text()[:80], "body": self.text()}
        if self.rng.random() >= PHOTO_SHARE:
            await self.page("post", self.call("POST", "/api/collections/posts/records?expand=author",
                                              json_body=fields, page="post"))
            return
        form = aiohttp.FormData()
        for k, v in fields.items():
            form.add_field(k, v)
        form.add_field("photos", self.w.photo, filename="photo.jpg", content_type="image/jpeg")
        await self.page("photo_post", self.call("POST", "/api/collections/posts/records?expand=author", data=form,
                                                page="photo_post"))

    async def stream(self, until: float) -> None:
        followees = [self.w.user_ids[f] for f in self.w.followees[self.i]]
        topics = [
            # What Plaza's stream carries: new posts of the people followed, and comments on one's posts
            # (the JS SDK's subscribe(topic, cb, {filter}) sends the options in the topic like this).
            "posts?options=" + json.dumps({"query": {"filter": pb_filter("author", followees)}}),
            "comments?options=" + json.dumps({"query": {"filter": f"post.author = '{self.me}'"}}),
        ]
        await sse(self, "/api/realtime", until, subscribe=topics)


async def sse(person: Person, path: str, until: float, subscribe: list[str] | None) -> None:
    """Holds one Server-Sent Events stream open until `until`, counting the events that arrive."""
    tally = person.tally
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", person.w.port)
    except OSError as exc:
        tally.streams_failed += 1
        person.fail("stream", time.time(), f"connect: {exc}")
        return
    try:
        auth = "" if subscribe is not None else f"Authorization: {person.w.tokens[person.i]}\r\n"
        writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Accept: text/event-stream\r\n\r\n".encode())
        await writer.drain()
        status = await reader.readline()
        if b" 200 " not in status:
            tally.streams_failed += 1
            return
        while (await reader.readline()) not in (b"\r\n", b""):
            pass
        opened = False
        event = None
        while time.time() < until:
            try:
                line = await asyncio.wait_for(reader.readline(), timeout=max(0.1, until - time.time()))
            except asyncio.TimeoutError:
                break
            if not line:
                tally.streams_failed += 1
                return
            if line.startswith(b"event:"):
                event = line[6:].strip().decode()
            elif line.startswith(b"data:") and event:
                if event == "PB_CONNECT" and subscribe is not None:
                    client = json.loads(line[5:])["clientId"]
                    done = await person.call("POST", "/api/realtime", json_body={"clientId": client, "subscriptions": subscribe},
                                             page="stream")
                    if done is None:
                        tally.streams_failed += 1
                        return
                    opened = True
                    tally.streams_open += 1
                elif event == "ready" and not opened:
                    opened = True
                    tally.streams_open += 1
                elif person.measuring(time.time()) and event not in ("ready", "PB_CONNECT"):
                    tally.events += 1
                event = None
    finally:
        writer.close()


async def run_people(world: World, people: list[int], start: float, ramp: float, window: tuple[float, float]) -> Tally:
    tally = Tally()
    kind = PlazaPerson if world.system == "plaza" else PocketBasePerson
    timeout = aiohttp.ClientTimeout(total=60)
    connector = aiohttp.TCPConnector(limit=0, force_close=False, enable_cleanup_closed=True)
    until = window[1]
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as http:
        async def one(index: int) -> None:
            rng = random.Random(f"{world.seed}:{index}:{start}")
            person = kind(world, index, http, tally, window, rng)
            await asyncio.sleep(max(0.0, start + rng.uniform(0, ramp) - time.time()))
            stream = asyncio.create_task(person.stream(until))
            try:
                await person.live(until)
            finally:
                await stream
        await asyncio.gather(*(one(i) for i in people))
    return tally


def worker(world: World, people: list[int], start: float, ramp: float, window: tuple[float, float], out) -> None:
    """A worker process: runs `people` and sends its Tally down the pipe `out`."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    out.send(asyncio.run(run_people(world, people, start, ramp, window)))
    out.close()
