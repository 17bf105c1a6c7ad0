#!/usr/bin/env python3
"""Plaza vs PocketBase on the same machine and the same data. See bench/README.md.

    python3 bench/bench.py                       # default sizes, every scenario
    python3 bench/bench.py --users 50 --posts 2000 --comments 500 --duration 3
    python3 bench/bench.py --growth              # page latency at 10k, 100k, 1M posts
    python3 bench/bench.py --growth-shapes       # Plaza's lists for graph shapes, small and 10 x small

Both servers listen on 127.0.0.1 only, get fresh data directories, and are stopped at the end
(also on errors and Ctrl-C).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import datetime as dt
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import day as daybench, dayrun, report, scenarios, servers, shapes, social, wrk  # noqa: E402
from benchlib.dataset import Dataset, Sizes  # noqa: E402
from benchlib.seed import PlazaSeeder, PocketBaseSeeder, Seeded  # noqa: E402

RESULTS = servers.BENCH_DIR / "results"
SCENARIO_KEYS = ["feed_global", "feed_deep", "feed_home", "post_detail", "comments", "search",
                 "create_post", "create_comment", "like", "login", *social.KEYS]
GROWTH_KEYS = ["feed_global", "feed_home", "search"]


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    d = ap.add_argument_group("dataset")
    d.add_argument("--users", type=int, default=1000)
    d.add_argument("--posts", type=int, default=100_000)
    d.add_argument("--follows", type=int, default=20, help="follows per user")
    d.add_argument("--comments", type=int, default=25_000)
    d.add_argument("--seed", type=int, default=42, help="dataset RNG seed")
    d.add_argument("--search-rank", type=int, default=20, help="Zipf rank of the word the search scenario looks for")
    d.add_argument("--tagged-posts", type=int, default=10_000,
                   help="social scenarios: posts with 1-3 hashtags, loaded once the other scenarios ran")
    d.add_argument("--tag-follows", type=int, default=3, help="social scenarios: tags each user follows")
    d.add_argument("--boosts", type=int, default=5, help="social scenarios: posts each user boosts")
    w = ap.add_argument_group("load")
    w.add_argument("--duration", type=int, default=15, help="seconds per measured run")
    w.add_argument("--warmup", type=int, default=3, help="seconds of warm-up before each run (0: none)")
    w.add_argument("--rounds", type=int, default=2, help="runs per system per scenario, alternating A B A B")
    w.add_argument("--connections", type=int, default=32)
    w.add_argument("--login-connections", type=int, default=8, help="connections for the CPU-bound login scenario")
    w.add_argument("--threads", type=int, default=2, help="wrk threads")
    w.add_argument("--timeout", type=int, default=10, help="wrk: requests slower than this count as errors")
    w.add_argument("--pin", action="store_true", help="pin each server to core 0 and wrk to core 1 (taskset) for the runs")
    w.add_argument("--retry-busy", type=int, default=2,
                   help="run again (at most this often) when other processes used over 0.15 cores during a run")
    w.add_argument("--retry-wait", type=float, default=20, help="seconds to wait before such a retry")
    w.add_argument("--only", default="", help=f"comma-separated scenarios ({','.join(SCENARIO_KEYS)})")
    w.add_argument("--deep", type=int, default=2500, help="posts deep for the deep-page scenario")
    w.add_argument("--pb-home", choices=["backrel", "list"], default="list",
                   help="PocketBase home-feed filter measured in the table (the other runs once as an extra row); "
                        "'list' names the followed users and is much faster than the 'backrel' back-relation filter")
    s = ap.add_argument_group("servers")
    s.add_argument("--plaza-bin", type=Path, default=servers.REPO / ".build" / "release" / "plaza")
    s.add_argument("--bcrypt-cost", type=int, default=0,
                   help="Plaza's bcrypt cost (default: the cost read from PocketBase's stored password hashes)")
    s.add_argument("--pb-request-logs", action="store_true",
                   help="keep PocketBase's request log on (its default); off by default because Plaza logs no requests at info level")
    s.add_argument("--postgres", metavar="URL", default="",
                   help="also run Plaza on this PostgreSQL database (empty, yours to fill; `make bench` starts one) "
                        "and report it beside the other two")
    s.add_argument("--loader-processes", type=int, default=2)
    s.add_argument("--loader-threads", type=int, default=8, help="seeding threads per loader process")
    s.add_argument("--workdir", type=Path, default=None, help="where data dirs and request files go (default: a temp dir, removed)")
    s.add_argument("--keep", action="store_true", help="keep the work dir")
    ap.add_argument("--push", action="store_true",
                    help="the cost of push instead of the comparison: like and comment with and without every "
                         "person's browser subscribed (a loopback push service), then drain time and latency")
    y = ap.add_argument_group("a community's day (--day)")
    y.add_argument("--day", action="store_true",
                   help="people per box instead of the comparison: simulated people with think times and a realtime "
                        "stream each, stepped up until a page's p99 passes --day-limit-ms or anything fails")
    y.add_argument("--day-users", type=int, default=6000, help="people in the dataset (the most a step can simulate)")
    y.add_argument("--day-posts", type=int, default=30_000)
    y.add_argument("--day-comments", type=int, default=7_500)
    y.add_argument("--day-systems", default="pocketbase,plaza,postgres",
                   help="which of pocketbase, plaza, postgres (Plaza on --postgres), in this order")
    y.add_argument("--day-start", type=int, default=500, help="people in the first step (then doubled)")
    y.add_argument("--day-refine", type=int, default=2, help="steps halving the gap between the last pass and the first failure")
    y.add_argument("--day-ramp", type=float, default=20, help="seconds over which a step's people arrive")
    y.add_argument("--day-measure", type=float, default=40, help="seconds measured once all have arrived")
    y.add_argument("--day-limit-ms", type=float, default=250, help="the p99 every page must stay under")
    y.add_argument("--day-upload-limit-ms", type=float, default=1000,
                   help="the p99 a photo post (the upload, its processing and the post) must stay under")
    y.add_argument("--day-workers", type=int, default=2, help="processes simulating the people")
    y.add_argument("--think", type=float, default=10, help="mean seconds a person reads before the next action")
    y.add_argument("--session-actions", type=float, default=8, help="mean actions after opening the app, before a pause")
    y.add_argument("--person-minutes", type=float, default=30,
                   help="minutes a person uses the app a day, for the day's database growth")
    g = ap.add_argument_group("growth")
    g.add_argument("--growth", action="store_true", help="cost-growth mode instead of the comparison")
    g.add_argument("--growth-sizes", default="10000,100000,1000000")
    g.add_argument("--growth-pocketbase", choices=["auto", "yes", "no"], default="auto",
                   help="auto: load PocketBase too unless the next size would take over --growth-pb-budget seconds")
    g.add_argument("--growth-pb-budget", type=float, default=600)
    g.add_argument("--growth-shapes", action="store_true",
                   help="graph-shape growth on Plaza alone (a person following 5 quiet accounts, 1,000 accounts, a prolific "
                        "account; a long thread; many notifications; a long reading history), each at a small size and 10 x "
                        "that; with --growth, after the post-count stages, in the same report")
    g.add_argument("--shape-scale", type=float, default=1.0,
                   help="multiplies every graph-shape size (0.02: a quick try)")
    g.add_argument("--out", type=Path, default=None,
                   help="report file (default bench/results/YYYY-MM-DD-HHMM[-growth|-shapes].md)")
    a = ap.parse_args(argv)
    a.only = {k.strip() for k in a.only.split(",") if k.strip()}
    unknown = a.only - set(SCENARIO_KEYS)
    if unknown:
        ap.error(f"unknown scenarios: {', '.join(sorted(unknown))}")
    if a.comments > 0 and a.posts < 1:
        ap.error("comments need posts")
    if a.tagged_posts < 1 and a.only & set(social.KEYS):
        ap.error("the social scenarios need --tagged-posts")
    if a.shape_scale <= 0:
        ap.error("--shape-scale must be positive")
    return a


class Bench:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.servers: list[servers.Server] = []
        self.closers: list = []
        self.tmp = args.workdir or Path(tempfile.mkdtemp(prefix="plaza-bench-"))
        self.tmp.mkdir(parents=True, exist_ok=True)
        self.wrk = wrk.WrkSettings(threads=args.threads, connections=args.connections, duration=args.duration,
                                   warmup=args.warmup, timeout=args.timeout, cpus="1" if args.pin else None)
        self.bcrypt_note = ""
        self.plaza_version = "Plaza (unknown)"
        self.plaza_run_bin = args.plaza_bin

    # ---- lifecycle ------------------------------------------------------------------------
    def close(self, failed: bool = False) -> None:
        for c in reversed(self.closers):
            try:
                c()
            except Exception as exc:  # keep stopping the rest
                print(f"warning: {exc}", file=sys.stderr)
        for s in reversed(self.servers):
            s.stop()
        if failed:
            self.keep_logs()
        if not self.args.keep and self.args.workdir is None:
            shutil.rmtree(self.tmp, ignore_errors=True)
        elif self.args.keep:
            print(f"work dir kept: {self.tmp}")

    def keep_logs(self) -> None:
        """Copies the servers' logs out of the work dir, which is about to be removed, so that a
        run that failed (a 500, a crash) can be read afterwards."""
        logs = sorted(self.tmp.rglob("*.log")) if self.tmp.is_dir() else []
        if not logs:
            return
        kept = Path(tempfile.mkdtemp(prefix="plaza-bench-logs-"))
        for log in logs:
            shutil.copy2(log, kept / str(log.relative_to(self.tmp)).replace("/", "_"))
        print(f"the run did not finish; the servers' logs are in {kept}", file=sys.stderr)

    def preconditions(self, pocketbase: bool = True) -> Path | None:
        if shutil.which("wrk") is None:
            sys.exit("wrk is not installed: `apt-get install -y wrk` (or run `make bench`)")
        if not self.args.plaza_bin.is_file():
            sys.exit(f"no Plaza binary at {self.args.plaza_bin}: `swift build -c release --product plaza` (or `make bench`)")
        # Run a copy, and describe it now: a rebuild during the benchmark must not change what runs
        # or what the report says ran.
        built = dt.datetime.fromtimestamp(self.args.plaza_bin.stat().st_mtime).strftime("%Y-%m-%d %H:%M")
        self.plaza_version = (f"Plaza {report.git_describe(servers.REPO)}, binary {self.args.plaza_bin} built {built}")
        (self.tmp / "bin").mkdir(exist_ok=True)
        self.plaza_run_bin = Path(shutil.copy2(self.args.plaza_bin, self.tmp / "bin" / "plaza"))
        return servers.ensure_pocketbase() if pocketbase else None

    def start_pocketbase(self, binary: Path) -> servers.PocketBase:
        pb = servers.PocketBase(binary, self.tmp / "pb_data")
        pb.prepare()
        self.servers.append(pb)
        pb.start()
        su = pb.superuser_token()
        if not self.args.pb_request_logs:  # logs.maxDays = 0 turns PocketBase's request log off
            r = requests.patch(pb.base + "/api/settings", json={"logs": {"maxDays": 0}},
                               headers={"Authorization": su}, timeout=30)
            r.raise_for_status()
        return pb

    def pocketbase_bcrypt_cost(self, pb: servers.PocketBase) -> int:
        """Reads the cost from a stored hash ($2a$NN$...) of a user the seeding created."""
        con = sqlite3.connect(f"file:{pb.data_dir / 'data.db'}?mode=ro", uri=True, timeout=30)
        try:
            (h,) = con.execute("SELECT password FROM users LIMIT 1").fetchone()
        finally:
            con.close()
        cost = int(h.split("$")[2])
        self.bcrypt_note = f"{cost} (read from PocketBase's stored hash `{h[:7]}…`; Plaza started with PLAZA_BCRYPT_COST={cost})"
        return cost

    def start_plaza(self, cost: int, data: str = "plaza_data", database_url: str | None = None,
                    extra_env: dict[str, str] | None = None) -> servers.Plaza:
        if self.args.bcrypt_cost and cost != self.args.bcrypt_cost:
            cost = self.args.bcrypt_cost
            self.bcrypt_note += f"; overridden: Plaza runs at cost {cost}"
        if not 10 <= cost <= 16:
            raise RuntimeError(f"bcrypt cost {cost} is outside Plaza's 10–16")
        plaza = servers.Plaza(self.plaza_run_bin, self.tmp / data, cost, database_url=database_url, extra_env=extra_env)
        self.servers.append(plaza)
        plaza.start()
        return plaza

    def loaded_plaza(self, cost: int, ds: Dataset, data: str = "plaza_data", database_url: str | None = None,
                     system: str = "Plaza", extra_env: dict[str, str] | None = None) -> tuple[servers.Plaza, PlazaSeeder]:
        """A Plaza started and loaded with the whole dataset through its API."""
        a = self.args
        plaza = self.start_plaza(cost, data=data, database_url=database_url, extra_env=extra_env)
        seeder = PlazaSeeder(plaza, ds, processes=a.loader_processes, threads=a.loader_threads, system=system)
        self.closers.append(seeder.close)
        seeder.users_and_follows()
        seeder.posts(0, ds.sizes.posts)
        if ds.sizes.comments:
            seeder.comments()
        seeder.close()
        return plaza, seeder

    def pin(self, server: servers.Server, cpus: str = "0") -> None:
        """With --pin, moves every thread of the server onto `cpus` (before runs; "0,1" again before seeding)."""
        if self.args.pin:
            subprocess.run(["taskset", "-a", "-p", "-c", cpus, str(server.pid)], check=True, capture_output=True, timeout=30)
            server.cpus = cpus

    # ---- one wrk run ------------------------------------------------------------------------
    def run_side(self, server: servers.Server, side: scenarios.Side, connections: int) -> wrk.RunResult:
        """Warm-up, then one measured run. When other processes used more than 0.15 cores meanwhile
        (a build next to the benchmark), waits and runs again, up to --retry-busy times, and keeps
        the least disturbed run."""
        runs: list[wrk.RunResult] = []
        for attempt in range(1 + max(0, self.args.retry_busy)):
            if attempt:
                print(f"      machine busy (other processes used {runs[-1].other_cpu:.2f} cores); "
                      f"again in {self.args.retry_wait:g} s", flush=True)
                time.sleep(self.args.retry_wait)
            if self.wrk.warmup > 0:
                warm = wrk.run(server.base, side.script, side.args(), self.wrk, connections=connections,
                               duration=self.wrk.warmup)
                if side.after_run:
                    side.after_run(warm.max_sent)
            res = wrk.run(server.base, side.script, side.args(), self.wrk, connections=connections,
                          duration=self.wrk.duration, pid=server.pid, helpers=server.helper_pids())
            if side.after_run:
                side.after_run(res.max_sent)
            res.extra["attempts"] = attempt + 1
            runs.append(res)
            if res.other_cpu <= report.OTHER_CPU_WARN:
                break
        return min(runs, key=lambda r: r.other_cpu)

    def run_scenario(self, sc: scenarios.Scenario, plaza: servers.Plaza, pb: servers.PocketBase,
                     postgres: tuple[servers.Plaza, scenarios.Side] | None = None) -> report.ScenarioResult:
        scenarios.preflight(plaza.base, sc.plaza)
        scenarios.preflight(pb.base, sc.pocketbase)
        res = report.ScenarioResult(sc, report.SideResult(sc.plaza), report.SideResult(sc.pocketbase))
        sides = [(plaza, res.plaza), (pb, res.pocketbase)]
        if postgres is not None:
            scenarios.preflight(postgres[0].base, postgres[1])
            res.postgres = report.SideResult(postgres[1])
            sides.append((postgres[0], res.postgres))
        for rnd in range(self.args.rounds):
            for server, sr in sides:
                if sr.side.unavailable:
                    if rnd == 0:
                        print(f"    {server.name}: {sr.side.unavailable}", flush=True)
                    continue
                r = self.run_side(server, sr.side, sc.connections)
                sr.runs.append(r)
                print(f"    {server.name:<10} round {rnd + 1}: {r.rps:>9,.0f} req/s  p50 {r.p50_ms:7.2f} ms  "
                      f"p99 {r.p99_ms:8.2f} ms  errors {r.errors:,}  peak RSS {r.peak_rss_kb / 1024:.1f} MB  "
                      f"cpu {r.server_cpu:.2f}/{r.wrk_cpu:.2f}/{r.other_cpu:.2f}", flush=True)
        for label, system, side in sc.extras:
            server = plaza if system == "plaza" else pb
            scenarios.preflight(server.base, side)
            sr = report.SideResult(side)
            if not side.unavailable:
                r = self.run_side(server, side, sc.connections)
                sr.runs.append(r)
                print(f"    {label} (extra): {r.rps:,.0f} req/s  p50 {r.p50_ms:.2f} ms  p99 {r.p99_ms:.2f} ms  "
                      f"errors {r.errors:,}", flush=True)
            res.extras.append((label, sr))
        return res

    # ---- the comparison ---------------------------------------------------------------------------
    def compare(self) -> str:
        a = self.args
        pb_bin = self.preconditions()
        sizes = Sizes(a.users, a.posts, a.follows, a.comments)
        ds = Dataset(sizes, seed=a.seed, search_rank=a.search_rank)
        print(f"==> Dataset: {a.users:,} users, {a.posts:,} posts, {a.follows} follows/user, {a.comments:,} comments "
              f"(seed {a.seed}; search word '{ds.search_word}')", flush=True)

        print("==> PocketBase: migrate, start, seed", flush=True)
        pb = self.start_pocketbase(pb_bin)
        pbs = PocketBaseSeeder(pb, ds, processes=a.loader_processes, threads=a.loader_threads)
        self.closers.append(pbs.close)
        pbs.users_and_follows()
        cost = self.pocketbase_bcrypt_cost(pb)
        pbs.posts(0, a.posts)
        if a.comments:
            pbs.comments()
        pbs.close()

        print(f"==> Plaza: start (bcrypt cost {cost}), seed", flush=True)
        plaza, pls = self.loaded_plaza(cost, ds)

        pg = pgs = None
        if a.postgres:
            print("==> Plaza on PostgreSQL: start, seed", flush=True)
            pg, pgs = self.loaded_plaza(cost, ds, data="plaza_pg_data", database_url=a.postgres,
                                        system="Plaza on PostgreSQL")
            # Statistics for the planner, as autovacuum's next pass would gather them (without
            # them PostgreSQL planned the global feed as a scan of every post: 3x slower).
            subprocess.run(["psql", a.postgres, "-qc", "ANALYZE"], check=True, capture_output=True, timeout=600)

        time.sleep(3)
        idle = {"Plaza": plaza.memory_kb(), "PocketBase": pb.memory_kb()}
        if pg is not None:
            idle["Plaza on PostgreSQL"] = pg.memory_kb()
            self.pin(pg)
        print(f"==> Idle RSS: Plaza {servers.rss_text(idle['Plaza'])}, PocketBase {servers.rss_text(idle['PocketBase'])}",
              flush=True)
        self.pin(plaza)
        self.pin(pb)

        scs = scenarios.build(ds, pls.seeded, pbs.seeded, plaza.base, pb.base, self.tmp / "requests",
                              threads=a.threads, connections=a.connections, login_connections=a.login_connections,
                              deep=a.deep, pb_home=a.pb_home, only=a.only or None)
        pg_sides: dict[str, scenarios.Side] = {}
        if pg is not None and pgs is not None:  # the same requests, with its own ids and tokens
            pg_sides = {sc.key: sc.plaza for sc in scenarios.build(
                ds, pgs.seeded, pbs.seeded, pg.base, pb.base, self.tmp / "requests_pg", threads=a.threads,
                connections=a.connections, login_connections=a.login_connections, deep=a.deep, pb_home=a.pb_home,
                only=a.only or None)}
        results = []
        for sc in scs:
            print(f"==> {sc.title}", flush=True)
            results.append(self.run_scenario(sc, plaza, pb, (pg, pg_sides[sc.key]) if pg is not None else None))
        social_keys = {k for k in social.KEYS if not a.only or k in a.only}
        if social_keys and a.tagged_posts > 0:
            results += self.social_scenarios(ds, social_keys, (plaza, pls.seeded), (pb, pbs.seeded),
                                             (pg, pgs.seeded) if pg is not None and pgs is not None else None)

        meta = self.meta(ds, pb_bin)
        lines = report.header("Plaza vs PocketBase", meta, self.settings_lines())
        lines += report.busy_warning([r for res in results for sr in (res.plaza, res.pocketbase, res.postgres)
                                      if sr is not None for r in sr.runs])
        lines += report.summary_table(results)
        lines += ["## Scenarios", ""]
        for r in results:
            lines += report.scenario_section(r, a.rounds)
        lines += report.seeding_section([pls.seeded, pbs.seeded] + ([pgs.seeded] if pgs else []), idle)
        lines += self.method_notes()
        return "\n".join(lines)

    def social_scenarios(self, ds: Dataset, keys: set[str], plaza: tuple[servers.Plaza, Seeded],
                         pb: tuple[servers.PocketBase, Seeded],
                         pg: tuple[servers.Plaza, Seeded] | None) -> list[report.ScenarioResult]:
        """Step 22's scenarios (benchlib/social.py), after the others, so those read the data they
        always did: tagged posts, followed tags, boosts and polls are added to each system first."""
        a = self.args
        runs = a.rounds * (1 + max(0, a.retry_busy))  # at most, each after a warm-up
        polls = social.Social.polls_needed(a.users, a.warmup + a.duration, runs) if "poll_vote" in keys else 1
        soc = social.Social(ds, social.Sizes(a.tagged_posts, a.tag_follows, a.boosts, polls))
        print(f"==> Social set-up: {a.tagged_posts:,} tagged posts, {a.tag_follows} followed tags and {a.boosts} boosts "
              f"a user, {polls:,} poll{'s' if polls != 1 else ''}", flush=True)
        every_core = f"0-{(os.cpu_count() or 1) - 1}"
        systems = [plaza[0], pb[0]] + ([pg[0]] if pg else [])
        for server in systems:
            self.pin(server, every_core)  # loading may use every core
        pb_loaded = social.load_pocketbase(pb[0], pb[1], soc)
        loaded = [social.load_plaza(server, seeded, soc, processes=a.loader_processes, threads=a.loader_threads)
                  for server, seeded in [plaza] + ([pg] if pg else [])]
        if pg:
            subprocess.run(["psql", a.postgres, "-qc", "ANALYZE"], check=True, capture_output=True, timeout=600)
        time.sleep(2)
        for server in systems:
            self.pin(server)
        scs = social.build(soc, plaza[1], loaded[0], pb[1], pb_loaded, plaza[0].base, pb[0].base,
                           self.tmp / "requests_social", threads=a.threads, connections=a.connections, only=keys)
        pg_sides: dict[str, scenarios.Side] = {}
        if pg:  # the same requests, with its own ids and tokens
            pg_sides = {sc.key: sc.plaza for sc in social.build(
                soc, pg[1], loaded[1], pb[1], pb_loaded, pg[0].base, pb[0].base, self.tmp / "requests_social_pg",
                threads=a.threads, connections=a.connections, only=keys)}
        results = []
        for sc in scs:
            print(f"==> {sc.title}", flush=True)
            results.append(self.run_scenario(sc, plaza[0], pb[0], (pg[0], pg_sides[sc.key]) if pg else None))
        return results

    # ---- push --------------------------------------------------------------------------------
    def push_cost(self) -> str:
        """--push: like and comment with no push device, then with one per person, alternating."""
        from benchlib import push
        a = self.args
        self.preconditions(pocketbase=False)
        sizes = Sizes(a.users, a.posts, a.follows, a.comments)
        ds = Dataset(sizes, seed=a.seed, search_rank=a.search_rank)
        cost = a.bcrypt_cost or 10
        print(f"==> Dataset: {a.users:,} users, {a.posts:,} posts; Plaza (bcrypt cost {cost}), seed", flush=True)
        plaza, pls = self.loaded_plaza(cost, ds, extra_env={"PLAZA_PUSH_ALLOW": "127.0.0.1"})
        self.pin(plaza)
        sink = push.PushSink()
        self.closers.append(sink.close)
        scs = scenarios.build(ds, pls.seeded, _mirror(pls.seeded), plaza.base, plaza.base, self.tmp / "requests",
                              threads=a.threads, connections=a.connections, login_connections=a.login_connections,
                              deep=a.deep, pb_home=a.pb_home, only=a.only or {"like", "create_comment"})
        runs: dict[tuple[str, str], list] = {}
        drains: list[str] = []
        for rnd in range(a.rounds):
            for mode in ("off", "on"):
                devices = push.subscribe_all(plaza.base, pls.seeded.tokens, sink) if mode == "on" else []
                for sc in scs:
                    scenarios.preflight(plaza.base, sc.plaza)
                    before, started = sink.count(), time.monotonic()
                    r = self.run_side(plaza, sc.plaza, sc.connections)
                    runs.setdefault((sc.key, mode), []).append(r)
                    line = (f"    {sc.key:<15} push {mode:<3} round {rnd + 1}: {r.rps:>8,.0f} req/s  "
                            f"p50 {r.p50_ms:6.2f} ms  p99 {r.p99_ms:7.2f} ms  errors {r.errors:,}  "
                            f"cpu {r.server_cpu:.2f}/{r.wrk_cpu:.2f}/{r.other_cpu:.2f}")
                    if mode == "on":
                        last = sink.wait_quiet()
                        sent = sink.count() - before
                        took = max(last - started, 1e-9)
                        drains.append(f"{sc.key} round {rnd + 1}: {sent:,} pushes, the last {last - started:.1f} s "
                                      f"after the run began ({sent / took:,.0f} pushes/s over that time)")
                        line += f"  pushes {sent:,}, drained {last - started:.1f} s after the start"
                    print(line, flush=True)
                if devices:
                    push.unsubscribe_all(plaza.base, devices)
        # Latency on an idle server.
        devices = push.subscribe_all(plaza.base, pls.seeded.tokens, sink)
        sink.wait_quiet()
        latencies = push.latency(plaza.base, pls.seeded.tokens, sink)
        push.unsubscribe_all(plaza.base, devices)

        meta = self.meta(ds, None)
        lines = report.header("The cost of push", meta, self.settings_lines())
        lines += ["| scenario | push off req/s | push on req/s | change | p99 off | p99 on | Plaza cores off / on | "
                  "other cores off / on |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for sc in scs:
            off, on = runs[(sc.key, "off")], runs[(sc.key, "on")]
            m_off = statistics.median(r.rps for r in off)
            m_on = statistics.median(r.rps for r in on)
            lines.append(f"| {sc.title} | {m_off:,.0f} | {m_on:,.0f} | {100 * (m_on - m_off) / m_off:+.1f}% | "
                         f"{statistics.median(r.p99_ms for r in off):.2f} ms | {statistics.median(r.p99_ms for r in on):.2f} ms | "
                         f"{statistics.median(r.server_cpu for r in off):.2f} / {statistics.median(r.server_cpu for r in on):.2f} | "
                         f"{statistics.median(r.other_cpu for r in off):.2f} / {statistics.median(r.other_cpu for r in on):.2f} |")
        lines += ["", "Runs alternate push off / on; medians of the rounds. With push on, every person has one browser "
                  "subscription at a loopback Web Push service (Python's http.server, 201 for all), so each like and "
                  "comment also queues a push, which the server encrypts (RFC 8291), signs (VAPID) and sends. "
                  "Cores: the average number of cores Plaza used during the measured run, and everything else but wrk "
                  "and the benchmark's own process (which runs the push service).", "",
                  "## The queue", ""] + [f"- {d}" for d in drains]
        lines += ["", "## Latency", "",
                  f"From sending a like to its push arriving, one at a time on an idle server: {push.summary(latencies)}.",
                  ""]
        lines += self.method_notes()
        return "\n".join(lines)

    # ---- growth ------------------------------------------------------------------------------
    def growth(self) -> str:
        """--growth (post counts, both systems) and/or --growth-shapes (graph shapes, Plaza), one report."""
        a = self.args
        pb_bin = self.preconditions(pocketbase=a.growth)
        sections: list[str] = []
        runs: list[wrk.RunResult] = []
        ds = None
        cost = a.bcrypt_cost or 10
        if a.growth:
            ds, cost = self.growth_posts(pb_bin, sections, runs)
            self.stop_servers()  # the shapes get a fresh Plaza of their own
        if a.growth_shapes:
            if not self.bcrypt_note:
                self.bcrypt_note = f"{cost} (Plaza started with PLAZA_BCRYPT_COST={cost}; `--bcrypt-cost` sets it)"
            self.growth_shapes(cost, sections, runs)
        meta = self.meta(ds, pb_bin, growth=True)
        lines = report.header("Plaza cost growth", meta, self.settings_lines())
        lines += report.busy_warning(runs)
        lines += sections
        lines += self.method_notes()
        return "\n".join(lines)

    def day(self) -> str:
        """A community's day (benchlib/day.py): the most people each system holds."""
        a = self.args
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the servers inherit it: a stream is a socket
        systems = [s.strip() for s in a.day_systems.split(",") if s.strip()]
        if "postgres" in systems and not a.postgres:
            systems.remove("postgres")
        pb_bin = self.preconditions(pocketbase="pocketbase" in systems)
        ds = Dataset(Sizes(a.day_users, a.day_posts, a.follows, a.day_comments), seed=a.seed, search_rank=a.search_rank)
        photo = daybench.photo(self.tmp)
        common = dict(followees=[ds.followees(u) for u in range(a.day_users)], words=ds.words[9:300],
                      texts=ds.write_samples(500, "comment"), photo=photo, think=a.think,
                      actions_per_session=a.session_actions, seed=a.seed)
        names = {"pocketbase": "PocketBase", "plaza": "Plaza", "postgres": "Plaza on PostgreSQL"}
        cost, held, sections, loading = 10, {}, [], []
        for system in systems:
            print(f"==> {names[system]}: start, load {a.day_users:,} people, {a.day_posts:,} posts", flush=True)
            if system == "pocketbase":
                server = self.start_pocketbase(pb_bin)
                seeder = PocketBaseSeeder(server, ds, processes=a.loader_processes, threads=a.loader_threads)
                self.closers.append(seeder.close)
                seeder.users_and_follows()
                cost = self.pocketbase_bcrypt_cost(server)
                seeder.posts(0, a.day_posts)
                seeder.comments()
                seeder.close()
                size = dayrun.dir_size(server.data_dir)
            else:
                url = a.postgres if system == "postgres" else None
                server, seeder = self.loaded_plaza(
                    cost, ds, data=f"plaza_{system}_data", database_url=url, system=names[system],
                    extra_env={"PLAZA_STREAMS_MAX": str(a.day_users + 1000)})
                if url:
                    subprocess.run(["psql", url, "-qc", "ANALYZE"], check=True, capture_output=True, timeout=600)
                    files, database = dayrun.dir_size(server.data_dir), dayrun.postgres_size(url)
                    size = lambda: files() + database()
                else:
                    size = dayrun.dir_size(server.data_dir)
            loading.append(seeder.seeded)
            world = daybench.World(system="pocketbase" if system == "pocketbase" else "plaza", port=server.port,
                                   tokens=seeder.seeded.tokens, user_ids=seeder.seeded.user_ids, **common)
            time.sleep(3)
            idle = server.memory_kb()
            print(f"    idle RSS {servers.rss_text(idle)}", flush=True)
            stepper = dayrun.Stepper(world, server, size, workers=a.day_workers, ramp=a.day_ramp, measure=a.day_measure,
                                     limit_ms=a.day_limit_ms, upload_limit_ms=a.day_upload_limit_ms)
            steps, held[system] = stepper.find(a.day_start, a.day_users, a.day_refine,
                                               lambda s, n=names[system]: print(dayrun.step_line(n, s), flush=True))
            sections += dayrun.system_section(names[system], steps, held[system], a.day_users, a.person_minutes)
            sections[-1:-1] = [f"Idle RSS after loading: {servers.rss_text(idle)}."]
            server.stop()
        meta = self.meta(ds, pb_bin)
        meta["Dataset"] = (f"{a.day_users:,} people, {a.follows} follows each, {a.day_posts:,} posts, "
                           f"{a.day_comments:,} comments; seed {a.seed}")
        lines = report.header("A community's day: how many people one box holds", meta, dayrun.settings_lines(a))
        lines += dayrun.summary(held, names, a)
        lines += sections
        lines += report.seeding_section(loading, {})
        return "\n".join(lines)

    def stop_servers(self) -> None:
        for c in reversed(self.closers):
            c()
        self.closers.clear()
        for srv in reversed(self.servers):
            srv.stop()
        self.servers.clear()

    def growth_posts(self, pb_bin: Path, sections: list[str], all_runs: list) -> tuple[Dataset, int]:
        """Posts in stages into both systems; the global feed, home feed and search after each."""
        a = self.args
        stages = sorted({int(x) for x in a.growth_sizes.split(",") if x.strip()})
        sizes = Sizes(a.users, stages[-1], a.follows, 0)
        ds = Dataset(sizes, seed=a.seed, search_rank=a.search_rank)
        print(f"==> Growth: {a.users:,} users, {a.follows} follows/user; posts at {', '.join(f'{s:,}' for s in stages)}", flush=True)

        use_pb = a.growth_pocketbase != "no"
        pb = pbs = None
        cost = a.bcrypt_cost or 10
        pb_note = ""
        if use_pb:
            pb = self.start_pocketbase(pb_bin)
            pbs = PocketBaseSeeder(pb, ds, processes=a.loader_processes, threads=a.loader_threads)
            self.closers.append(pbs.close)
            pbs.users_and_follows()
            cost = self.pocketbase_bcrypt_cost(pb)
        else:
            pb_note = "PocketBase was not loaded (--growth-pocketbase no)."
        plaza = self.start_plaza(cost)
        pls = PlazaSeeder(plaza, ds, processes=a.loader_processes, threads=a.loader_threads)
        self.closers.append(pls.close)
        pls.users_and_follows()

        points: list[report.GrowthPoint] = []
        titles = {}
        loaded = 0
        for n in stages:
            print(f"==> {n:,} posts", flush=True)
            every_core = f"0-{(os.cpu_count() or 1) - 1}"
            self.pin(plaza, every_core)  # seeding may use every core
            if use_pb:
                self.pin(pb, every_core)
            pls.posts(loaded, n)
            if use_pb and pbs is not None:
                rate = next((ph.rate for ph in reversed(pbs.seeded.phases) if ph.name.startswith("posts")), 0)
                estimate = (n - loaded) / rate if rate else 0
                if a.growth_pocketbase == "auto" and estimate > a.growth_pb_budget:
                    pb_note = (f"PocketBase stopped at {loaded:,} posts: loading {n - loaded:,} more at its measured "
                               f"{rate:,.0f} posts/s would take ~{estimate / 60:.0f} min (budget {a.growth_pb_budget / 60:.0f} min).")
                    print(f"    {pb_note}", flush=True)
                    use_pb = False
                    pb.stop()
                else:
                    pbs.posts(loaded, n)
            loaded = n
            time.sleep(2)
            self.pin(plaza)
            if use_pb:
                self.pin(pb)
            # Both seeded objects must cover the same posts for build(); a stopped PocketBase gets a stand-in.
            pb_seeded = pbs.seeded if use_pb else _mirror(pls.seeded)
            scs = scenarios.build(ds, pls.seeded, pb_seeded, plaza.base, pb.base if use_pb else plaza.base,
                                  self.tmp / f"requests_{n}", threads=a.threads, connections=a.connections,
                                  login_connections=a.login_connections, deep=a.deep, pb_home=a.pb_home,
                                  only=set(GROWTH_KEYS))
            for sc in scs:
                titles[sc.key] = sc.title.split(" (")[0] if sc.key != "search" else "Search posts for a common word"
                print(f"  -> {sc.title}", flush=True)
                entries = []
                for system, server, side in (("Plaza", plaza, sc.plaza), ("PocketBase", pb, sc.pocketbase)):
                    if system == "PocketBase" and not use_pb:
                        points.append(report.GrowthPoint(n, sc.key, system, None, "not loaded"))
                        continue
                    scenarios.preflight(server.base, side)
                    if side.unavailable:
                        print(f"    {system}: {side.unavailable}", flush=True)
                        points.append(report.GrowthPoint(n, sc.key, system, None, "n/a"))
                        continue
                    entries.append([system, server, side, None])
                for _ in range(a.rounds):  # alternating, as in the comparison
                    for entry in entries:
                        r = self.run_side(entry[1], entry[2], sc.connections)
                        all_runs.append(r)
                        entry[3] = r if entry[3] is None or r.rps > entry[3].rps else entry[3]
                for system, _, _, best in entries:
                    print(f"    {system:<10} {best.rps:>9,.0f} req/s  p50 {best.p50_ms:7.2f} ms  p99 {best.p99_ms:8.2f} ms  "
                          f"errors {best.errors:,}", flush=True)
                    points.append(report.GrowthPoint(n, sc.key, system, best))
            titles = {k: titles[k] for k in GROWTH_KEYS if k in titles}

        seeding = ["| system | phase | records | seconds | records/s |", "|---|---|---:|---:|---:|"]
        for s in [pls.seeded] + ([pbs.seeded] if pbs else []):
            for ph in s.phases:
                seeding.append(f"| {s.system} | {ph.name} | {ph.count:,} | {ph.seconds:.1f} | {ph.rate:,.0f} |")
        sections += report.growth_section(points, titles, pb_note, seeding)
        return ds, plaza.bcrypt_cost

    def growth_shapes(self, cost: int, sections: list[str], all_runs: list) -> None:
        """The graph shapes (benchlib/shapes.py) on a fresh Plaza: load small, measure, grow 10 x, measure."""
        a = self.args
        sizes = shapes.ShapeSizes.scaled(a.shape_scale)
        print(f"==> Graph shapes: {sizes.describe()}", flush=True)
        plaza = self.start_plaza(cost, data="plaza_shapes_data")
        world = shapes.ShapeWorld(plaza, sizes, seed=a.seed, processes=a.loader_processes, threads=a.loader_threads)
        self.closers.append(world.close)
        every_core = f"0-{(os.cpu_count() or 1) - 1}"
        self.pin(plaza, every_core)
        world.setup()
        results: list[shapes.ShapeResult] = []
        for stage, tag in enumerate(shapes.STAGES):
            print(f"==> Graph shapes, {tag}", flush=True)
            self.pin(plaza, every_core)  # loading may use every core
            world.load(stage)
            time.sleep(2)
            self.pin(plaza)
            workdir = self.tmp / f"requests_shapes_{tag}"
            workdir.mkdir(parents=True, exist_ok=True)
            k = 0
            for sc in world.scenarios():
                print(f"  -> {sc.title} ({sc.size(stage)})", flush=True)
                for ep in sc.endpoints:
                    if stage == 0:
                        results.append(shapes.ShapeResult(sc, ep))
                    res = results[k]
                    k += 1
                    res.measures.append(self.measure_shape(plaza, world, sc, ep, stage, workdir, all_runs))
        seeding = ["| phase | records | seconds | records/s |", "|---|---:|---:|---:|"]
        for ph in world.phases():
            seeding.append(f"| {ph.name} | {ph.count:,} | {ph.seconds:.1f} | {ph.rate:,.0f} |")
        total = sum(ph.seconds for ph in world.phases())
        seeding.append(f"| **total** | {sum(ph.count for ph in world.phases()):,} | **{total:.1f}** | |")
        sections += report.shapes_section(results, sizes.describe(), seeding)

    def measure_shape(self, plaza: servers.Plaza, world: shapes.ShapeWorld, sc: shapes.ShapeScenario,
                      ep: shapes.Endpoint, stage: int, workdir: Path, all_runs: list) -> shapes.ShapeMeasure:
        """Preflight, then --rounds runs of one request at one size; keeps the best by requests/s."""
        m = shapes.ShapeMeasure(stage, sc.size(stage))
        side = world.side(ep, workdir, f"{sc.key}_{ep.key}", self.args.threads)
        m.label = side.label
        scenarios.preflight(plaza.base, side)
        m.checked = side.checked
        if side.unavailable:
            m.note, m.checked = "n/a", side.unavailable[:160].replace("|", "/")
            print(f"    {ep.label}: {side.unavailable}", flush=True)
            return m
        for _ in range(self.args.rounds):
            r = self.run_side(plaza, side, self.args.connections)
            all_runs.append(r)
            m.result = r if m.result is None or r.rps > m.result.rps else m.result
        b = m.result
        cpu = shapes.cpu_per_request_ms(b) or 0.0
        print(f"    {ep.label:<44} {b.rps:>8,.0f} req/s  p50 {b.p50_ms:7.2f} ms  p99 {b.p99_ms:8.2f} ms  "
              f"errors {b.errors:,}  server CPU {cpu:.2f} ms/request", flush=True)
        return m

    # ---- report bits --------------------------------------------------------------------------
    def meta(self, ds: Dataset | None, pb_bin: Path | None, growth: bool = False) -> dict[str, str]:
        a = self.args
        sizes = (f"{a.users:,} users, posts at {a.growth_sizes}, {a.follows} follows per user" if growth else
                 f"{a.users:,} users, {a.posts:,} posts, {a.follows} follows per user ({a.users * min(a.follows, a.users - 1):,}), "
                 f"{a.comments:,} comments")
        pb_version = f"{servers.version_of([str(pb_bin), '--version'])}; " if pb_bin else ""
        out = {
            "Versions": (f"{self.plaza_version} ({servers.version_of(['swift', '--version'])}); {pb_version}"
                         f"{servers.version_of(['wrk', '-v'])}; Python {sys.version.split()[0]}"),
        }
        if ds is not None:
            out["Dataset"] = f"{sizes}; seed {a.seed}; search word '{ds.search_word}' (Zipf rank {ds.search_rank})"
        if growth and a.growth_shapes:
            out["Graph shapes"] = shapes.ShapeSizes.scaled(a.shape_scale).describe() + f"; seed {a.seed}"
        out["bcrypt cost"] = self.bcrypt_note or "–"
        return out

    def settings_lines(self) -> list[str]:
        a = self.args
        pin = "server on core 0, wrk on core 1 (taskset)" if a.pin else "not pinned (servers and wrk share both cores)"
        logins = "" if a.growth or a.growth_shapes else f" ({a.login_connections} for login)"
        lines = [
            f"- wrk: {a.threads} threads, {a.connections} connections{logins}, keep-alive, "
            f"{a.duration:g} s per run after {a.warmup:g} s of warm-up, timeout {a.timeout:g} s; {pin}",
        ]
        if a.growth or not a.growth_shapes:
            lines.append(
                f"- Runs: {a.rounds} per system and scenario, alternating Plaza, PocketBase, Plaza, PocketBase; "
                + ("tables show the better run by requests/s (its p50/p99)" if a.growth else
                   "tables show the better run by requests/s (its p50/p99), errors summed over all runs, the highest RSS of any run"))
        if a.growth_shapes:
            lines.append(f"- Graph shapes: {a.rounds} run{'s' if a.rounds != 1 else ''} per request and size, one after the "
                         "other; tables show the better run by requests/s (its p50/p99, errors and server CPU)")
        if a.growth or not a.growth_shapes:
            lines.append(f"- Servers: Plaza `serve --rate-limits off` (SQLite, default settings); PocketBase `serve` with request "
                         f"logs {'on (its default)' if a.pb_request_logs else 'off (logs.maxDays = 0)'}; both fresh, on 127.0.0.1")
            if a.postgres and not a.growth:
                lines.append(f"- Plaza on PostgreSQL: a third server, `serve --rate-limits off --database-url …` on "
                             f"{self.postgres_version()} (default settings but for `max_connections`; its CPU row counts PostgreSQL's processes as the server's), loaded the same way and then `ANALYZE`d, "
                             "one run after each PocketBase run")
        else:
            lines.append("- Server: Plaza `serve --rate-limits off` (SQLite, default settings), fresh, on 127.0.0.1")
        return lines

    def postgres_version(self) -> str:
        out = subprocess.run(["psql", self.args.postgres, "-Atc", "SHOW server_version"], capture_output=True,
                             text=True, timeout=30)
        return f"PostgreSQL {out.stdout.strip()}" if out.returncode == 0 else "PostgreSQL"

    def method_notes(self) -> list[str]:
        return ["## How to read this", "",
                "requests/s is what the server completed with the given connections; p50/p99 are wrk's latency "
                "percentiles; errors are socket errors, timeouts and non-2xx answers; peak RSS is the highest VmRSS "
                "sampled every 100 ms during the measured runs. See bench/README.md for what each scenario sends.", ""]


