"""The scenarios: what each system is asked, as wrk request files, and a preflight check of each."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable
from urllib.parse import quote, urlencode

import requests

from .dataset import Dataset
from .seed import Seeded
from .wrk import rotate_args, write_requests

Line = tuple[str, str, str, str]  # method, path, auth, body (JSON text)


@dataclass
class Side:
    """One system's half of a scenario."""
    label: str  # what is sent, for the report, e.g. "GET /api/v1/feed/global?limit=20"
    script: str = "rotate.lua"
    args: Callable[[], list[str]] | None = None  # wrk script arguments, computed per run
    after_run: Callable[[int], None] | None = None  # told wrk's max per-thread request count
    first: Line | None = None  # a representative request for the preflight check
    expect_items: bool = False  # the preflight response must be a non-empty list page
    unavailable: str | None = None  # set when the system cannot run this scenario (preflight)
    checked: str = ""  # what the preflight saw, e.g. "200, 20 items, 14,210 bytes"


@dataclass
class Scenario:
    key: str
    title: str
    kind: str  # "read" or "write"
    connections: int
    plaza: Side
    pocketbase: Side
    extras: list[tuple[str, str, Side]] = field(default_factory=list)  # (label, system, side): run once, informational
    notes: list[str] = field(default_factory=list)


def _q(params: dict) -> str:
    return urlencode(params, quote_via=quote, safe="(),'=")


def _body(obj) -> str:
    return json.dumps(obj, separators=(",", ":"))


def _rotate(workdir: Path, name: str, lines: list[Line], threads: int, label: str, *,
            expect_items: bool = False) -> Side:
    path = write_requests(workdir / f"{name}.tsv", lines)
    return Side(label=label, args=lambda: rotate_args(path, threads), first=lines[0], expect_items=expect_items)


class LikeCounter:
    """Keeps like.lua's pair offset moving past every pair a run used, so no pair repeats."""

    def __init__(self, threads: int):
        self.offset, self.threads = 0, threads

    def after(self, max_sent: int) -> None:
        self.offset += self.threads * (max_sent + 1)


def preflight(base: str, side: Side) -> None:
    """Sends the side's first request once; marks the side unavailable if it does not answer 2xx."""
    if side.first is None or side.unavailable:
        return
    method, path, auth, body = side.first
    headers = {"Accept": "application/json"}
    if auth:
        headers["Authorization"] = auth
    if body:
        headers["Content-Type"] = "application/json"
    r = requests.request(method, base + path, data=body.encode() if body else None, headers=headers, timeout=60)
    if not 200 <= r.status_code < 300:
        side.unavailable = f"not available: {method} {path.split('?')[0]} answered {r.status_code} {r.text[:160]}"
        return
    side.checked = f"{r.status_code}, {len(r.content):,} bytes"
    try:
        doc = r.json()
    except ValueError:
        doc = None
    if isinstance(doc, dict) and isinstance(doc.get("items"), list):
        side.checked = f"{r.status_code}, {len(doc['items'])} items, {len(r.content):,} bytes"
    if side.expect_items and not (isinstance(doc, dict) and doc.get("items")):
        side.unavailable = f"preflight: empty or unexpected list response {r.text[:160]}"


