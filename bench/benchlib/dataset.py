"""The benchmark's dataset: generated deterministically from a seed, identical for both systems.

Nothing is stored: every user, follow, post and comment is a pure function of (seed, index), so
the same data can be streamed into Plaza and PocketBase (and grown later, for --growth) without
holding a million posts in memory.
"""

from __future__ import annotations

import bisect
import itertools
import random
from dataclasses import dataclass

PASSWORD = "bench-password-1"  # every user's password (the login scenario signs in with it)

_ONSETS = ["b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z",
           "br", "ch", "dr", "gl", "kr", "pl", "sh", "st", "th", "tr"]
_VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "io", "ou"]
_CODAS = ["", "", "", "n", "r", "s", "l", "m", "t", "x"]


@dataclass(frozen=True)
class Sizes:
    users: int = 1000
    posts: int = 100_000
    follows: int = 20  # per user
    comments: int = 25_000


@dataclass(frozen=True)
class User:
    index: int
    username: str
    email: str
    password: str


@dataclass(frozen=True)
class Post:
    index: int
    author: int  # user index
    title: str
    body: str


@dataclass(frozen=True)
class Comment:
    index: int
    post: int  # post index
    author: int  # user index
    body: str


class Dataset:
    """Users, follows, posts and comments of one benchmark run.

    Words follow a Zipf distribution (weight 1/rank) over a vocabulary of made-up words, so a
    handful of words are very common; ``search_word`` is the word of rank ``search_rank`` (the
    first one from there that is not part of any other word, so PocketBase's substring filter
    and a word search find the same posts).
    """

    VOCABULARY = 5000

    def __init__(self, sizes: Sizes, seed: int = 42, search_rank: int = 20):
        if sizes.users < 2:
            raise ValueError("need at least 2 users")
        self.sizes = sizes
        self.seed = seed
        rng = random.Random(f"{seed}:vocabulary")
        words: list[str] = []
        seen: set[str] = set()
        for _ in range(self.VOCABULARY * 50):  # bounded: plenty of tries for 5,000 unique words
            if len(words) == self.VOCABULARY:
                break
            word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS)
                           for _ in range(rng.choice((1, 2, 2, 3))))
            if len(word) >= 3 and word not in seen:
                seen.add(word)
                words.append(word)
        self.words = words
        self.word_cum = list(itertools.accumulate(1.0 / rank for rank in range(1, len(words) + 1)))
        self.search_word = next(
            w for w in words[search_rank - 1:]
            if not any(w in other for other in words if other != w))
        self.search_rank = words.index(self.search_word) + 1
        # Comments go to posts with a Zipf popularity over a fixed shuffle of the posts, so some
        # posts have long threads (the "comments of a post" scenario reads those).
        self._hot_posts_cache: tuple[int, list[int], list[float]] | None = None

    # ---- users and follows -------------------------------------------------------------
    def users(self) -> list[User]:
        return [self.user(i) for i in range(self.sizes.users)]

    def user(self, i: int) -> User:
        name = f"bench_{i:06d}"
        return User(i, name, f"{name}@bench.example.com", PASSWORD)

    def follows(self) -> list[tuple[int, int]]:
        """(follower, followee) user-index pairs: each user follows `follows` distinct others."""
        return [pair for u in range(self.sizes.users) for pair in self.follows_of(u)]

    def followees(self, user: int) -> list[int]:
        return [b for a, b in self.follows_of(user)]

    def follows_of(self, user: int) -> list[tuple[int, int]]:
        n = self.sizes.users
        rng = random.Random(f"{self.seed}:follows:{user}")
        others = rng.sample(range(n - 1), min(self.sizes.follows, n - 1))
        return [(user, o if o < user else o + 1) for o in others]

    # ---- text --------------------------------------------------------------------------
    def _words(self, rng: random.Random, k: int) -> str:
        return " ".join(rng.choices(self.words, cum_weights=self.word_cum, k=k))

    def text(self, rng: random.Random, lo: int, hi: int) -> str:
        return self._words(rng, rng.randint(lo, hi))

    # ---- posts -------------------------------------------------------------------------
    def post(self, i: int) -> Post:
        rng = random.Random(f"{self.seed}:post:{i}")
        author = rng.randrange(self.sizes.users)
        title = self.text(rng, 3, 8).capitalize()
        body = self.text(rng, 15, 60).capitalize() + "."
        return Post(i, author, title, body)

    def posts(self, start: int, stop: int):
        for i in range(start, stop):
            yield self.post(i)

    # ---- comments ----------------------------------------------------------------------
    def _hot(self, n_posts: int) -> tuple[list[int], list[float]]:
        if self._hot_posts_cache is None or self._hot_posts_cache[0] != n_posts:
            order = list(range(n_posts))
            random.Random(f"{self.seed}:hot").shuffle(order)
            cum = list(itertools.accumulate(1.0 / rank for rank in range(1, n_posts + 1)))
            self._hot_posts_cache = (n_posts, order, cum)
        return self._hot_posts_cache[1], self._hot_posts_cache[2]

    def comment(self, j: int) -> Comment:
        order, cum = self._hot(self.sizes.posts)
        rng = random.Random(f"{self.seed}:comment:{j}")
        rank = min(bisect.bisect_left(cum, rng.random() * cum[-1]), len(order) - 1)
        post = order[rank]
        author = rng.randrange(self.sizes.users)
        return Comment(j, post, author, self.text(rng, 5, 25).capitalize() + ".")

    def comments(self):
        for j in range(self.sizes.comments):
            yield self.comment(j)

    def most_commented_posts(self, k: int) -> list[int]:
        """Post indexes of the k most-commented posts (by construction: the top of the Zipf order)."""
        order, _ = self._hot(self.sizes.posts)
        return order[:k]

    # ---- extra content for the write scenarios -----------------------------------------
    def write_samples(self, n: int, kind: str) -> list[str]:
        rng = random.Random(f"{self.seed}:writes:{kind}")
        if kind == "title":
            return [self.text(rng, 3, 8).capitalize() for _ in range(n)]
        if kind == "comment":
            return [self.text(rng, 5, 25).capitalize() + "." for _ in range(n)]
        return [self.text(rng, 15, 60).capitalize() + "." for _ in range(n)]
