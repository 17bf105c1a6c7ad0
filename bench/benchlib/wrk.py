"""Running wrk with one of the Lua scripts in bench/lua and reading its JSON summary."""

from __future__ import annotations

import json
import math
import os
import resource
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from .servers import BENCH_DIR, HOST, RSSSampler

LUA_DIR = BENCH_DIR / "lua"


@dataclass
class WrkSettings:
    threads: int = 2
    connections: int = 32
    duration: float = 15.0
    warmup: float = 3.0
    timeout: float = 10.0  # a request slower than this counts as an error (wrk's default is 2 s)
    cpus: str | None = None  # e.g. "1": run wrk pinned there with taskset


@dataclass
class RunResult:
    requests: int
    duration_s: float
    rps: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float
    socket_errors: int
    non2xx: int
    peak_rss_kb: int
    max_sent: int
    bytes: int = 0
    peak_mem: dict = field(default_factory=dict)  # /proc status fields at the RSS peak
    server_cpu: float = 0.0  # cores the server used on average during the run
    wrk_cpu: float = 0.0  # cores wrk used
    other_cpu: float = 0.0  # cores everything else on the machine used (a busy machine skews results)
    extra: dict = field(default_factory=dict)

    @property
    def errors(self) -> int:
        return self.socket_errors + self.non2xx

    @property
    def avg_bytes(self) -> float:
        return self.bytes / self.requests if self.requests else 0.0


_TICK = os.sysconf("SC_CLK_TCK")


def _machine_busy_s() -> float:
    """CPU seconds all cores spent busy since boot (/proc/stat)."""
    with open("/proc/stat") as f:
        parts = f.readline().split()[1:]
    v = [int(x) for x in parts[:8]]
    return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / _TICK  # user nice system irq softirq steal


def _proc_cpu_s(pid: int | None) -> float:
    if not pid:
        return 0.0
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime
    except (OSError, IndexError, ValueError):
        return 0.0


def _rusage_s(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def run(base_url: str, script: str, script_args: list[str], settings: WrkSettings, *, connections: int,
        duration: float, pid: int | None = None, helpers: list[int] = ()) -> RunResult:
    """One wrk run; samples the server's RSS (pid) every 100 ms meanwhile. The CPU of `helpers`
    (the processes of a database server it uses) counts as the server's."""
    threads = min(settings.threads, connections)
    # wrk takes whole seconds only
    cmd = ["wrk", "-t", str(threads), "-c", str(connections), "-d", f"{max(1, math.ceil(duration))}s",
           "--timeout", f"{max(1, math.ceil(settings.timeout))}s", "--latency", "-s", str(LUA_DIR / script), base_url,
           "--", *script_args]
    if settings.cpus is not None:
        cmd = ["taskset", "-c", settings.cpus, *cmd]
    assert base_url.startswith(f"http://{HOST}:"), "wrk only ever targets loopback"
    sampler = RSSSampler(pid) if pid else None
    if sampler:
        sampler.__enter__()
    def server_cpu_s() -> float:
        return _proc_cpu_s(pid) + sum(_proc_cpu_s(h) for h in helpers)

    busy0, server0 = _machine_busy_s(), server_cpu_s()
    wrk0, self0 = _rusage_s(resource.RUSAGE_CHILDREN), _rusage_s(resource.RUSAGE_SELF)
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=duration + 120,
                             stdin=subprocess.DEVNULL)
    finally:
        if sampler:
            sampler.__exit__(None, None, None)
    busy = _machine_busy_s() - busy0
    server_s = server_cpu_s() - server0
    wrk_s = _rusage_s(resource.RUSAGE_CHILDREN) - wrk0
    self_s = _rusage_s(resource.RUSAGE_SELF) - self0
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("BENCHJSON ")), None)
    if out.returncode != 0 or line is None:
        raise RuntimeError(f"wrk failed ({out.returncode}): {' '.join(cmd)}\n{out.stdout}\n{out.stderr}")
    d = json.loads(line[len("BENCHJSON "):])
    secs = d["duration_us"] / 1e6
    return RunResult(
        requests=d["requests"], duration_s=secs, rps=d["requests"] / secs if secs else 0.0,
        p50_ms=d["p50_us"] / 1000, p90_ms=d["p90_us"] / 1000, p99_ms=d["p99_us"] / 1000,
        max_ms=d["max_us"] / 1000,
        socket_errors=d["connect"] + d["read"] + d["write"] + d["timeout"], non2xx=d["status"],
        peak_rss_kb=sampler.peak_kb if sampler else 0, max_sent=d["max_sent"], bytes=d["bytes"],
        peak_mem=dict(sampler.at_peak) if sampler else {},
        server_cpu=server_s / secs if secs and pid else 0.0, wrk_cpu=wrk_s / secs if secs else 0.0,
        other_cpu=max(0.0, busy - server_s - wrk_s - self_s) / secs if secs and pid else 0.0,
        extra={"threads": threads})


def rotate_args(requests_file: Path, threads: int) -> list[str]:
    return [str(requests_file), str(threads)]


def write_requests(path: Path, lines: list[tuple[str, str, str, str]]) -> Path:
    """Writes a rotate.lua request file: METHOD \\t PATH \\t AUTH \\t BODY per line."""
    with open(path, "w") as f:
        for method, p, auth, body in lines:
            assert "\t" not in p + auth + body and "\n" not in p + auth + body
            f.write(f"{method}\t{p}\t{auth}\t{body}\n")
    return path
