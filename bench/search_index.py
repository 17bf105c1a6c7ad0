#!/usr/bin/env python3
"""The size of Plaza's search index for posts in Latin script and in Chinese and Japanese.

    python3 bench/search_index.py --plaza-bin .build/release/plaza
    python3 bench/search_index.py --plaza-bin OLD --plaza-bin NEW --posts 20000 --postgres URL

For each binary and corpus, starts Plaza on a fresh data directory (and, with --postgres, on a
fresh schema of that database), creates the posts through the API and reports the index's
bytes: on SQLite the pages of the FTS5 tables (`posts_search*`, from `dbstat`), on PostgreSQL
the `search` column's values plus the GIN index. Runs on loopback only.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import bulk, servers  # noqa: E402

LATIN = ("river garden morning coffee library winter market bicycle window mountain letter "
         "evening kitchen village harbour lantern meadow orchard pencil violin").split()
# Words of Japanese and Chinese as people write them: runs with no spaces between words.
JAPANESE = ("東京 ラーメン 美味しい 今日 友達 映画 図書館 電車 週末 料理 写真 散歩 天気 公園 "
            "コーヒー 仕事 勉強 音楽 旅行 桜").split()
CHINESE = "北京 烤鸭 喜欢 朋友 电影 图书馆 地铁 周末 做饭 照片 散步 天气 公园 咖啡 工作 学习 音乐 旅行".split()


def text(corpus: str, rng: random.Random, words: int) -> str:
    if corpus == "latin":
        return " ".join(rng.choice(LATIN) for _ in range(words))
    # A sentence of 6–12 words written together, then punctuation, as in real posts.
    pool = JAPANESE if rng.random() < 0.5 else CHINESE
    sentences = []
    while sum(len(s) for s in sentences) < words * 3:
        sentences.append("".join(rng.choice(pool) for _ in range(rng.randint(6, 12))) + "。")
    return "".join(sentences)


def index_bytes(data_dir: Path, database_url: str | None) -> int:
    if database_url:
        out = subprocess.run(
            ["psql", database_url, "-At", "-c",
             "SELECT coalesce(sum(pg_column_size(search)), 0) + pg_relation_size('posts_search') FROM posts"],
            check=True, capture_output=True, text=True).stdout
        return int(out.strip())
    with sqlite3.connect(data_dir / "plaza.sqlite") as db:
        row = db.execute("SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'posts_search%'").fetchone()
        return int(row[0] or 0)


def measure(binary: Path, corpus: str, posts: int, database_url: str | None) -> int:
    with tempfile.TemporaryDirectory(prefix="plaza-index-") as tmp:
        if database_url:
            subprocess.run(["psql", database_url, "-q", "-c", "DROP SCHEMA public CASCADE; CREATE SCHEMA public"],
                           check=True, capture_output=True)
        plaza = servers.Plaza(binary, Path(tmp) / "data", bcrypt_cost=10, database_url=database_url)
        plaza.start()
        try:
            auth = requests.post(plaza.base + "/api/v1/auth/register", json={
                "username": "writer", "email": "writer@example.com", "password": "correct horse battery"},
                timeout=30).json()
            bearer = "Bearer " + auth["token"]
            rng = random.Random(42)
            reqs = [("POST", "/api/v1/posts", bearer,
                     {"kind": "text", "title": text(corpus, rng, 4), "body": text(corpus, rng, 40)})
                    for _ in range(posts)]
            with bulk.Loader(plaza.port) as load:
                bulk.check("posts", load(reqs))
        finally:
            plaza.stop()
        return index_bytes(Path(tmp) / "data", database_url)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plaza-bin", action="append", required=True, type=Path)
    parser.add_argument("--posts", type=int, default=20_000)
    parser.add_argument("--postgres", help="also measure on this (scratch) PostgreSQL database")
    args = parser.parse_args()
    targets = [("SQLite", None)] + ([("PostgreSQL", args.postgres)] if args.postgres else [])
    print(f"| binary | database | corpus | posts | index bytes | bytes per post |")
    print("|---|---|---|---:|---:|---:|")
    for binary in args.plaza_bin:
        for name, url in targets:
            for corpus in ("latin", "cjk"):
                size = measure(binary, corpus, args.posts, url)
                print(f"| {binary} | {name} | {corpus} | {args.posts:,} | {size:,} | {size / args.posts:,.0f} |",
                      flush=True)


if __name__ == "__main__":
    main()
