"""Step 22's social features: hashtags, boosts and polls. What is added to each loaded system
after the other scenarios ran (tagged posts, followed tags, boosts, polls), and the scenarios that
read and write them. See bench/README.md, "The social scenarios"."""

from __future__ import annotations

import itertools
import math
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests

from .bulk import Loader, check
from .dataset import Dataset, Post
from .scenarios import LikeCounter, Line, Scenario, Side, _body, _q, _rotate
from .seed import Phase, PocketBaseSeeder, Seeded, pb_id
from .servers import Plaza, PocketBase

KEYS = ["tag_timeline", "feed_home_tags", "boost", "poll_vote"]

# Real words, none of them one of the dataset's made-up words; weighted 1/rank, so #ramen is the
# most used tag (in 46% of the tagged posts, #coffee in 26%, #gardening, the 5th, in 11%).
TAG_NAMES = ["ramen", "coffee", "hiking", "jazz", "gardening", "baking", "chess", "photography", "cycling",
             "books", "sunset", "pottery", "running", "birds", "astronomy", "knitting", "climbing", "vinyl",
             "sushi", "tea"]
TIMELINE_TAGS = 5  # the tag timeline reads the most used tags,
TIMELINE_PAGES = 4  # each its first page and the next ones by cursor
HOME_READERS = 200  # the home-feed scenario reads every 5th user's home (at 1,000 users),
HOME_PAGES = 3  # its first pages
TURNS = 10  # Plaza gets the tagged posts and the boosts in turns, so a home's first pages mix them
POLL_OPTIONS = ["a", "b", "c"]
BOOST_LAG = 64  # social.lua (LAG) undoes a boost 64 boosts later, in the same wrk thread
VOTE_RATE_BOUND = 20_000  # votes/s no run will reach (Plaza took 3,400/s on a busy machine): the polls needed


@dataclass
class Sizes:
    tagged_posts: int = 10_000
    tag_follows: int = 3  # tags each user follows
    boosts: int = 5  # posts each user boosts
    polls: int = 1  # polls to vote on (each takes one vote of each user)