def plaza_deep_cursor(base: str, depth: int) -> tuple[str | None, int]:
    """Walks the global feed `depth` posts deep (pages of 20); returns the cursor there."""
    cursor, seen = None, 0
    session = requests.Session()
    for _ in range(depth // 20 + 1):  # bounded walk
        if seen >= depth:
            break
        params = {"limit": 20}
        if cursor:
            params["cursor"] = cursor
        r = session.get(base + "/api/v1/feed/global", params=params, timeout=60)
        r.raise_for_status()
        doc = r.json()
        seen += len(doc["items"])
        cursor = doc.get("nextCursor")
        if not cursor:
            break
    return cursor, seen


def pb_created_at(base: str, depth: int) -> str:
    """`created` of the depth-th newest PocketBase post (what a keyset filter starts below)."""
    r = requests.get(base + "/api/collections/posts/records",
                     params={"sort": "-created", "perPage": 1, "page": depth, "skipTotal": 1, "fields": "id,created"},
                     timeout=60)
    r.raise_for_status()
    return r.json()["items"][0]["created"]


def build(ds: Dataset, plaza: Seeded, pb: Seeded, plaza_base: str, pb_base: str, workdir: Path, *,
          threads: int, connections: int, login_connections: int, deep: int, pb_home: str,
          only: set[str] | None = None) -> list[Scenario]:
    workdir.mkdir(parents=True, exist_ok=True)
    rng = random.Random(f"{ds.seed}:scenarios")
    n_users, n_posts = len(plaza.tokens), len(plaza.post_ids)
    assert n_users == len(pb.tokens) and n_posts == len(pb.post_ids)
    out: list[Scenario] = []
    want = (lambda k: True) if not only else (lambda k: k in only)
    feed_params = {"sort": "-created", "perPage": 20, "skipTotal": 1, "expand": "author"}
    pb_list = "/api/collections/posts/records?"

    # 1. global feed, first page
    if want("feed_global"):
        p = "/api/v1/feed/global?limit=20"
        q = pb_list + _q(feed_params)
        out.append(Scenario("feed_global", "Global feed, first page", "read", connections,
                            _rotate(workdir, "plaza_feed_global", [("GET", p, "", "")], threads, "GET " + p, expect_items=True),
                            _rotate(workdir, "pb_feed_global", [("GET", q, "", "")], threads, "GET " + q, expect_items=True)))

    # 2. global feed, deep page
    if want("feed_deep"):
        depth = min(deep, max(20, n_posts // 2))
        depth -= depth % 20
        cursor, seen = plaza_deep_cursor(plaza_base, depth)
        p = "/api/v1/feed/global?" + _q({"limit": 20, "cursor": cursor or ""})
        plaza_side = _rotate(workdir, "plaza_feed_deep", [("GET", p, "", "")], threads,
                             f"GET /api/v1/feed/global?limit=20&cursor=(after {seen:,} posts)", expect_items=True)
        if cursor is None:
            plaza_side.unavailable = f"the global feed ended after {seen} posts"
        created = pb_created_at(pb_base, depth)
        q = pb_list + _q({**feed_params, "filter": f"created < '{created}'"})
        q_off = pb_list + _q({**feed_params, "page": depth // 20 + 1})
        sc = Scenario("feed_deep", f"Global feed, page {depth // 20 + 1} ({depth:,} posts deep)", "read", connections,
                      plaza_side,
                      _rotate(workdir, "pb_feed_deep", [("GET", q, "", "")], threads,
                              f"GET {pb_list}filter=(created < '<created of post {depth:,}>')&sort=-created&perPage=20&skipTotal=1&expand=author",
                              expect_items=True))
        sc.extras.append(("PocketBase, page=N offset", "pocketbase",
                          _rotate(workdir, "pb_feed_deep_offset", [("GET", q_off, "", "")], threads,
                                  f"GET {pb_list}page={depth // 20 + 1}&perPage=20&sort=-created&skipTotal=1&expand=author",
                                  expect_items=True)))
        sc.notes.append("PocketBase's keyset equivalent is a `created < X` filter (X = the created time of the "
                        f"{depth:,}th newest post); its page=N offset form is shown as an extra row.")
        out.append(sc)

    # 3. home feed of a user following 20 people (rotating over every user)
    if want("feed_home"):
        users = list(range(n_users))
        p_lines = [("GET", "/api/v1/feed/home?limit=20", plaza.tokens[u], "") for u in users]

        def pb_home_line(u: int, how: str) -> Line:
            uid = pb.user_ids[u]
            if how == "backrel":
                flt = f"(author = '{uid}' || author.follows_via_followee.follower ?= '{uid}')"
            else:
                ids = [uid] + [pb.user_ids[f] for f in ds.followees(u)]
                flt = "(" + " || ".join(f"author = '{i}'" for i in ids) + ")"
            return ("GET", pb_list + _q({**feed_params, "filter": flt}), pb.tokens[u], "")

        other = "list" if pb_home == "backrel" else "backrel"
        labels = {
            "backrel": "GET …/posts/records?filter=(author = 'ME' || author.follows_via_followee.follower ?= 'ME')&sort=-created&perPage=20&skipTotal=1&expand=author",
            "list": "GET …/posts/records?filter=(author = 'ME' || author = 'F1' || … || author = 'F20')&sort=-created&perPage=20&skipTotal=1&expand=author",
        }
        sc = Scenario("feed_home", f"Home feed (user follows {ds.sizes.follows})", "read", connections,
                      _rotate(workdir, "plaza_feed_home", p_lines, threads, "GET /api/v1/feed/home?limit=20 (each user's token in turn)",
                              expect_items=True),
                      _rotate(workdir, "pb_feed_home", [pb_home_line(u, pb_home) for u in users], threads,
                              labels[pb_home], expect_items=True))
        sc.extras.append((f"PocketBase, {other} filter", "pocketbase",
                          _rotate(workdir, "pb_feed_home_" + other, [pb_home_line(u, other) for u in users],
                                  threads, labels[other], expect_items=True)))
        sc.notes.append("PocketBase cannot use @request.auth.id in a client filter (only superusers may), so the "
                        "filter names the user; 'backrel' follows the follows collection back from the author, "
                        "'list' names the followed users (the client must know them first).")
        out.append(sc)

    # 4. post detail
    if want("post_detail"):
        picks = [rng.randrange(n_posts) for _ in range(5000)]
        out.append(Scenario("post_detail", "Post detail (with author)", "read", connections,
                            _rotate(workdir, "plaza_post", [("GET", f"/api/v1/posts/{plaza.post_ids[i]}", "", "") for i in picks],
                                    threads, "GET /api/v1/posts/{id} (5,000 random posts)"),
                            _rotate(workdir, "pb_post", [("GET", f"/api/collections/posts/records/{pb.post_ids[i]}?expand=author", "", "")
                                                         for i in picks], threads,
                                    "GET /api/collections/posts/records/{id}?expand=author")))

    # 5. comments of a post
    if want("comments"):
        hot = [i for i in ds.most_commented_posts(100) if i < n_posts]
        cq = {"sort": "created", "perPage": 20, "skipTotal": 1, "expand": "author"}
        out.append(Scenario("comments", "Comments of a post (oldest first, 20)", "read", connections,
                            _rotate(workdir, "plaza_comments", [("GET", f"/api/v1/posts/{plaza.post_ids[i]}/comments?limit=20", "", "")
                                                                for i in hot], threads,
                                    "GET /api/v1/posts/{id}/comments?limit=20 (the 100 most-commented posts)",
                                    expect_items=True),
                            _rotate(workdir, "pb_comments", [("GET", "/api/collections/comments/records?" + _q({**cq, "filter": f"post = '{pb.post_ids[i]}'"}), "", "")
                                                             for i in hot], threads,
                                    "GET /api/collections/comments/records?filter=(post = 'ID')&sort=created&perPage=20&skipTotal=1&expand=author",
                                    expect_items=True)))

    # 6. full-text search for a common word
    if want("search"):
        w = ds.search_word
        p = "/api/v1/search/posts?" + _q({"q": w, "limit": 20})
        q = pb_list + _q({**feed_params, "filter": f"(title ~ '{w}' || body ~ '{w}')"})
        sc = Scenario("search", f"Search posts for a common word (\"{w}\", rank {ds.search_rank}, in ~20% of posts)", "read",
                      connections,
                      _rotate(workdir, "plaza_search", [("GET", p, "", "")], threads, "GET " + p, expect_items=True),
                      _rotate(workdir, "pb_search", [("GET", q, "", "")], threads,
                              f"GET {pb_list}filter=(title ~ '{w}' || body ~ '{w}')&sort=-created&perPage=20&skipTotal=1&expand=author",
                              expect_items=True))
        sc.notes.append("PocketBase has no full-text index: `~` is SQL LIKE '%word%', newest first.")
        # Every word of the vocabulary once, in a fixed shuffle: Plaza keeps a ranking for a
        # second, so this shows the cost of a search nobody ran in the last second.
        words = list(ds.words)
        random.Random(f"{ds.seed}:search rotation").shuffle(words)
        sc.extras.append((f"Plaza, a different word each request ({len(words):,} words)", "plaza",
                          _rotate(workdir, "plaza_search_words",
                                  [("GET", "/api/v1/search/posts?" + _q({"q": x, "limit": 20}), "", "") for x in words], threads,
                                  "GET /api/v1/search/posts?q=WORD&limit=20")))
        sc.extras.append((f"PocketBase, a different word each request ({len(words):,} words)", "pocketbase",
                          _rotate(workdir, "pb_search_words",
                                  [("GET", pb_list + _q({**feed_params, "filter": f"(title ~ '{x}' || body ~ '{x}')"}), "", "")
                                   for x in words], threads,
                                  f"GET {pb_list}filter=(title ~ 'WORD' || body ~ 'WORD')&sort=-created&perPage=20&skipTotal=1&expand=author")))
        sc.notes.append("Plaza ranks a word search once and keeps the ranking for up to a second (a post written, edited or "
                        "deleted clears it at once); the extra rows send a different word each time, so every Plaza search is ranked anew.")
        out.append(sc)

    # 7. create post
    if want("create_post"):
        titles, bodies = ds.write_samples(500, "title"), ds.write_samples(500, "body")
        n = 2000
        p_lines = [("POST", "/api/v1/posts", plaza.tokens[i % n_users],
                    _body({"kind": "text", "title": titles[i % 500], "body": bodies[(i * 7) % 500]})) for i in range(n)]
        q_lines = [("POST", "/api/collections/posts/records?expand=author", pb.tokens[i % n_users],
                    _body({"author": pb.user_ids[i % n_users], "title": titles[i % 500], "body": bodies[(i * 7) % 500]}))
                   for i in range(n)]
        out.append(Scenario("create_post", "Create a post", "write", connections,
                            _rotate(workdir, "plaza_create_post", p_lines, threads, "POST /api/v1/posts {kind, title, body}"),
                            _rotate(workdir, "pb_create_post", q_lines, threads,
                                    "POST /api/collections/posts/records?expand=author {author, title, body}")))

    # 8. create comment
    if want("create_comment"):
        texts = ds.write_samples(500, "comment")
        picks = [(rng.randrange(n_users), rng.randrange(n_posts)) for _ in range(5000)]
        p_lines = [("POST", f"/api/v1/posts/{plaza.post_ids[p]}/comments", plaza.tokens[u], _body({"body": texts[k % 500]}))
                   for k, (u, p) in enumerate(picks)]
        q_lines = [("POST", "/api/collections/comments/records?expand=author", pb.tokens[u],
                    _body({"post": pb.post_ids[p], "author": pb.user_ids[u], "body": texts[k % 500]}))
                   for k, (u, p) in enumerate(picks)]
        out.append(Scenario("create_comment", "Create a comment", "write", connections,
                            _rotate(workdir, "plaza_create_comment", p_lines, threads, "POST /api/v1/posts/{id}/comments {body}"),
                            _rotate(workdir, "pb_create_comment", q_lines, threads,
                                    "POST /api/collections/comments/records?expand=author {post, author, body}")))

    # 9. like (a fresh (user, post) pair every request)
    if want("like"):
        sides = []
        for system, seeded, tag in (("plaza", plaza, "plaza"), ("pocketbase", pb, "pb")):
            tok = workdir / f"{tag}_like_tokens.txt"
            uid = workdir / f"{tag}_like_users.txt"
            pid = workdir / f"{tag}_like_posts.txt"
            tok.write_text("\n".join(seeded.tokens) + "\n")
            uid.write_text("\n".join(seeded.user_ids) + "\n")
            order = list(range(n_posts))
            random.Random(f"{ds.seed}:likes").shuffle(order)
            pid.write_text("\n".join(seeded.post_ids[i] for i in order) + "\n")
            counter = LikeCounter(threads)
            counter.offset = 1  # pair 0 is the preflight's
            side = Side(label="", script="like.lua",
                        args=(lambda s=system, t=tok, u=uid, p=pid, c=counter: [s, str(t), str(u), str(p), str(c.offset), str(threads)]),
                        after_run=counter.after)
            if system == "plaza":  # pair 0: user 0, the first post of the shuffled list
                side.label = "PUT /api/v1/posts/{id}/like (a new user/post pair each time)"
                side.first = ("PUT", f"/api/v1/posts/{seeded.post_ids[order[0]]}/like", seeded.tokens[0], "")
            else:
                side.label = "POST /api/collections/likes/records {post, user} (a new pair each time)"
                side.first = ("POST", "/api/collections/likes/records", seeded.tokens[0],
                              _body({"post": seeded.post_ids[order[0]], "user": seeded.user_ids[0]}))
            sides.append(side)
        sc = Scenario("like", "Like a post", "write", connections, sides[0], sides[1])
        sc.notes.append(f"{n_users:,} users x {n_posts:,} posts give {n_users * n_posts:,} distinct pairs, "
                        "used in order across runs (the preflight takes pair 0).")
        out.append(sc)

    # 10. login (bcrypt at the same cost on both)
    if want("login"):
        users = ds.users()
        out.append(Scenario("login", "Log in (password check at the same bcrypt cost)", "write", login_connections,
                            _rotate(workdir, "plaza_login",
                                    [("POST", "/api/v1/auth/login", "", _body({"login": u.email, "password": u.password})) for u in users],
                                    threads, "POST /api/v1/auth/login {login: email, password}"),
                            _rotate(workdir, "pb_login",
                                    [("POST", "/api/collections/users/auth-with-password", "", _body({"identity": u.email, "password": u.password}))
                                     for u in users],
                                    threads, "POST /api/collections/users/auth-with-password {identity: email, password}")))
    return out
