"""The Markdown report."""

from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
from dataclasses import dataclass, field

from .scenarios import Scenario, Side
from .servers import rss_text
from .shapes import FACTOR, GROWTH_LIMIT, ShapeResult, cpu_per_request_ms
from .seed import Seeded
from .wrk import RunResult

READ_TARGET, WRITE_TARGET = 3.0, 2.0


@dataclass
class SideResult:
    side: Side
    runs: list[RunResult] = field(default_factory=list)

    @property
    def best(self) -> RunResult | None:
        return max(self.runs, key=lambda r: r.rps) if self.runs else None

    @property
    def errors(self) -> int:
        return sum(r.errors for r in self.runs)

    @property
    def peak_rss_kb(self) -> int:
        return max((r.peak_rss_kb for r in self.runs), default=0)

    @property
    def peak_mem(self) -> dict:
        return max(self.runs, key=lambda r: r.peak_rss_kb).peak_mem if self.runs else {}


@dataclass
class ScenarioResult:
    scenario: Scenario
    plaza: SideResult
    pocketbase: SideResult
    extras: list[tuple[str, SideResult]] = field(default_factory=list)
    postgres: SideResult | None = None  # Plaza on PostgreSQL (--postgres)


def machine() -> dict[str, str]:
    cpu = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    distro = ""
    try:
        for line in open("/etc/os-release"):
            if line.startswith("PRETTY_NAME="):
                distro = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return {"cpu": cpu, "cores": str(os.cpu_count()), "memory": mem, "os": f"{distro}, Linux {platform.release()}"}


def git_describe(repo) -> str:
    try:
        rev = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--", "Sources", "Package.swift"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return rev + (" + uncommitted changes in Sources/" if dirty else "")
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def mb(kb: int | float | None) -> str:
    return "–" if not kb else f"{kb / 1024:.1f} MB"


def ms(v: float | None) -> str:
    if v is None:
        return "–"
    return f"{v:.2f} ms" if v < 10 else f"{v:.1f} ms" if v < 100 else f"{v:,.0f} ms"


def num(v: float | None) -> str:
    return "–" if v is None else f"{v:,.0f}"


def ratio(a: float | None, b: float | None) -> str:
    if not a or not b:
        return "–"
    return f"{a / b:.2f}×"


def _side_cells(sr: SideResult) -> dict[str, str]:
    if sr.side.unavailable:
        return {k: "n/a" for k in ("rps", "each", "p50", "p99", "errors", "rss", "rss_parts", "bytes", "cpu")}
    b = sr.best
    if b is None:
        return {k: "–" for k in ("rps", "each", "p50", "p99", "errors", "rss", "rss_parts", "bytes", "cpu")}
    return {"rps": num(b.rps), "each": " / ".join(num(r.rps) for r in sr.runs), "p50": ms(b.p50_ms),
            "p99": ms(b.p99_ms), "errors": f"{sr.errors:,}" + (f" ({sum(r.non2xx for r in sr.runs):,} non-2xx)" if sr.errors else ""),
            "rss": mb(sr.peak_rss_kb), "rss_parts": rss_text(sr.peak_mem), "bytes": f"{b.avg_bytes:,.0f} B",
            "cpu": f"{b.server_cpu:.2f} / {b.wrk_cpu:.2f} / {b.other_cpu:.2f}"}


def verdict(res: ScenarioResult) -> str:
    p, q = res.plaza, res.pocketbase
    if p.side.unavailable or not p.best or not q.best:
        return "n/a"
    target = READ_TARGET if res.scenario.kind == "read" else WRITE_TARGET
    misses = []
    if p.best.rps < target * q.best.rps:
        misses.append(f"req/s < {target:g}×")
    if p.best.p99_ms >= q.best.p99_ms:
        misses.append("p99 not lower")
    if p.errors or q.errors:
        misses.append("errors")
    if p.peak_rss_kb > q.peak_rss_kb:
        misses.append("RSS higher")
    return "yes" if not misses else "no: " + ", ".join(misses)