def _mirror(seeded):
    from benchlib.seed import Seeded
    return Seeded("PocketBase", tokens=list(seeded.tokens), user_ids=list(seeded.user_ids), post_ids=list(seeded.post_ids))


def main(argv=None) -> int:
    args = parse_args(argv)
    bench = Bench(args)

    def on_term(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGHUP, on_term)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even when started with SIGINT ignored
    failed = True
    try:
        text = (bench.push_cost() if args.push else bench.day() if args.day
                else bench.growth() if args.growth or args.growth_shapes else bench.compare())
        failed = False
    except KeyboardInterrupt:
        print("\ninterrupted; stopping the servers", file=sys.stderr)
        return 130
    finally:
        bench.close(failed=failed)
    # --growth (with or without the shapes) -> -growth; the shapes alone -> -shapes
    kind = "-push" if args.push else "-day" if args.day else "-growth" if args.growth else "-shapes" if args.growth_shapes else ""
    stamp = dt.datetime.now().strftime("%Y-%m-%d-%H%M")
    out = args.out or RESULTS / f"{stamp}{kind}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n")
    latest = RESULTS / f"latest{kind}.md"
    if args.out is None:
        latest.write_text(text + "\n")
    print("\n" + text)
    print(f"\nwritten: {out}" + (f" and {latest}" if args.out is None else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
