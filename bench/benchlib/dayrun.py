"""Stepping the number of simulated people (benchlib/day.py) up on one server until a page's p99
passes the limit or anything fails, and what each step cost: CPU split, memory, database growth."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import statistics
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import day, servers
from .report import mb, ms, num

CLK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK
    except (OSError, ValueError, IndexError):
        return 0.0


def helpers_cpu(start: dict[int, float], end: dict[int, float]) -> float:
    """CPU seconds the helper processes (PostgreSQL's) used between two marks, each read by pid:
    one started meanwhile counts whole, one that ended meanwhile not at all (its time is gone
    with it). Summing the same pids' totals at both marks went negative when a process that had
    worked a lot (the load's) ended during the step."""
    return sum(max(0.0, cpu - start.get(pid, 0.0)) for pid, cpu in end.items() if cpu > 0)


def machine_busy() -> float:
    with open("/proc/stat") as f:
        parts = [int(x) for x in f.readline().split()[1:]]
    idle = parts[3] + parts[4]
    return (sum(parts[:8]) - idle) / CLK


@dataclass
class Step:
    people: int
    tally: day.Tally
    seconds: float
    cpu: dict[str, float]  # cores: server, database (PostgreSQL), people (the load), rest
    peak_rss_kb: int
    db_growth_bytes: int
    failures: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures

    def p99(self, page: str) -> float | None:
        values = self.tally.latencies.get(page) or []
        if len(values) < 2:
            return values[0] if values else None
        return statistics.quantiles(values, n=100, method="inclusive")[98]

    def p50(self, page: str) -> float | None:
        values = self.tally.latencies.get(page) or []
        return statistics.median(values) if values else None

    @property
    def pages(self) -> int:
        return sum(len(v) for v in self.tally.latencies.values())


def merge(tallies: list[day.Tally]) -> day.Tally:
    out = day.Tally()
    for t in tallies:
        for page, values in t.latencies.items():
            out.latencies.setdefault(page, []).extend(values)
        for page, n in t.errors.items():
            out.errors[page] = out.errors.get(page, 0) + n
        out.error_samples += t.error_samples[: max(0, 5 - len(out.error_samples))]
        out.requests += t.requests
        out.events += t.events
        out.streams_open += t.streams_open
        out.streams_failed += t.streams_failed
    return out


class Stepper:
    """Runs steps of simulated people against one server."""

    def __init__(self, world: day.World, server: servers.Server, db_size, *, workers: int, ramp: float, measure: float,
                 limit_ms: float, upload_limit_ms: float):
        self.world, self.server, self.db_size = world, server, db_size
        self.workers, self.ramp, self.measure = workers, ramp, measure
        self.limit_ms, self.upload_limit_ms = limit_ms, upload_limit_ms

    def step(self, people: int) -> Step:
        ctx = multiprocessing.get_context("fork")
        start = time.time() + 1.0
        window = (start + self.ramp, start + self.ramp + self.measure)
        pipes, procs = [], []
        for k in range(self.workers):
            mine = list(range(k, people, self.workers))
            recv, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=day.worker, args=(self.world, mine, start, self.ramp, window, send), daemon=True)
            proc.start()
            send.close()
            pipes.append(recv)
            procs.append(proc)
        time.sleep(max(0.0, window[0] - time.time()))
        size0 = self.db_size()
        marks0 = self.cpu_marks(procs)
        with servers.RSSSampler(self.server.pid, interval=0.25) as rss:
            time.sleep(max(0.0, window[1] - time.time()))
            marks1 = self.cpu_marks(procs)
            size1 = self.db_size()
            tallies = [p.recv() for p in pipes]
        for proc in procs:
            proc.join(timeout=60)
        seconds = marks1["wall"] - marks0["wall"]
        cpu = {k: (marks1[k] - marks0[k]) / seconds for k in ("server", "people", "machine")}
        cpu["database"] = helpers_cpu(marks0["database"], marks1["database"]) / seconds
        cpu["rest"] = max(0.0, cpu.pop("machine") - cpu["server"] - cpu["database"] - cpu["people"])
        step = Step(people, merge(tallies), seconds, cpu, rss.peak_kb, size1 - size0)
        self.judge(step)
        return step

    def cpu_marks(self, procs) -> dict:
        return {
            "wall": time.time(),
            "server": cpu_seconds(self.server.pid),
            "database": {p: cpu_seconds(p) for p in self.server.helper_pids()},
            "people": sum(cpu_seconds(p.pid) for p in procs if p.pid),
            "machine": machine_busy(),
        }

    def judge(self, step: Step) -> None:
        t = step.tally
        if t.errors:
            step.failures.append(f"errors: {sum(t.errors.values())} ({'; '.join(t.error_samples[:2])})")
        if t.streams_failed or t.streams_open < step.people:
            step.failures.append(f"streams: {t.streams_open} of {step.people} open, {t.streams_failed} failed")
        for page in day.PAGES:
            p99 = step.p99(page)
            limit = self.upload_limit_ms if page in day.UPLOADS else self.limit_ms
            if p99 is not None and p99 > limit:
                step.failures.append(f"{page} p99 {p99:.0f} ms")

    def find(self, start: int, most: int, refine: int, log) -> tuple[list[Step], int | None]:
        """Doubles the people from `start` until a step fails (or `most`), or halves them until
        one holds when the first fails; then halves the gap between the last pass and the first
        failure `refine` times. Returns every step and the most people a passing step held."""
        steps: list[Step] = []
        good, bad = None, None
        people = min(start, most)
        while True:
            step = self.step(people)
            steps.append(step)
            log(step)
            if step.passed:
                good = people
                if bad is not None or people >= most:
                    break
                people = min(most, people * 2)
            else:
                bad = people
                if good is not None or people <= 10:
                    break
                people //= 2
        for _ in range(refine if bad is not None and good is not None else 0):
            people = (good + bad) // 2
            if bad - good <= max(10, good // 20):
                break
            step = self.step(people)
            steps.append(step)
            log(step)
            if step.passed:
                good = people
            else:
                bad = people
        return steps, good


def step_line(system: str, s: Step) -> str:
    verdict = "ok" if s.passed else "FAIL: " + "; ".join(s.failures)
    worst = max(((s.p99(p) or 0, p) for p in day.PAGES), default=(0, ""))
    return (f"    {system}: {s.people:,} people: {s.tally.requests / s.seconds:,.0f} req/s, {s.pages:,} pages, "
            f"worst p99 {worst[0]:.0f} ms ({worst[1]}), server {s.cpu['server']:.2f} + db {s.cpu['database']:.2f} + "
            f"people {s.cpu['people']:.2f} cores, RSS {s.peak_rss_kb / 1024:.0f} MB: {verdict}")


def dir_size(path: Path):
    """The data in a directory: each SQLite database's pages as its connections see them (its WAL
    included: a WAL file is reused, so its size says nothing) and every other file's size."""
    def size() -> int:
        total = 0
        for f in path.rglob("*"):
            if not f.is_file() or f.name.endswith(("-wal", "-shm", "-journal")):
                continue
            try:
                with open(f, "rb") as handle:
                    is_sqlite = handle.read(16) == b"SQLite format 3\x00"
                total += sqlite_bytes(f) if is_sqlite else f.stat().st_size
            except (OSError, sqlite3.Error):
                continue
        return total
    return size


def sqlite_bytes(path: Path) -> int:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        (pages,) = con.execute("PRAGMA page_count").fetchone()
        (page_size,) = con.execute("PRAGMA page_size").fetchone()
        (free,) = con.execute("PRAGMA freelist_count").fetchone()
        return (pages - free) * page_size
    finally:
        con.close()


def postgres_size(url: str):
    def size() -> int:
        out = subprocess.run(["psql", url, "-Atc", "SELECT pg_database_size(current_database())"], capture_output=True,
                             text=True, timeout=60)
        return int(out.stdout.strip() or 0)
    return size


def system_section(name: str, steps: list[Step], held: int | None, most: int, person_day_minutes: float) -> list[str]:
    lines = [f"### {name}", ""]
    if held is None:
        lines += [f"Not even the first step held: {steps[0].failures if steps else 'no step ran'}.", ""]
    elif held >= most and steps[-1].passed:
        lines += [f"**At least {held:,} people** (every person of the dataset: the run stopped there, not the server).", ""]
    else:
        lines += [f"**{held:,} people** held with every page's p99 under the limit and no error.", ""]
    lines += ["| people | requests/s | pages | events/s | worst page p99 | server CPU | database CPU | people's CPU | rest | "
              "peak RSS | DB growth | result |",
              "|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|"]
    for s in steps:
        worst = max(((s.p99(p) or 0, p) for p in day.PAGES), default=(0, ""))
        lines.append(
            f"| {s.people:,} | {num(s.tally.requests / s.seconds)} | {s.pages:,} | {num(s.tally.events / s.seconds)} | "
            f"{ms(worst[0])} ({worst[1].replace('_', ' ')}) | {s.cpu['server']:.2f} | {s.cpu['database']:.2f} | "
            f"{s.cpu['people']:.2f} | {s.cpu['rest']:.2f} | {mb(s.peak_rss_kb)} | {s.db_growth_bytes / 1e6:.2f} MB | "
            f"{'held' if s.passed else '; '.join(s.failures)} |")
    lines.append("")
    best = next((s for s in reversed(steps) if s.passed and s.people == held), None)
    if best is not None:
        lines += [f"Pages at {best.people:,} people (p50 / p99, count):", "",
                  "| page | p50 | p99 | pages |", "|---|---:|---:|---:|"]
        for page in day.PAGES:
            values = best.tally.latencies.get(page) or []
            lines.append(f"| {page.replace('_', ' ')} | {ms(best.p50(page))} | {ms(best.p99(page))} | {len(values):,} |")
        lines.append("")
        per_person_hour = best.db_growth_bytes / best.seconds * 3600 / best.people
        lines += [f"Database growth: {per_person_hour / 1e3:,.1f} kB per person-hour of use; a day in which each of "
                  f"{held:,} people uses the app for {person_day_minutes:g} minutes adds "
                  f"{per_person_hour * held * person_day_minutes / 60 / 1e6:,.1f} MB.", ""]
    return lines


def settings_lines(a) -> list[str]:
    mix = ", ".join(f"{name.replace('_', ' ')} {share:g} %" for name, share in day.ACTIONS)
    return [
        f"- People: each opens the app (home feed page 1 and notifications, together), then does a mean of "
        f"{a.session_actions:g} actions, each after a think time drawn from an exponential distribution with a mean of "
        f"{a.think:g} s, pauses as long again and opens the app anew; a realtime stream stays open throughout.",
        f"- Actions: {mix}; one post in {round(1 / day.PHOTO_SHARE)} has a photo (1600 × 1200 JPEG).",
        f"- Steps: {a.day_start:,} people, doubled until a step fails, then {a.day_refine} steps halving the gap; each step "
        f"starts its people over {a.day_ramp:g} s and measures {a.day_measure:g} s once all have arrived. A step holds "
        f"when every page's p99 is under {a.day_limit_ms:g} ms (a photo post's, which sends and processes the photo "
        f"first, under {a.day_upload_limit_ms:g} ms), nothing failed and every stream stayed open.",
        f"- The people run in {a.day_workers} Python processes (asyncio, aiohttp) on the same 2 cores as the server: "
        "their CPU is in each step's row, and the latencies include their own delays.",
        "- Servers: Plaza `serve --rate-limits off` (SQLite, default settings, `PLAZA_STREAMS_MAX` above the people); "
        "PocketBase `serve` with request logs off; Plaza on PostgreSQL with PostgreSQL's default durability, `ANALYZE`d "
        "after loading. One system at a time, alone on the machine.",
    ]


def summary(held: dict[str, int | None], names: dict[str, str], a) -> list[str]:
    lines = ["## People per box", "",
             f"The most people using the apps at once with every page's p99 under {a.day_limit_ms:g} ms (photo posts "
             f"{a.day_upload_limit_ms:g} ms) and no errors:", "",
             "| system | people |", "|---|---:|"]
    for system, n in held.items():
        shown = "–" if n is None else (f"≥ {n:,}" if n >= a.day_users else f"{n:,}")
        lines.append(f"| {names[system]} | {shown} |")
    if held.get("plaza") and held.get("pocketbase"):
        lines += ["", f"Plaza on SQLite holds {held['plaza'] / held['pocketbase']:.2f}× PocketBase's people."]
    return lines + ["", "## Each system", ""]