def scenario_section(res: ScenarioResult, rounds: int) -> list[str]:
    sc = res.scenario
    p, q = _side_cells(res.plaza), _side_cells(res.pocketbase)
    bp, bq = res.plaza.best, res.pocketbase.best
    avail = not res.plaza.side.unavailable and not res.pocketbase.side.unavailable
    lines = [f"### {sc.title}", "",
             f"{sc.kind}, {sc.connections} connections. Plaza: `{res.plaza.side.label}`. "
             f"PocketBase: `{res.pocketbase.side.label}`.", ""]
    for side, name in ((res.plaza.side, "Plaza"), (res.pocketbase.side, "PocketBase")):
        if side.unavailable:
            lines += [f"**{name}: {side.unavailable}**", ""]
    rows = [("requests/s (best of %d)" % rounds, "rps", ratio(bp.rps, bq.rps) if avail and bp and bq else "–"),
            ("requests/s, each run", "each", ""),
            ("p50 latency", "p50", ratio(bp.p50_ms, bq.p50_ms) if avail and bp and bq else "–"),
            ("p99 latency", "p99", ratio(bp.p99_ms, bq.p99_ms) if avail and bp and bq else "–"),
            ("errors (all runs)", "errors", ""),
            ("peak RSS during runs", "rss_parts", ratio(res.plaza.peak_rss_kb, res.pocketbase.peak_rss_kb) if avail else "–"),
            ("response size (avg, with headers)", "bytes", ""),
            ("CPU cores used: server / wrk / rest of machine", "cpu", "")]
    if res.postgres is None:
        lines += ["| | Plaza | PocketBase | Plaza/PocketBase |", "|---|---:|---:|---:|"]
        lines += [f"| {title} | {p[k]} | {q[k]} | {rt} |" for title, k, rt in rows]
    else:
        g, bg = _side_cells(res.postgres), res.postgres.best
        pg_ratio = ratio(bg.rps, bq.rps) if bg and bq and not res.postgres.side.unavailable else "–"
        lines += ["| | Plaza | PocketBase | Plaza/PocketBase | Plaza on PostgreSQL | PostgreSQL/PocketBase |",
                  "|---|---:|---:|---:|---:|---:|"]
        lines += [f"| {title} | {p[k]} | {q[k]} | {rt} | {g[k]} | {pg_ratio if k == 'rps' else ''} |"
                  for title, k, rt in rows]
    lines.append("")
    checks = [f"{name} {side.checked}" for side, name in ((res.plaza.side, "Plaza"), (res.pocketbase.side, "PocketBase"))
              if side.checked]
    if checks:
        lines += ["Preflight (one request before the runs): " + "; ".join(checks) + ".", ""]
    if res.extras:
        lines += ["Extra (informational, one run):", "", "| variant | requests/s | p50 | p99 | errors | peak RSS |",
                  "|---|---:|---:|---:|---:|---:|"]
        for label, sr in res.extras:
            c = _side_cells(sr)
            lines.append(f"| {label}: `{sr.side.label}` | {c['rps']} | {c['p50']} | {c['p99']} | {c['errors']} | {c['rss']} |")
        lines.append("")
    for note in sc.notes:
        lines += [f"- {note}"]
    if sc.notes:
        lines.append("")
    return lines


def seeding_section(seeded: list[Seeded], idle: dict[str, dict]) -> list[str]:
    lines = ["## Seeding", "", "| system | phase | records | seconds | records/s |", "|---|---|---:|---:|---:|"]
    for s in seeded:
        for ph in s.phases:
            lines.append(f"| {s.system} | {ph.name} | {ph.count:,} | {ph.seconds:.1f} | {ph.rate:,.0f} |")
        lines.append(f"| **{s.system}** | **total** | | **{s.seconds:.1f}** | |")
    lines += ["", "Idle RSS after seeding (3 s after the last write): "
              + ", ".join(f"{k} {rss_text(v)}" for k, v in idle.items()), "",
              "RSS counts anonymous memory (heap, stacks) and resident pages of mapped files (the binary's own "
              "code, and a SQLite database file if it is memory-mapped, once per connection that maps it); "
              "both count against the RSS target.", ""]
    return lines


