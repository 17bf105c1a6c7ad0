"""End-to-end fixtures: the real `plaza` binary, started as a process on a loopback port.

PLAZA_BIN names the binary (default .build/debug/plaza); scripts/e2e.sh sets it.
Browser tests use `browser_factory` (headless Chromium through selenium; helpers in web.py):
CHROMIUM_BIN and CHROMEDRIVER name the browser and its driver, PLAZA_SCREENSHOTS the folder for
screenshots and for what a failed browser test leaves behind.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import threading
import time
import zlib
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
    # Pushes likewise: only to loopback push services, no name looked up.
    env["PLAZA_PUSH_PUBLIC"] = "off"
    # Maps draw their markers without tiles: the browser fetches nothing from a tile server.
    env["PLAZA_MAP_TILES"] = "off"
    return env


def describe(response: requests.Response) -> str:
    """The request and the response, for assertion messages."""
    request = response.request
    body = request.body.decode(errors="replace") if isinstance(request.body, bytes) else request.body
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

    def __init__(self, data_dir: Path, log_path: Path, env: dict[str, str] | None = None, port: int = 0):
        """`port`: the one to listen on at every start, for settings that must name the
        server's own address (PLAZA_PUBLIC_URL; see url_for); 0 picks a free one at each start."""
        self.data_dir = data_dir
        self.log_path = log_path
        self.env = env or {}
        self.process: subprocess.Popen | None = None
        self.fixed_port = port
        self.port = port

    @staticmethod
    def url_for(port: int) -> str:
        return f"http://127.0.0.1:{port}"

    @property
    def url(self) -> str:
        return self.url_for(self.port)

    def start(self) -> None:
        assert self.process is None, "already running"
        self.port = self.fixed_port or free_port()
        log = open(self.log_path, "a")
        log.write(f"\n--- plaza serve on port {self.port}\n")
        log.flush()
        self.process = subprocess.Popen(
            self.command("serve", "--host", "127.0.0.1", "--port", str(self.port), "--data-dir", str(self.data_dir)),
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

    def command(self, *args: str) -> list[str]:
        """How `plaza <args>` is started."""
        return [str(BINARY), *args]

    def terminate(self, process: subprocess.Popen) -> None:
        """Asks the server to stop gracefully."""
        process.send_signal(signal.SIGTERM)

    def stop(self) -> None:
        """SIGTERM, then asserts a graceful exit: status 0 within STOP_TIMEOUT seconds."""
        assert self.process is not None, "not running"
        process, self.process = self.process, None
        self.terminate(process)
        try:
            status = process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise AssertionError(f"plaza serve did not stop within {STOP_TIMEOUT} s of SIGTERM\n{self.log()}")
        assert status == 0, f"plaza serve exited with {status} after SIGTERM\n{self.log()}"

    @contextlib.contextmanager
    def running(self):
        """Started for the `with` block, then stopped gracefully (asserting so) unless the block
        did; killed if that fails."""
        self.start()
        try:
            yield self
        finally:
            if self.process is not None:
                try:
                    self.stop()
                finally:
                    self.kill()

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


def png(width: int, height: int, colour: tuple[int, int, int] = (200, 60, 90), pixels: bytes | None = None) -> bytes:
    """A PNG (8-bit RGB): a `colour` square with a white diagonal stripe (so it is not one flat
    colour), or, given `pixels`, those compressed rows as they are (a header may claim any size)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    if pixels is None:
        rows = bytearray()
        for y in range(height):
            rows.append(0)
            for x in range(width):
                rows += bytes((255, 255, 255)) if abs(x - y) < 4 else bytes(colour)
        pixels = zlib.compress(bytes(rows))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


class LocalSite:
    """Pages served from 127.0.0.1 in a thread (what link previews may fetch in these tests):
    `{path: (body, content type)}`; any other path is a 404. Use it as a context manager."""

    def __init__(self, pages: dict[str, tuple[bytes, str]]):
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's naming)
                if self.path not in pages:
                    self.send_error(404)
                    return
                body, kind = pages[self.path]
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def __enter__(self) -> "LocalSite":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


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


BROWSERS = pytest.StashKey[list]()  # the test's open browsers (selenium drivers), oldest first


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """When a test with open browsers fails, each browser leaves FAILED-<test>[-<n>].png, .html
    and .log (its console) in the screenshot folder; the report names them."""
    outcome = yield
    report = outcome.get_result()
    drivers = item.stash.get(BROWSERS, [])
    if not (report.failed and report.when in ("setup", "call") and drivers):
        return
    from web import save_failure
    written = []
    for number, driver in enumerate(drivers, start=1):
        name = item.name if number == 1 else f"{item.name}-{number}"
        try:
            written += save_failure(driver, name)
        except Exception as error:  # never hide the test's own failure behind this one
            written.append(f"{name}: could not save ({error!r})")
    report.sections.append(("browser", "\n".join(str(path) for path in written)))


def chromium_binary() -> str | None:
    """CHROMIUM_BIN, else Debian's /usr/bin/chromium, the macOS app, or `chromium` on PATH."""
    if os.environ.get("CHROMIUM_BIN"):
        return os.environ["CHROMIUM_BIN"]
    for path in ("/usr/bin/chromium", "/Applications/Chromium.app/Contents/MacOS/Chromium",
                 os.path.expanduser("~/Applications/Chromium.app/Contents/MacOS/Chromium")):
        if os.access(path, os.X_OK):
            return path
    return shutil.which("chromium")


@pytest.fixture
def browser_factory(request: pytest.FixtureRequest):
    """`new_browser(width=1280, height=900, javascript=True)` opens a headless Chromium whose
    viewport is width × height: its own process and profile (cookies, storage), so two browsers
    are two users; `javascript=False` turns scripts off (for pages that must work without them).
    No implicit waits (use web.wait_for & co.). All are quit when the test ends."""
    from selenium import webdriver
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.chrome.service import Service

    # The driver is named explicitly, so Selenium Manager (which downloads drivers and sends
    # usage statistics) never runs; these make sure of it.
    os.environ["SE_AVOID_STATS"] = "true"
    os.environ["SE_OFFLINE"] = "true"

    binary = chromium_binary()
    driver_path = os.environ.get("CHROMEDRIVER") or shutil.which("chromedriver")
    if not binary or not os.access(binary, os.X_OK) or not driver_path:
        pytest.fail(
            f"browser tests need Chromium and chromedriver (found {binary or 'no chromium'}, "
            f"{driver_path or 'no chromedriver'}): run scripts/install-deps.sh test, or set "
            "CHROMIUM_BIN and CHROMEDRIVER", pytrace=False)
    drivers: list = request.node.stash.setdefault(BROWSERS, [])

    def new_browser(width: int = 1280, height: int = 900, javascript: bool = True):
        from web import set_viewport
        options = webdriver.ChromeOptions()
        options.binary_location = binary
        for argument in ("--headless=new", "--disable-dev-shm-usage", f"--window-size={width},{height}",
                         "--force-device-scale-factor=1", "--hide-scrollbars", "--lang=en-US",
                         "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                         "--disable-background-networking", "--disable-component-update",
                         "--disable-sync", "--password-store=basic", "--use-mock-keychain",
                         # The browser resolves nothing but loopback: no test page can reach another host.
                         "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"):
            options.add_argument(argument)
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            options.add_argument("--no-sandbox")  # Chromium's sandbox refuses to run as root
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        if not javascript:
            options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
        try:
            driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
        except WebDriverException as error:
            pytest.fail(f"could not start {binary} through {driver_path} (is the driver the browser's "
                        f"major version?):\n{error.msg or error}", pytrace=False)
        drivers.append(driver)
        driver.plaza_javascript = javascript  # web.screenshots cannot wait for a frame without scripts
        driver.implicitly_wait(0)
        driver.set_page_load_timeout(30)
        set_viewport(driver, width, height)
        return driver

    yield new_browser
    for driver in reversed(drivers):
        try:
            driver.quit()
        except Exception:
            pass
    drivers.clear()


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir()
    return path


@pytest.fixture
def plaza(data_dir: Path, tmp_path: Path):
    """A running server on a fresh data dir; the test may stop and restart it."""
    with PlazaServer(data_dir, tmp_path / "plaza.log").running() as server:
        yield server
