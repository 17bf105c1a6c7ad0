#!/usr/bin/env python3
"""Two Plaza binaries on the same data, run in turns: is a change faster or slower?

    python3 bench/ab.py --before OLD_BIN --after NEW_BIN
    python3 bench/ab.py --before OLD_BIN --after NEW_BIN --paths "/api/v1/feed/global?limit=20" --rounds 6
    scripts/with-postgres.sh sh -c 'python3 bench/ab.py --postgres "$PLAZA_TEST_DATABASE_URL" --before … --after …'

The dataset (bench.py's, same seed and sizes) is loaded once through the API of the `--before`
binary (the older one: the newer migrates its database forward, the older could not open the
newer's). Each binary then gets its own copy of that data directory (and with --postgres, of
that database: CREATE DATABASE … TEMPLATE, then ANALYZE), and the rounds alternate
which runs first (before-after, after-before, …), so a machine that slows down or speeds up
over the minutes weighs on both alike. Each run starts the server afresh, warms up, then runs
wrk on one anonymous GET. A path may name `{post}` (the post 2,500 deep in the global feed),
`{busiest}` (the most-commented post) and `{deep}` (the global feed's cursor 2,500 posts deep),
which are looked up in the loaded data. Loopback only; the servers are stopped at the end, also
on errors.
"""
from __future__ import annotations

import argparse
import datetime as dt
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import servers  # noqa: E402
from benchlib.dataset import Dataset, Sizes  # noqa: E402
from benchlib.seed import PlazaSeeder  # noqa: E402

DEFAULT_PATHS = ("/api/v1/feed/global?limit=20,/api/v1/feed/global?limit=20&cursor={deep},/api/v1/posts/{post},"
                 "/api/v1/posts/{busiest}/comments?limit=20,/api/v1/search/posts?q=purploux&limit=20")


def args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--before", type=Path, required=True, help="the older binary (it loads the data)")
    p.add_argument("--after", type=Path, required=True)
    p.add_argument("--paths", default=DEFAULT_PATHS,
                   help="comma-separated GET paths (default: the global feed's first and deep page, a post, the "
                        "busiest post's comments, a search for the seed-42 dataset's rank-20 word)")
    p.add_argument("--rounds", type=int, default=4, help="runs per binary and path (default 4)")
    p.add_argument("--duration", type=int, default=10, help="seconds per measured run (default 10)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--connections", type=int, default=32)
    p.add_argument("--users", type=int, default=Sizes.users)
    p.add_argument("--posts", type=int, default=Sizes.posts)
    p.add_argument("--follows", type=int, default=Sizes.follows)
    p.add_argument("--comments", type=int, default=Sizes.comments)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--bcrypt-cost", type=int, default=10)
    p.add_argument("--postgres", metavar="URL", default=None,
                   help="run on PostgreSQL: a server URL whose user may create databases (plaza_ab_*)")
    p.add_argument("--workdir", type=Path, default=None, help="keeps the data here; a loaded one is reused")
    p.add_argument("--out", type=Path, default=None, help="also write the report here")
    return p.parse_args()


def with_resources(binary: Path, into: Path) -> Path:
    """A copy of the binary with its resource bundle beside it (found there first)."""
    into.mkdir(parents=True, exist_ok=True)
    copy = Path(shutil.copy2(binary, into / "plaza"))
    for bundle in binary.parent.glob("*.resources"):
        shutil.copytree(bundle, into / bundle.name, dirs_exist_ok=True)
    return copy


def database(a: argparse.Namespace, name: str) -> str | None:
    """The URL of database plaza_ab_<name> on --postgres's server (None on SQLite)."""
    if not a.postgres:
        return None
    parts = urlsplit(a.postgres)
    return urlunsplit(parts._replace(path=f"/plaza_ab_{name}"))


def psql(a: argparse.Namespace, sql: str, url: str | None = None) -> None:
    subprocess.run(["psql", url or a.postgres, "-v", "ON_ERROR_STOP=1", "-qc", sql], check=True,
                   capture_output=True, timeout=1800)


def fresh_database(a: argparse.Namespace, name: str, template: str | None = None) -> None:
    if not a.postgres:
        return
    psql(a, f"DROP DATABASE IF EXISTS plaza_ab_{name}")
    psql(a, f"CREATE DATABASE plaza_ab_{name}" + (f" TEMPLATE plaza_ab_{template}" if template else ""))
    if template:  # statistics for the planner, as autovacuum's next pass would gather them
        psql(a, "ANALYZE", database(a, name))


def loaded_database(a: argparse.Namespace) -> bool:
    """On PostgreSQL, whether the loaded database is still there (a throwaway server's is not)."""
    if not a.postgres:
        return True
    out = subprocess.run(["psql", a.postgres, "-tAc", "SELECT 1 FROM pg_database WHERE datname = 'plaza_ab_loaded'"],
                         capture_output=True, text=True, timeout=60)
    return out.stdout.strip() == "1"


def load(a: argparse.Namespace, binary: Path, data: Path) -> None:
    ds = Dataset(Sizes(a.users, a.posts, a.follows, a.comments), seed=a.seed, search_rank=20)
    fresh_database(a, "loaded")
    plaza = servers.Plaza(binary, data, a.bcrypt_cost, database_url=database(a, "loaded"))
    plaza.start()
    try:
        seeder = PlazaSeeder(plaza, ds)
        seeder.users_and_follows()
        seeder.posts(0, a.posts)
        if a.comments:
            seeder.comments()
        seeder.close()
    finally:
        plaza.stop()


