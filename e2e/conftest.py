"""End-to-end fixtures: the real `plaza` binary, started as a process on a loopback port.

PLAZA_BIN names the binary (default .build/debug/plaza); scripts/e2e.sh sets it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parent.parent
BINARY = Path(os.environ.get("PLAZA_BIN", ROOT / ".build" / "debug" / "plaza")).resolve()
START_TIMEOUT = 30  # seconds until /healthz answers (a debug build migrates a fresh database first)
STOP_TIMEOUT = 10  # seconds for a graceful shutdown after SIGTERM


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def plaza_env() -> dict[str, str]:
    """The environment for the binary: ours without any PLAZA_* setting, plus a cheap bcrypt."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLAZA_")}
    env["PLAZA_BCRYPT_COST"] = "10"
    # Link previews stay on loopback: no test fetches from, or looks up, another host.
    env["PLAZA_LINK_PREVIEW_PUBLIC"] = "off"
    env["PLAZA_LINK_PREVIEW_ALLOW"] = "127.0.0.0/8"
    return env


def describe(response: requests.Response) -> str:
    """The request and the response, for assertion messages."""
    request = response.request
    body = request.body.decode() if isinstance(request.body, bytes) else request.body
    return f"{request.method} {request.url} {body or ''}\n-> {response.status_code} {response.text[:2000]}"


def expect(response: requests.Response, status: int) -> dict | list | None:
    """Asserts the status code and returns the JSON body (None for an empty one)."""
    assert response.status_code == status, f"expected {status}\n{describe(response)}"
    if not response.content:
        return None
    assert response.headers.get("Content-Type", "").startswith("application/json"), describe(response)
    return response.json()


def expect_error(response: requests.Response, status: int, code: str | None = None) -> dict:
    """Asserts an error response in the API's shape and returns its `error` object."""
    body = expect(response, status)
    assert isinstance(body, dict) and isinstance(body.get("error"), dict), describe(response)
    error = body["error"]
    assert isinstance(error.get("code"), str) and isinstance(error.get("message"), str), describe(response)
    if code is not None:
        assert error["code"] == code, describe(response)
    return error


class Client:
    """A requests session against one server, optionally signed in with a bearer token."""

    def __init__(self, server: "PlazaServer", token: str | None = None):
        self.server = server
        self.session = requests.Session()
        self.token = token

    def request(self, method: str, path: str, **kwargs) -> requests.Response:
        headers = kwargs.pop("headers", {})
        if self.token:
            headers.setdefault("Authorization", f"Bearer {self.token}")
        # `json=` makes requests send Content-Type: application/json, which the server requires.
        return self.session.request(method, self.server.url + path, headers=headers, timeout=30, **kwargs)

    def get(self, path, **kw): return self.request("GET", path, **kw)
    def post(self, path, **kw): return self.request("POST", path, **kw)
    def put(self, path, **kw): return self.request("PUT", path, **kw)
    def patch(self, path, **kw): return self.request("PATCH", path, **kw)
    def delete(self, path, **kw): return self.request("DELETE", path, **kw)


class PlazaServer:
    """`plaza serve` on a temp data dir; can be stopped and started again on the same data."""

    def __init__(self, data_dir: Path, log_path: Path, env: dict[str, str] | None = None):
        self.data_dir = data_dir
        self.log_path = log_path
        self.env = env or {}
        self.process: subprocess.Popen | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        assert self.process is None, "already running"
        self.port = free_port()
        log = open(self.log_path, "a")
        log.write(f"\n--- plaza serve on port {self.port}\n")
        log.flush()
        self.process = subprocess.Popen(
            [str(BINARY), "serve", "--host", "127.0.0.1", "--port", str(self.port), "--data-dir", str(self.data_dir)],
            env={**plaza_env(), **self.env}, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )
        log.close()
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.process.poll() is not None:
                raise AssertionError(f"plaza serve exited with {self.process.returncode}\n{self.log()}")
            try:
                if requests.get(self.url + "/healthz", timeout=2).status_code == 200:
                    return
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                self.kill()
                raise AssertionError(f"/healthz did not answer 200 within {START_TIMEOUT} s\n{self.log()}")
            time.sleep(0.1)

    def stop(self) -> None:
        """SIGTERM, then asserts a graceful exit: status 0 within STOP_TIMEOUT seconds."""
        assert self.process is not None, "not running"
        process, self.process = self.process, None
        process.send_signal(signal.SIGTERM)
        try:
            status = process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise AssertionError(f"plaza serve did not stop within {STOP_TIMEOUT} s of SIGTERM\n{self.log()}")
        assert status == 0, f"plaza serve exited with {status} after SIGTERM\n{self.log()}"

    def restart(self) -> None:
        self.stop()
        self.start()

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:] if self.log_path.exists() else ""

    def client(self, token: str | None = None) -> Client:
        return Client(self, token)

    def register(self, username: str, password: str = "correct horse battery") -> tuple[dict, Client]:
        """Registers an account; returns its user object and a client signed in as it."""
        body = expect(
            self.client().post("/api/v1/auth/register",
                               json={"username": username, "email": f"{username}@example.com", "password": password}),
            201,
        )
        assert body["user"]["username"] == username and body["token"], json.dumps(body)
        return body["user"], self.client(body["token"])


def run_plaza(*args: str, data_dir: Path, input: str | None = None) -> subprocess.CompletedProcess:
    """Runs a one-shot `plaza` command (migrate, user create, seed …) on a data dir."""
    return subprocess.run(
        [str(BINARY), *args, "--data-dir", str(data_dir)],
        env=plaza_env(), capture_output=True, text=True, input=input, timeout=120,
    )


@pytest.fixture(scope="session", autouse=True)
def _binary_exists():
    if not BINARY.is_file() or not os.access(BINARY, os.X_OK):
        pytest.exit(f"no plaza binary at {BINARY}: run `swift build` or set PLAZA_BIN", returncode=1)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir()
    return path


@pytest.fixture
def plaza(data_dir: Path, tmp_path: Path):
    """A running server on a fresh data dir; the test may stop and restart it."""
    server = PlazaServer(data_dir, tmp_path / "plaza.log")
    server.start()
    try:
        yield server
    finally:
        if server.process is not None:
            try:
                server.stop()
            finally:
                server.kill()