class Social:
    """The social additions to a Dataset, deterministic like it: post i of the tagged posts is a
    post like the others with 1-3 hashtags written at the end of its text."""

    def __init__(self, ds: Dataset, sizes: Sizes):
        self.ds, self.sizes = ds, sizes
        self.tags = [t for t in TAG_NAMES if ds.search_word not in t]  # PocketBase's search is a substring match
        self.tag_cum = list(itertools.accumulate(1.0 / rank for rank in range(1, len(self.tags) + 1)))

    @staticmethod
    def polls_needed(users: int, seconds: float, runs: int) -> int:
        """Polls enough for `runs` runs of `seconds` each at VOTE_RATE_BOUND votes/s: each voter
        votes once on a poll, so every `users` votes move on to the next poll."""
        return max(1, math.ceil(VOTE_RATE_BOUND * seconds * runs / users))

    def tagged_post(self, i: int) -> tuple[Post, list[int]]:
        """The i-th tagged post and its tags (indexes into self.tags)."""
        rng = random.Random(f"{self.ds.seed}:tagged:{i}")
        author = rng.randrange(self.ds.sizes.users)
        title = self.ds.text(rng, 3, 8).capitalize()
        tags: list[int] = []
        for _ in range(rng.randint(1, 3)):
            t = rng.choices(range(len(self.tags)), cum_weights=self.tag_cum)[0]
            if t not in tags:
                tags.append(t)
        body = self.ds.text(rng, 15, 60).capitalize() + ". " + " ".join("#" + self.tags[t] for t in tags)
        return Post(self.ds.sizes.posts + i, author, title, body), tags

    def tagged_posts(self, start: int = 0, stop: int | None = None):
        for i in range(start, self.sizes.tagged_posts if stop is None else stop):
            yield self.tagged_post(i)

    def followed_tags(self, user: int) -> list[int]:
        rng = random.Random(f"{self.ds.seed}:tag-follows:{user}")
        return rng.sample(range(len(self.tags)), min(self.sizes.tag_follows, len(self.tags)))

    def boost_order(self) -> list[int]:
        """A fixed shuffle of the dataset's posts (not the tagged ones, so boosts and tagged posts
        can be loaded in turns); social.lua's boost pairs index into it."""
        order = list(range(self.ds.sizes.posts))
        random.Random(f"{self.ds.seed}:boosts").shuffle(order)
        return order

    def boost_pair(self, k: int, order: list[int]) -> tuple[int, int]:
        """Pair k -> (user, post index), as social.lua (and like.lua) map it: one-to-one for k < U x P."""
        users = self.ds.sizes.users
        u = k % users
        stride = max(1, len(order) // users)
        return u, order[(k // users + u * stride) % len(order)]

    @property
    def setup_boosts(self) -> int:
        """The set-up boosts are pairs 0 .. U x boosts - 1: each user boosts `boosts` posts."""
        return self.ds.sizes.users * self.sizes.boosts

    def poll_body(self, j: int) -> str:
        return f"Poll {j + 1}: which one? " + " ".join(f"({o})" for o in POLL_OPTIONS)


@dataclass
class Loaded:
    """What the social scenarios need to know about one system beyond Seeded."""
    tag_ids: list[str] = field(default_factory=list)  # Plaza: the tag's name; PocketBase: its record id
    boost_order: list[int] = field(default_factory=list)
    poll_ids: list[str] = field(default_factory=list)
    poll_unavailable: str | None = None  # why this system has no polls to vote on


def _phase(seeded: Seeded, ph: Phase) -> None:
    seeded.phases.append(ph)
    print(f"    {seeded.system}: {ph.name}: {ph.count:,} in {ph.seconds:.1f}s ({ph.rate:,.0f}/s)", flush=True)


def load_plaza(server: Plaza, seeded: Seeded, social: Social, *, processes: int, threads: int) -> Loaded:
    """Through the API, one request a record: followed tags first (a tagged post then enters its
    followers' homes as it is written, as it would), then in TURNS turns a share of the tagged
    posts and a share of the boosts (each into the boosters' followers' homes), then the polls by
    an account of their own that does not vote."""
    ds = social.ds
    out = Loaded(tag_ids=list(social.tags), boost_order=social.boost_order())
    tok = seeded.tokens
    with Loader(server.port, processes=processes, threads=threads) as load:
        def timed(name: str, reqs: list, pick=None) -> tuple[list, float]:
            t0 = time.monotonic()
            results = load(reqs, pick=pick)
            check(f"{seeded.system} {name}", results)
            return results, time.monotonic() - t0

        results, secs = timed("follow tags", [("PUT", f"/api/v1/hashtags/{social.tags[t]}/follow", tok[u], None)
                                              for u in range(ds.sizes.users) for t in social.followed_tags(u)])
        _phase(seeded, Phase("follow tags", len(results), secs))
        assert len(seeded.post_ids) == ds.sizes.posts
        spent = {"tagged posts": 0.0, "boosts": 0.0}
        n_posts, n_boosts = social.sizes.tagged_posts, social.setup_boosts
        for turn in range(TURNS):
            results, secs = timed("tagged posts", [
                ("POST", "/api/v1/posts", tok[p.author], {"kind": "text", "title": p.title, "body": p.body})
                for p, _ in social.tagged_posts(n_posts * turn // TURNS, n_posts * (turn + 1) // TURNS)], pick=("id",))
            seeded.post_ids.extend(r.value for r in results)
            spent["tagged posts"] += secs
            pairs = [social.boost_pair(k, out.boost_order)
                     for k in range(n_boosts * turn // TURNS, n_boosts * (turn + 1) // TURNS)]
            _, secs = timed("boosts", [("PUT", f"/api/v1/posts/{seeded.post_ids[p]}/boost", tok[u], None) for u, p in pairs])
            spent["boosts"] += secs
        _phase(seeded, Phase("tagged posts", n_posts, spent["tagged posts"]))
        _phase(seeded, Phase("boosts", n_boosts, spent["boosts"]))

        r = requests.post(server.base + "/api/v1/auth/register", timeout=60,
                          json={"username": "bench_pollster", "email": "bench_pollster@bench.example.com",
                                "password": "bench-password-1"})
        r.raise_for_status()
        pollster = "Bearer " + r.json()["token"]
        t0 = time.monotonic()
        polls = [("POST", "/api/v1/posts", pollster, {
            "kind": "text", "body": social.poll_body(j),
            "poll": {"options": POLL_OPTIONS, "multiple": False, "expiresInSeconds": 86400}}) for j in range(social.sizes.polls)]
        r = requests.post(server.base + "/api/v1/posts", headers={"Authorization": pollster}, json=polls[0][3], timeout=60)
        if not r.ok or not isinstance(r.json().get("poll"), dict):  # polls came with 7d63976
            out.poll_unavailable = (f"no polls in this Plaza: POST /api/v1/posts with a `poll` answered {r.status_code} "
                                    + (r.text[:120] if not r.ok else "with a post without one"))
            print(f"    {seeded.system}: {out.poll_unavailable}", flush=True)
        else:
            results, _ = timed("polls", polls[1:], pick=("id",))
            out.poll_ids = [r.json()["id"]] + [x.value for x in results]
            _phase(seeded, Phase("polls", len(out.poll_ids), time.monotonic() - t0))
    return out


def load_pocketbase(server: PocketBase, seeded: Seeded, social: Social) -> Loaded:
    """The same through the batch API: tags, the tagged posts with their `tags` relation, the
    boosts (records with ids of their own, so the boost scenario can delete them), the polls."""
    ds = social.ds
    seeder = PocketBaseSeeder(server, ds, processes=1, threads=2)
    seeder.seeded = seeded  # its phases and ids go on with the loaded system's
    try:
        return _load_pocketbase(seeder, social)
    finally:
        seeder.close()


def _load_pocketbase(seeder: PocketBaseSeeder, social: Social) -> Loaded:
    seeded, ds = seeder.seeded, social.ds
    out = Loaded(tag_ids=[pb_id("t", t) for t in range(len(social.tags))], boost_order=social.boost_order())
    uid = seeded.user_ids
    seeder._batched("tags", (("tags", {"id": out.tag_ids[t], "name": name}) for t, name in enumerate(social.tags)))
    seeder._batched("tagged posts", (
        ("posts", {"id": pb_id("p", p.index), "author": uid[p.author], "title": p.title, "body": p.body,
                   "tags": [out.tag_ids[t] for t in tags]})
        for p, tags in social.tagged_posts()))
    seeded.post_ids.extend(pb_id("p", ds.sizes.posts + i) for i in range(social.sizes.tagged_posts))
    pid = seeded.post_ids

    def boosts():
        for k in range(social.setup_boosts):
            u, p = social.boost_pair(k, out.boost_order)
            yield "boosts", {"id": pb_id("b", k), "post": pid[p], "user": uid[u]}

    seeder._batched("boosts", boosts())
    out.poll_ids = [pb_id("q", j) for j in range(social.sizes.polls)]
    seeder._batched("polls", (
        ("posts", {"id": out.poll_ids[j], "author": uid[0], "body": social.poll_body(j),
                   "poll": {"options": POLL_OPTIONS, "multiple": False}})
        for j in range(social.sizes.polls)))
    return out


# ---- the scenarios -----------------------------------------------------------------------

def _walk(session: requests.Session, base: str, first: str, auth: str, pages: int, next_path) -> list[str]:
    """The paths of the first `pages` pages: `first`, then next_path(path, page document) while
    the pages are full."""
    paths = [first]
    headers = {"Authorization": auth} if auth else {}
    while len(paths) < pages:
        r = session.get(base + paths[-1], headers=headers, timeout=60)
        r.raise_for_status()
        doc = r.json()
        nxt = next_path(doc) if len(doc.get("items") or []) == 20 else None
        if not nxt:
            break
        paths.append(nxt)
    return paths


def _plaza_next(path: str):
    def nxt(doc: dict) -> str | None:
        cursor = doc.get("nextCursor")
        return f"{path}&{_q({'cursor': cursor})}" if cursor else None
    return nxt


def _pb_next(flt: str, params: dict):
    """PocketBase's keyset next page: the same filter and `created < 'X'`, X the page's last created."""
    def nxt(doc: dict) -> str:
        last = doc["items"][-1]["created"]
        return "/api/collections/posts/records?" + _q({**params, "filter": f"({flt}) && created < '{last}'"})
    return nxt


def _pairs_side(mode: str, system: str, seeded: Seeded, targets: list[str], offset: int, workdir: Path,
                threads: int) -> Side:
    """A side of social.lua's: its files (tokens, user ids, the posts or polls), and a counter that
    moves the pair offset past every pair a run used."""
    files = [workdir / f"{system}_{mode}_{name}.txt" for name in ("tokens", "users", "targets")]
    for f, lines in zip(files, (seeded.tokens, seeded.user_ids, targets)):
        f.write_text("\n".join(lines) + "\n")
    counter = LikeCounter(threads)
    counter.offset = offset
    return Side(label="", script="social.lua", after_run=counter.after,
                args=lambda: [mode, system, *map(str, files), str(counter.offset), str(threads)])


def build(social: Social, plaza: Seeded, plaza_loaded: Loaded, pb: Seeded, pb_loaded: Loaded, plaza_base: str,
          pb_base: str, workdir: Path, *, threads: int, connections: int, only: set[str] | None = None) -> list[Scenario]:
    workdir.mkdir(parents=True, exist_ok=True)
    ds = social.ds
    want = (lambda k: True) if not only else (lambda k: k in only)
    session = requests.Session()
    feed_params = {"sort": "-created", "perPage": 20, "skipTotal": 1, "expand": "author"}
    pb_list = "/api/collections/posts/records?"
    out: list[Scenario] = []

    # 1. a tag's timeline, pages by cursor
    if want("tag_timeline"):
        p_lines: list[Line] = []
        q_lines: list[Line] = []
        for t in range(TIMELINE_TAGS):
            path = f"/api/v1/hashtags/{plaza_loaded.tag_ids[t]}/posts?limit=20"
            p_lines += [("GET", p, "", "") for p in _walk(session, plaza_base, path, "", TIMELINE_PAGES, _plaza_next(path))]
            flt = f"tags:each ?= '{pb_loaded.tag_ids[t]}'"
            first = pb_list + _q({**feed_params, "filter": flt})
            q_lines += [("GET", p, "", "") for p in _walk(session, pb_base, first, "", TIMELINE_PAGES, _pb_next(flt, feed_params))]
        tags = ", ".join("#" + social.tags[t] for t in range(TIMELINE_TAGS))
        sc = Scenario("tag_timeline", f"Tag timeline, pages 1-{TIMELINE_PAGES} of {tags}", "read", connections,
                      _rotate(workdir, "plaza_tag_timeline", p_lines, threads,
                              f"GET /api/v1/hashtags/{{tag}}/posts?limit=20[&cursor=C] ({len(p_lines)} pages in turn)",
                              expect_items=True),
                      _rotate(workdir, "pb_tag_timeline", q_lines, threads,
                              f"GET {pb_list}filter=(tags:each ?= 'TAG')[ && created < 'X']&sort=-created&perPage=20"
                              f"&skipTotal=1&expand=author ({len(q_lines)} pages in turn)", expect_items=True))
        sc.notes.append(f"{social.sizes.tagged_posts:,} posts carry 1-3 of {len(social.tags)} tags (weighted 1/rank); "
                        f"the {TIMELINE_TAGS} most used, each its first {TIMELINE_PAGES} pages, Plaza's by `nextCursor`, "
                        "PocketBase's by `created <` the last post of the page before. PocketBase keeps tags as a "
                        "multiple relation of the post (a JSON list of tag ids, not indexed; `tags:each ?=` looks "
                        "into each post's list); the newest posts are scanned until 20 carry the tag.")
        out.append(sc)

    # 2. the home feed of a reader following people and tags, whose followees boost
    if want("feed_home_tags"):
        step = max(1, ds.sizes.users // HOME_READERS)
        readers = list(range(0, ds.sizes.users, step))[:HOME_READERS]
        p_lines, q_lines, b_lines = [], [], []
        boosters = {}
        for u in readers:
            path = "/api/v1/feed/home?limit=20"
            p_lines += [("GET", p, plaza.tokens[u], "")
                        for p in _walk(session, plaza_base, path, plaza.tokens[u], HOME_PAGES, _plaza_next(path))]
            follows = [pb.user_ids[f] for f in ds.followees(u)]
            flt = " || ".join([f"author = '{i}'" for i in [pb.user_ids[u]] + follows]
                              + [f"tags:each ?= '{pb_loaded.tag_ids[t]}'" for t in social.followed_tags(u)])
            first = pb_list + _q({**feed_params, "filter": f"({flt})"})
            q_lines += [("GET", p, pb.tokens[u], "")
                        for p in _walk(session, pb_base, first, pb.tokens[u], HOME_PAGES, _pb_next(flt, feed_params))]
            boosters[u] = " || ".join(f"user = '{i}'" for i in follows)
            b_lines.append(("GET", "/api/collections/boosts/records?" + _q(
                {"sort": "-created", "perPage": 20, "skipTotal": 1, "expand": "post.author", "filter": f"({boosters[u]})"}),
                pb.tokens[u], ""))
        sc = Scenario("feed_home_tags",
                      f"Home feed with {social.sizes.tag_follows} followed tags and boosts, pages 1-{HOME_PAGES}",
                      "read", connections,
                      _rotate(workdir, "plaza_feed_home_tags", p_lines, threads,
                              f"GET /api/v1/feed/home?limit=20[&cursor=C] ({len(readers)} readers, {len(p_lines)} pages in turn)",
                              expect_items=True),
                      _rotate(workdir, "pb_feed_home_tags", q_lines, threads,
                              f"GET {pb_list}filter=(author = 'ME' || author = 'F1' || … || tags:each ?= 'T1' || … || "
                              "tags:each ?= 'T3')[ && created < 'X']&sort=-created&perPage=20&skipTotal=1&expand=author",
                              expect_items=True))
        sc.extras.append(("PocketBase, the boosts of the people followed (a second request per page)", "pocketbase",
                          _rotate(workdir, "pb_home_boosts", b_lines, threads,
                                  "GET /api/collections/boosts/records?filter=(user = 'F1' || … || user = 'F20')"
                                  "&sort=-created&perPage=20&skipTotal=1&expand=post.author", expect_items=True)))
        sc.notes.append(f"Each user follows {ds.sizes.follows} people and {social.sizes.tag_follows} tags (followed "
                        f"before the tagged posts were written) and boosted {social.sizes.boosts} posts (in {TURNS} turns "
                        "with the tagged posts), so a home holds the posts of the people followed, the posts of the "
                        "tags followed and the posts the people followed boosted (at the boost's time). Plaza's "
                        "home has them in one list; PocketBase's "
                        "posts filter names the people and tags (the client must know them), and its boosts "
                        "are a second list the client merges (the extra row, first pages only).")
        out.append(sc)

    # 3. boosting: a boost, and its undo 64 boosts later
    if want("boost"):
        sides = []
        for system, seeded, loaded in (("plaza", plaza, plaza_loaded), ("pocketbase", pb, pb_loaded)):
            # past the set-up's boosts and the preflight's
            side = _pairs_side("boost", system, seeded, [seeded.post_ids[i] for i in loaded.boost_order],
                               social.setup_boosts + 1, workdir, threads)
            u, p = social.boost_pair(social.setup_boosts, loaded.boost_order)
            if system == "plaza":
                side.label = f"PUT /api/v1/posts/{{id}}/boost, then DELETE it {BOOST_LAG} boosts later (a new user/post pair each time)"
                side.first = ("PUT", f"/api/v1/posts/{seeded.post_ids[p]}/boost", seeded.tokens[u], "")
            else:
                side.label = ("POST /api/collections/boosts/records {id, post, user}, then DELETE "
                              f"/api/collections/boosts/records/{{id}} {BOOST_LAG} boosts later")
                side.first = ("POST", "/api/collections/boosts/records", seeded.tokens[u],
                              _body({"id": pb_id("b", social.setup_boosts), "post": seeded.post_ids[p], "user": seeded.user_ids[u]}))
            sides.append(side)
        sc = Scenario("boost", "Boost a post and undo it", "write", connections, sides[0], sides[1])
        sc.notes.append("Half the requests boost (a new user/post pair each, like the like scenario's), half undo a "
                        f"boost the same wrk thread made {BOOST_LAG} boosts before. A Plaza boost enters the post in "
                        f"the booster's {ds.sizes.follows} followers' homes (on average) and its undo takes it out; "
                        "PocketBase's boost is one record (its readers fetch the boosts at read time).")
        out.append(sc)

    # 4. many people voting on one poll at a time
    if want("poll_vote"):
        sides = []
        for system, seeded, loaded in (("plaza", plaza, plaza_loaded), ("pocketbase", pb, pb_loaded)):
            side = _pairs_side("vote", system, seeded, loaded.poll_ids or ["none"], 1, workdir, threads)  # pair 0: the preflight's
            side.unavailable = loaded.poll_unavailable
            poll = loaded.poll_ids[0] if loaded.poll_ids else "none"
            if system == "plaza":
                side.label = "POST /api/v1/posts/{id}/poll/votes {choices: [c]} (a new voter each time)"
                side.first = ("POST", f"/api/v1/posts/{poll}/poll/votes", seeded.tokens[0], _body({"choices": [0]}))
            else:
                side.label = "POST /api/collections/votes/records {poll, user, choices: [c]} (a new voter each time)"
                side.first = ("POST", "/api/collections/votes/records", seeded.tokens[0],
                              _body({"poll": poll, "user": seeded.user_ids[0], "choices": [0]}))
            sides.append(side)
        n_polls = len(plaza_loaded.poll_ids) or social.sizes.polls
        sc = Scenario("poll_vote", "Vote on a hot poll", "write", connections, sides[0], sides[1])
        sc.notes.append(f"Every vote is a different user's: vote k is user k mod {ds.sizes.users:,} on poll "
                        f"⌊k / {ds.sizes.users:,}⌋ (of {n_polls:,}, made for the runs), so all connections vote on "
                        f"one poll until its {ds.sizes.users:,} voters are through, then on the next. Choices rotate "
                        "over the 3 options. Plaza checks the poll is open and counts the vote in the poll's totals "
                        "and answers the poll; PocketBase stores a record its unique (poll, user) index allows once.")
        out.append(sc)
    return out