def query(a: argparse.Namespace, data: Path, url: str | None, sql: str) -> str:
    """One value from the loaded database (sqlite3 or psql)."""
    cmd = ["psql", url, "-tAc", sql] if url else ["sqlite3", str(data / "plaza.sqlite"), sql]
    return subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=300).stdout.strip()


def placeholders(a: argparse.Namespace, binary: Path, data: Path, url: str | None) -> dict[str, str]:
    """The values of {post}, {busiest} and {deep} in this data (read before any measured run)."""
    depth = 2500
    values = {
        "post": query(a, data, url, f"SELECT id FROM posts ORDER BY id DESC LIMIT 1 OFFSET {depth}"),
        "busiest": query(a, data, url, "SELECT post_id FROM comments GROUP BY post_id ORDER BY count(*) DESC LIMIT 1"),
    }
    plaza = servers.Plaza(binary, data, a.bcrypt_cost, database_url=url)
    plaza.start()
    try:
        cursor = None
        for _ in range(depth // 20):
            params = {"limit": 20, **({"cursor": cursor} if cursor else {})}
            cursor = requests.get(plaza.base + "/api/v1/feed/global", params=params, timeout=60).json()["nextCursor"]
        values["deep"] = cursor
    finally:
        plaza.stop()
    return values


def run(a: argparse.Namespace, name: str, binary: Path, data: Path, path: str) -> float:
    """Requests per second of one measured run on a freshly started server."""
    plaza = servers.Plaza(binary, data, a.bcrypt_cost, database_url=database(a, name))
    plaza.start()
    try:
        url = plaza.base + path
        assert url.startswith(f"http://{servers.HOST}:"), "wrk only ever targets loopback"
        base = ["wrk", "-t2", f"-c{a.connections}"]
        subprocess.run(base + [f"-d{a.warmup}s", url], capture_output=True, check=True, timeout=a.warmup + 60)
        out = subprocess.run(base + [f"-d{a.duration}s", url], capture_output=True, text=True, check=True,
                             timeout=a.duration + 60).stdout
    finally:
        plaza.stop()
    line = next(ln for ln in out.splitlines() if ln.startswith("Requests/sec:"))
    if "Non-2xx" in out:
        raise RuntimeError(f"{path} answered errors:\n{out}")
    return float(line.split()[1])


def main() -> None:
    a = args()
    work = a.workdir or Path(tempfile.mkdtemp(prefix="plaza-ab-"))
    try:
        bins = {name: with_resources(b.resolve(), work / "bin" / name) for name, b in
                (("before", a.before), ("after", a.after))}
        loaded = work / "loaded"
        marker = f"postgres {a.postgres}\n" if a.postgres else "sqlite\n"
        if not (loaded / "done").exists() or (loaded / "done").read_text() != marker or not loaded_database(a):
            shutil.rmtree(loaded, ignore_errors=True)
            print("==> loading the dataset through the before binary", flush=True)
            load(a, bins["before"], loaded / "data")
            (loaded / "done").write_text(marker)
        for name in bins:
            shutil.rmtree(work / name, ignore_errors=True)
            shutil.copytree(loaded / "data", work / name / "data")
            fresh_database(a, name, template="loaded")
        values = placeholders(a, bins["before"], work / "before" / "data", database(a, "before"))
        rows = []
        for template in [p.strip() for p in a.paths.split(",") if p.strip()]:
            path = template.format(**values)
            rps: dict[str, list[float]] = {"before": [], "after": []}
            for r in range(a.rounds):
                for name in (("before", "after") if r % 2 == 0 else ("after", "before")):
                    rps[name].append(run(a, name, bins[name], work / name / "data", path))
                    print(f"    {template} {name}: {rps[name][-1]:,.0f} req/s", flush=True)
            rows.append((template, rps))
        report = render(a, rows)
        print(report)
        if a.out:
            a.out.write_text(report)
    finally:
        if a.workdir is None:
            shutil.rmtree(work, ignore_errors=True)


def render(a: argparse.Namespace, rows: list[tuple[str, dict[str, list[float]]]]) -> str:
    lines = [f"# Before and after ({dt.date.today().isoformat()})", "",
             f"`{a.before}` (before) and `{a.after}` (after), on {'PostgreSQL' if a.postgres else 'SQLite'}, one dataset ({a.users:,} users, {a.posts:,} posts, "
             f"{a.comments:,} comments, seed {a.seed}) loaded once and copied for each; {a.rounds} runs each, in "
             f"alternating order, {a.duration} s after {a.warmup} s of warm-up, wrk with {a.connections} connections.",
             "", "| GET | before, each run (req/s) | after, each run (req/s) | after/before, mean | best |",
             "|---|---|---|---:|---:|"]
    for path, rps in rows:
        b, f = rps["before"], rps["after"]
        lines.append(f"| `{path}` | {' / '.join(f'{x:,.0f}' for x in b)} | {' / '.join(f'{x:,.0f}' for x in f)} | "
                     f"{statistics.mean(f) / statistics.mean(b):.2f}× | {max(f) / max(b):.2f}× |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