def header(title: str, meta: dict[str, str], settings_lines: list[str]) -> list[str]:
    m = machine()
    lines = [f"# {title}", "",
             f"- Date: {dt.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}",
             f"- Machine: {m['cpu']}, {m['cores']} cores, {m['memory']}; {m['os']}"]
    lines += [f"- {k}: {v}" for k, v in meta.items()]
    lines += settings_lines
    lines.append("")
    return lines


OTHER_CPU_WARN = 0.15  # cores used by other processes during a run before the report warns


def busy_warning(runs: list[RunResult]) -> list[str]:
    worst = max((r.other_cpu for r in runs), default=0.0)
    retried = sum(1 for r in runs if r.extra.get("attempts", 1) > 1)
    again = f" ({retried} runs were repeated because the machine was busy)" if retried else ""
    if worst <= OTHER_CPU_WARN:
        return [f"Other processes used at most {worst:.2f} cores during any measured run{again}.", ""]
    n = sum(1 for r in runs if r.other_cpu > OTHER_CPU_WARN)
    return [f"**Warning: the machine was busy: other processes used up to {worst:.2f} cores during {n} of "
            f"{len(runs)} measured runs even after retries{again}; those numbers are skewed (see the CPU rows).**", ""]


def summary_table(results: list[ScenarioResult]) -> list[str]:
    lines = ["## Summary", "",
             f"Targets (issue 3): reads ≥ {READ_TARGET:g}× PocketBase's requests/s, writes ≥ {WRITE_TARGET:g}×, "
             "p99 lower, zero errors, peak RSS no higher.", "",
             "| scenario | kind | Plaza req/s | PocketBase req/s | ratio | Plaza p99 | PocketBase p99 | Plaza peak RSS | PocketBase peak RSS | target met |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in results:
        p, q = _side_cells(r.plaza), _side_cells(r.pocketbase)
        bp, bq = r.plaza.best, r.pocketbase.best
        rt = ratio(bp.rps, bq.rps) if bp and bq and not r.plaza.side.unavailable else "–"
        lines.append(f"| {r.scenario.title} | {r.scenario.kind} | {p['rps']} | {q['rps']} | {rt} | {p['p99']} | {q['p99']} "
                     f"| {p['rss']} | {q['rss']} | {verdict(r)} |")
    lines.append("")
    with_pg = [r for r in results if r.postgres is not None]
    if with_pg:
        lines += ["Plaza on PostgreSQL (one app server; PostgreSQL's default durability, `synchronous_commit = on`), "
                  "the same requests on the same data:", "",
                  "| scenario | kind | Plaza on PostgreSQL req/s | ratio to PocketBase | ratio to Plaza on SQLite | p99 | errors |",
                  "|---|---|---:|---:|---:|---:|---:|"]
        for r in with_pg:
            g, bg = _side_cells(r.postgres), r.postgres.best
            bp, bq = r.plaza.best, r.pocketbase.best
            ok = bg is not None and not r.postgres.side.unavailable
            lines.append(f"| {r.scenario.title} | {r.scenario.kind} | {g['rps']} | {ratio(bg.rps, bq.rps) if ok and bq else '–'} "
                         f"| {ratio(bg.rps, bp.rps) if ok and bp else '–'} | {g['p99']} | {g['errors']} |")
        lines.append("")
    return lines


@dataclass
class GrowthPoint:
    posts: int
    scenario: str
    system: str
    result: RunResult | None
    note: str = ""


def growth_section(points: list[GrowthPoint], titles: dict[str, str], pb_note: str, seeding: list[str]) -> list[str]:
    lines = ["## Cost growth", ""]
    if pb_note:
        lines += [pb_note, ""]
    sizes = sorted({p.posts for p in points})
    for key, title in titles.items():
        lines += [f"### {title}", "", "| posts | Plaza req/s | Plaza p50 | Plaza p99 | PocketBase req/s | PocketBase p50 | PocketBase p99 |",
                  "|---:|---:|---:|---:|---:|---:|---:|"]
        for n in sizes:
            cells = []
            for system in ("Plaza", "PocketBase"):
                pt = next((p for p in points if p.posts == n and p.scenario == key and p.system == system), None)
                if pt is None or pt.result is None:
                    cells += [pt.note if pt and pt.note else "–", "–", "–"]
                else:
                    cells += [num(pt.result.rps), ms(pt.result.p50_ms), ms(pt.result.p99_ms)]
            lines.append(f"| {n:,} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["### Loading", ""] + seeding + [""]
    return lines


def shapes_section(results: list[ShapeResult], sizes_note: str, seeding: list[str]) -> list[str]:
    """Graph-shape growth: per scenario, each request at the small and the large size."""
    lines = ["## Graph shapes", "",
             f"Plaza only. Each scenario is loaded at its small size and measured, then grown to {FACTOR} × and "
             f"measured again; a request's page p99 may grow by at most {GROWTH_LIMIT - 1:.0%} "
             f"(p99 large/small ≤ {GROWTH_LIMIT:g}). Sizes: {sizes_note}.", ""]
    grew = [r for r in results if r.grew]
    compared = [r for r in results if r.growth is not None]
    lines += ["| scenario | request | p99 small | p99 large | p99 large/small | server CPU/request large/small |",
              "|---|---|---:|---:|---:|---:|"]
    for i, r in enumerate(results):
        title = r.scenario.title if i == 0 or results[i - 1].scenario is not r.scenario else ""
        cpu = f"{r.cpu_growth:.2f}×" if r.cpu_growth else "–"
        lines.append(f"| {title} | {r.endpoint.label} | {ms(r.p99(0))} | {ms(r.p99(1))} | {_growth_cell(r)} | {cpu} |")
    lines += ["", (f"**{len(grew)} of {len(compared)} requests grew more than {GROWTH_LIMIT - 1:.0%}: "
                   + ", ".join(f"{r.scenario.title.split(' ', 1)[1]}: {r.endpoint.label} ({r.growth:.2f}×)" for r in grew)
                   + ".**") if grew else
              f"No request's p99 grew more than {GROWTH_LIMIT - 1:.0%} ({len(compared)} compared).", "",
              "Server CPU/request is the CPU time Plaza used during the run divided by the requests it served. It "
              "depends much less than p99 on what else the machine runs, so it helps tell a page that costs more at "
              "the large size from a p99 that a busy machine moved (on a busy machine, trust neither much).", ""]
    scenarios: list = []
    for r in results:
        if r.scenario not in scenarios:
            scenarios.append(r.scenario)
    for sc in scenarios:
        lines += [f"### {sc.title}", "", sc.loads, "",
                  "| request | size | first request | req/s | p50 | p99 | errors | server CPU/request | p99 large/small |",
                  "|---|---|---|---:|---:|---:|---:|---:|---|"]
        sent = []
        for r in (r for r in results if r.scenario is sc):
            for m in sorted(r.measures, key=lambda m: m.stage):
                first = m.stage == 0
                if m.result is None:
                    cells = [m.note or "–", "–", "–", "–", "–"]
                else:
                    cpu = cpu_per_request_ms(m.result)
                    cells = [num(m.result.rps), ms(m.result.p50_ms), ms(m.result.p99_ms), f"{m.result.errors:,}",
                             f"{cpu:.2f} ms" if cpu else "–"]
                lines.append(f"| {r.endpoint.label if first else ''} | {m.size} | {m.checked or '–'} | "
                             + " | ".join(cells) + f" | {'' if first else _growth_cell(r)} |")
            if r.measures:
                sent.append(f"`{r.measures[-1].label}`")
        lines += ["", "Sent, signed in as the scenario's reader: " + "; ".join(sent) + ".", ""]
    lines += ["### Loading (graph shapes)", "", "Through Plaza's public API, one HTTP request per record.", ""] + seeding + [""]
    return lines


def _growth_cell(r: ShapeResult) -> str:
    g = r.growth
    if g is None:
        return "–"
    return f"**{g:.2f}×: grew more than {GROWTH_LIMIT - 1:.0%}**" if g > GROWTH_LIMIT else f"{g:.2f}×"
