"""Graph-shape growth (`--growth-shapes`): Plaza's list endpoints for one person whose corner of
the graph grows ten-fold, the rest staying the same. See bench/README.md, "Graph shapes".

Six scenarios share one Plaza: a person following 5 quiet accounts while the site grows; one
following many accounts; one following a prolific account; a long comment thread; a person with
many notifications; a long reading history. Each is loaded at its small size, measured, grown to
10 × small, and measured again; everything goes through the public HTTP API (`bulk.Loader`).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable
from urllib.parse import quote

import requests

from .bulk import Loader, Result, check
from .dataset import PASSWORD, Dataset, Sizes
from .scenarios import Side
from .seed import Phase, Seeded
from .servers import Plaza
from .wrk import RunResult, rotate_args, write_requests

FACTOR = 10  # large = FACTOR × small
GROWTH_LIMIT = 1.25  # p99(large) / p99(small) above this is flagged
PAGE = 20  # every measured request asks for one page of 20
STAGES = ("small", "large")

# The accounts; the crowd are shape_crowd_00000… (scenario 2's followees, and the commenters).
QUIET_READER = "shape_reader_quiet"
MANY_READER = "shape_reader_many"
PROLIFIC_READER = "shape_reader_prolific"
PROLIFIC = "shape_prolific"
THREAD_AUTHOR = "shape_thread_author"
THREAD_READER = "shape_reader_thread"
NOTIFIED = "shape_notified"
HISTORY_READER = "shape_reader_history"


def crowd_name(i: int) -> str:
    return f"shape_crowd_{i:05d}"


def quiet_name(i: int) -> str:
    return f"shape_quiet_{i}"


@dataclass(frozen=True)
class ShapeSizes:
    """The small size of each scenario (the large one is FACTOR times it), after --shape-scale."""
    scale: float
    many: int  # accounts the many-follows reader follows (small); the crowd is FACTOR × this
    crowd_posts: int  # posts by each crowd account
    quiet_accounts: int  # accounts the quiet reader follows (also followed by the prolific reader)
    quiet_posts: int  # posts by each of them
    prolific: int  # posts by the prolific account (small)
    thread: int  # comments on the big thread (small)
    thread_commenters: int  # crowd accounts taking turns in the thread
    notifications: int  # notifications of the notified person (small)
    notified_posts: int  # their posts, which the notifications are comments on
    history: int  # posts in the history reader's reading history (small)
    deep: int  # items skipped for a "deep page" (at most half the small size; whole pages)

    @classmethod
    def scaled(cls, scale: float) -> "ShapeSizes":
        def s(n: int, least: int) -> int:
            return max(least, round(n * scale))

        return cls(scale=scale, many=s(100, 1), crowd_posts=5, quiet_accounts=5, quiet_posts=10, prolific=s(5000, 20),
                   thread=s(2000, 20), thread_commenters=10, notifications=s(5000, 20), notified_posts=50,
                   history=s(5000, 20), deep=100)

    @property
    def crowd(self) -> int:
        return self.many * FACTOR

    def at(self, small: int, stage: int) -> int:
        return small * (FACTOR if stage else 1)

    def depth(self, small_items: int) -> int:
        """Items skipped for a deep page: `deep`, at most half the small size, in whole pages (0: none)."""
        d = min(self.deep, small_items // 2)
        return d - d % PAGE

    def describe(self) -> str:
        return (f"scale {self.scale:g}; {self.crowd:,} crowd accounts with {self.crowd_posts} posts each; "
                f"small sizes: {self.many:,} follows, {self.prolific:,} posts by one account, {self.thread:,} comments, "
                f"{self.notifications:,} notifications, {self.history:,} viewed posts (large: {FACTOR} ×)")


# ---- what is measured ----------------------------------------------------------------------

@dataclass
class Endpoint:
    """One measured request: a first page, or a page `depth` items further (cursor found by walking)."""
    key: str
    label: str  # what is sent, for the report
    path: str  # the first page, with ?limit=
    reader: str  # whose token signs the request
    depth: int = 0  # 0: the first page
    page: bool = True  # a list page (the preflight wants a non-empty `items`), else one object


@dataclass
class ShapeScenario:
    key: str
    title: str
    loads: str  # what the scenario loads, for the report
    size: Callable[[int], str]  # stage -> the size measured, e.g. "5,000 comments"
    endpoints: list[Endpoint]


@dataclass
class ShapeMeasure:
    stage: int
    size: str
    result: RunResult | None = None
    note: str = ""  # why there is no result
    checked: str = ""  # what the preflight saw
    label: str = ""  # what was sent (a deep page's cursor depends on the stage)


@dataclass
class ShapeResult:
    scenario: ShapeScenario
    endpoint: Endpoint
    measures: list[ShapeMeasure] = field(default_factory=list)

    def result(self, stage: int) -> RunResult | None:
        m = next((m for m in self.measures if m.stage == stage), None)
        return m.result if m else None

    def p99(self, stage: int) -> float | None:
        r = self.result(stage)
        return r.p99_ms if r else None

    def cpu_ms(self, stage: int) -> float | None:
        """Server CPU time per request: steadier than latency on a machine that is not idle."""
        r = self.result(stage)
        return cpu_per_request_ms(r) if r else None

    @property
    def cpu_growth(self) -> float | None:
        small, large = self.cpu_ms(0), self.cpu_ms(1)
        return large / small if small and large else None

    @property
    def growth(self) -> float | None:
        small, large = self.p99(0), self.p99(1)
        return large / small if small and large else None

    @property
    def grew(self) -> bool:
        return self.growth is not None and self.growth > GROWTH_LIMIT


# ---- loading -------------------------------------------------------------------------------

class ShapeWorld:
    """Loads the shapes into one Plaza, stage by stage, and names the requests to measure."""

    def __init__(self, server: Plaza, sizes: ShapeSizes, *, seed: int = 42, processes: int = 2, threads: int = 8):
        self.server, self.sizes, self.seed = server, sizes, seed
        self.loader = Loader(server.port, processes=processes, threads=threads)
        self.seeded = Seeded("Plaza")
        self.text = Dataset(Sizes(users=2, posts=0, follows=0, comments=0), seed=seed)  # its words only
        self.tokens: dict[str, str] = {}
        self.post_ids: list[str] = []  # every post loaded, in order
        self.site_posts: dict[int, int] = {}  # stage -> posts on the site when it was measured
        self.history_at: dict[int, int] = {}  # stage -> posts in the reading history then
        self.thread_post = ""
        self.notified_posts: list[str] = []
        self.viewed: set[str] = set()
        self.loaded = {"many": 0, "prolific": 0, "thread": 0, "notifications": 0, "history": 0}
        self._texts = 0
        self._comments = 0

    def close(self) -> None:
        self.loader.close()

    @property
    def crowd(self) -> list[str]:
        return [crowd_name(i) for i in range(self.sizes.crowd)]

    # -- HTTP, timed ----------------------------------------------------------------------
    def _timed(self, name: str, reqs: Iterable, pick=None) -> list[Result]:
        t0 = time.monotonic()
        results = self.loader(reqs, pick=pick)
        check(f"Plaza {name}", results)
        if results:
            self.seeded.phase(name, len(results), t0)
            ph = self.seeded.phases[-1]
            print(f"    Plaza: {ph.name}: {ph.count:,} in {ph.seconds:.1f}s ({ph.rate:,.0f}/s)", flush=True)
        return results

    def register(self, names: list[str]) -> None:
        results = self._timed("register accounts", (
            ("POST", "/api/v1/auth/register", None,
             {"username": n, "email": f"{n}@bench.example.com", "password": PASSWORD}) for n in names
        ), pick=("token",))
        self.tokens.update({n: "Bearer " + r.value for n, r in zip(names, results)})

    def follow(self, name: str, follower: str, followees: list[str]) -> None:
        self._timed(name, (("PUT", f"/api/v1/users/{f}/follow", self.tokens[follower], None) for f in followees))

    def posts(self, name: str, authors: list[str]) -> list[str]:
        """One text post per entry of `authors` (names); returns their ids."""
        start = self._texts
        self._texts += len(authors)

        def reqs():
            for k, author in enumerate(authors):
                p = self.text.post(start + k)
                yield ("POST", "/api/v1/posts", self.tokens[author], {"kind": "text", "title": p.title, "body": p.body})

        ids = [r.value for r in self._timed(name, reqs(), pick=("id",))]
        self.post_ids.extend(ids)
        return ids

    def comments(self, name: str, targets: list[tuple[str, str]]) -> None:
        """One comment per (post id, commenter name)."""
        start = self._comments
        self._comments += len(targets)

        def reqs():
            for k, (post, who) in enumerate(targets):
                body = self.text.text(random.Random(f"{self.seed}:shape comment:{start + k}"), 5, 25).capitalize() + "."
                yield ("POST", f"/api/v1/posts/{post}/comments", self.tokens[who], {"body": body})

        self._timed(name, reqs())

    def views(self, name: str, reader: str, posts: list[str]) -> None:
        self._timed(name, (("POST", f"/api/v1/posts/{p}/view", self.tokens[reader], None) for p in posts))
        self.viewed.update(posts)

    # -- the plan ---------------------------------------------------------------------------
    def setup(self) -> None:
        """The accounts, the follows that do not grow, the quiet accounts' posts, the posts that
        the thread and the notifications hang on."""
        z = self.sizes
        quiet = [quiet_name(i) for i in range(z.quiet_accounts)]
        self.register(self.crowd + quiet + [QUIET_READER, MANY_READER, PROLIFIC_READER, PROLIFIC, THREAD_AUTHOR,
                                            THREAD_READER, NOTIFIED, HISTORY_READER])
        self.follow("follows: quiet reader", QUIET_READER, quiet)
        self.follow("follows: prolific reader", PROLIFIC_READER, [PROLIFIC] + quiet)
        self.posts("posts: quiet accounts", [q for q in quiet for _ in range(z.quiet_posts)])
        self.thread_post = self.posts("posts: thread", [THREAD_AUTHOR])[0]
        self.notified_posts = self.posts("posts: notified person", [NOTIFIED] * z.notified_posts)

    def load(self, stage: int) -> None:
        """Grows every scenario to its size at `stage` (the small size first, then the rest)."""
        z, tag = self.sizes, STAGES[stage]
        crowd = self.crowd

        # 2. the many-follows reader follows more of the crowd, who then post
        was, now = self.loaded["many"], z.at(z.many, stage)
        self.follow(f"{tag}: follows: many reader {was:,}-{now:,}", MANY_READER, crowd[was:now])
        self.posts(f"{tag}: posts: crowd {was:,}-{now:,}", [c for c in crowd[was:now] for _ in range(z.crowd_posts)])
        self.loaded["many"] = now

        # 3. the prolific account posts (also the growing rest of the site for 1.)
        was, now = self.loaded["prolific"], z.at(z.prolific, stage)
        self.posts(f"{tag}: posts: prolific {was:,}-{now:,}", [PROLIFIC] * (now - was))
        self.loaded["prolific"] = now

        # 4. the thread: a few crowd accounts take turns
        was, now = self.loaded["thread"], z.at(z.thread, stage)
        talkers = crowd[:min(z.thread_commenters, len(crowd))]
        self.comments(f"{tag}: comments: thread {was:,}-{now:,}",
                      [(self.thread_post, talkers[k % len(talkers)]) for k in range(was, now)])
        self.loaded["thread"] = now

        # 5. notifications: comments on the notified person's posts, one commenter per post, so each
        # comment notifies exactly them (no other commenter in the thread to hear of a reply)
        was, now = self.loaded["notifications"], z.at(z.notifications, stage)
        posts = self.notified_posts
        self.comments(f"{tag}: comments: notifications {was:,}-{now:,}",
                      [(posts[k % len(posts)], crowd[(k % len(posts)) % len(crowd)]) for k in range(was, now)])
        self.loaded["notifications"] = now

        # 6. reading history: views of posts not viewed yet, in a fixed random order
        was, now = self.loaded["history"], z.at(z.history, stage)
        fresh = [p for p in self.post_ids if p not in self.viewed]
        random.Random(f"{self.seed}:shape history:{stage}").shuffle(fresh)
        if len(fresh) < now - was:
            print(f"    only {len(fresh):,} posts to view (wanted {now - was:,})", flush=True)
        pick = fresh[:now - was]
        self.views(f"{tag}: views: history {was:,}-{was + len(pick):,}", HISTORY_READER, pick)
        self.loaded["history"] = self.history_at[stage] = was + len(pick)
        self.site_posts[stage] = len(self.post_ids)

    def phases(self) -> list[Phase]:
        return self.seeded.phases

    # -- what is measured -------------------------------------------------------------------
    def scenarios(self) -> list[ShapeScenario]:
        z = self.sizes
        home = "/api/v1/feed/home?limit=20"
        user_posts = f"/api/v1/users/{PROLIFIC}/posts?limit=20"
        comments = f"/api/v1/posts/{self.thread_post}/comments?limit=20"
        notifications = "/api/v1/me/notifications?limit=20"
        history = "/api/v1/me/history?limit=20"

        def pages(key: str, what: str, path: str, reader: str, small_items: int) -> list[Endpoint]:
            out = [Endpoint(f"{key}_first", f"{what}, first page", path, reader)]
            d = z.depth(small_items)
            if d:
                out.append(Endpoint(f"{key}_deep", f"{what}, {d:,} deep (page {d // PAGE + 1})", path, reader, d))
            return out

        return [
            ShapeScenario(
                "quiet", f"1. Following {z.quiet_accounts} quiet accounts while the site grows",
                f"`{QUIET_READER}` follows {z.quiet_accounts} accounts with {z.quiet_posts} posts each; the rest of the "
                f"site (the other scenarios' posts, by people they do not follow) grows ten-fold.",
                lambda st: f"{self.site_posts.get(st, 0):,} posts on the site",
                [Endpoint("home_first", "home feed, first page", home, QUIET_READER)]),
            ShapeScenario(
                "many", "2. Following many accounts",
                f"`{MANY_READER}` follows {z.many:,}, then {z.at(z.many, 1):,} crowd accounts with {z.crowd_posts} posts each.",
                lambda st: f"follows {z.at(z.many, st):,} ({z.at(z.many, st) * z.crowd_posts:,} posts)",
                pages("home", "home feed", home, MANY_READER, z.many * z.crowd_posts)),
            ShapeScenario(
                "prolific", "3. Following a prolific account",
                f"`{PROLIFIC_READER}` follows `{PROLIFIC}` ({z.prolific:,}, then {z.at(z.prolific, 1):,} posts) and the "
                f"{z.quiet_accounts} quiet accounts; the follows come first, the posts after.",
                lambda st: f"{z.at(z.prolific, st):,} posts",
                pages("home", "home feed", home, PROLIFIC_READER, z.prolific)
                + pages("user_posts", f"`{PROLIFIC}`'s posts", user_posts, PROLIFIC_READER, z.prolific)),
            ShapeScenario(
                "thread", "4. A long comment thread",
                f"One post by `{THREAD_AUTHOR}` gets {z.thread:,}, then {z.at(z.thread, 1):,} comments, "
                f"{min(z.thread_commenters, z.crowd)} crowd accounts taking turns; read by `{THREAD_READER}`.",
                lambda st: f"{z.at(z.thread, st):,} comments",
                pages("comments", "comments (oldest first)", comments, THREAD_READER, z.thread)
                + [Endpoint("post", "the post", f"/api/v1/posts/{self.thread_post}", THREAD_READER, page=False)]),
            ShapeScenario(
                "notifications", "5. Many notifications",
                f"`{NOTIFIED}` writes {z.notified_posts} posts; crowd accounts comment on them, one commenter per post, "
                f"{z.notifications:,}, then {z.at(z.notifications, 1):,} comments: each is one unread notification "
                "(kind `comment`, with its post and comment).",
                lambda st: f"{z.at(z.notifications, st):,} notifications",
                pages("notifications", "notifications", notifications, NOTIFIED, z.notifications)),
            ShapeScenario(
                "history", "6. A long reading history",
                f"`{HISTORY_READER}` views {z.history:,}, then {z.at(z.history, 1):,} different posts of the site "
                "(`POST /posts/{id}/view`, in random order).",
                lambda st: f"{self.history_at.get(st, 0):,} viewed posts",
                pages("history", "reading history", history, HISTORY_READER, z.history)),
        ]

    # -- turning an endpoint into a wrk side ----------------------------------------------------
    def side(self, ep: Endpoint, workdir: Path, name: str, threads: int) -> Side:
        """The wrk request for `ep` now; for a deep page, walks the list to find the cursor."""
        auth = self.tokens[ep.reader]
        path, label = ep.path, f"GET {ep.path}"
        unavailable = None
        if ep.depth:
            cursor, seen = walk(self.server.base, ep.path, auth, ep.depth)
            path = ep.path + "&cursor=" + quote(cursor or "", safe="")
            label = f"GET {ep.path}&cursor=(after {seen:,})"
            if cursor is None or seen < ep.depth:
                unavailable = f"the list ended after {seen:,} items"
        f = write_requests(workdir / f"{name}.tsv", [("GET", path, auth, "")])
        return Side(label=label, args=lambda: rotate_args(f, threads), first=("GET", path, auth, ""),
                    expect_items=ep.page, unavailable=unavailable)


def cpu_per_request_ms(r: RunResult) -> float | None:
    return r.server_cpu / r.rps * 1000 if r.rps and r.server_cpu else None


def walk(base: str, path: str, auth: str, depth: int) -> tuple[str | None, int]:
    """Follows nextCursor from the first page of `path` (pages of 20) until `depth` items are behind."""
    cursor, seen = None, 0
    with requests.Session() as session:
        for _ in range(depth // PAGE + 1):  # bounded
            if seen >= depth:
                break
            url = base + path + ("&cursor=" + quote(cursor, safe="") if cursor else "")
            r = session.get(url, headers={"Authorization": auth, "Accept": "application/json"}, timeout=60)
            r.raise_for_status()
            doc = r.json()
            seen += len(doc["items"])
            cursor = doc.get("nextCursor")
            if not cursor:
                break
    return cursor, seen
