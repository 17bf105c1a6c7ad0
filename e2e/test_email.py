"""Mail from the real binary to real SMTP servers (scripts/smtp-sink.py, aiosmtpd): the link
that confirms an address and the one that resets a password, through the API and in Chromium.

Each test gets its own sink and its own server, which sends over STARTTLS with AUTH
(PLAZA_SMTP_URL, trusting the sink's certificate through PLAZA_SMTP_CA_FILE) and puts its own
address in the links (PLAZA_PUBLIC_URL). Mail is read as the sink wrote it, parsed with `email`.
"""

from __future__ import annotations

import contextlib
import email
import email.policy
import importlib.util
import json
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from selenium.webdriver.common.by import By

from conftest import ROOT, PlazaServer, describe, expect, expect_error, free_port, run_plaza
from web import click, fill, screenshots, wait_for, wait_gone, wait_text

API = "/api/v1"
SINK = ROOT / "scripts" / "smtp-sink.py"
SINK_START_TIMEOUT = 30  # seconds until the sink prints its ports (it makes a certificate first)
MAIL_TIMEOUT = 30  # seconds for a message to reach the sink (Plaza sends as soon as it queues one)
PAGE_TIMEOUT = 30  # seconds for a page after a form is sent (a debug build, both cores possibly busy)
SENDER = "plaza-e2e@example.com"
ADMIN, ADMIN_PASSWORD = "postmaster", "postmaster-password-1"


@dataclass
class Mail:
    path: Path
    meta: dict  # what the sink saw: {"from", "to", "server", "auth"}
    message: EmailMessage

    @property
    def text(self) -> str:
        part = self.message.get_body(preferencelist=("plain",))
        assert part is not None, f"{self.path} has no text part"
        return part.get_content()

    def link(self, base_url: str, path: str) -> str:
        """The one link in the text part to `base_url` + `path`."""
        links = re.findall(re.escape(base_url + path) + r"\?token=[A-Za-z0-9_-]+", self.text)
        assert len(links) == 1, f"expected one {base_url}{path} link in {self.path}:\n{self.text}"
        return links[0]

    def token(self, base_url: str, path: str) -> str:
        return parse_qs(urlsplit(self.link(base_url, path)).query)["token"][0]


class SmtpSink:
    """scripts/smtp-sink.py on loopback, in a folder of its own."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.mail_dir = folder / "mail"
        self.cert = folder / "cert.pem"
        self.ports: dict[str, int] = {}
        self.process: subprocess.Popen | None = None
        self.taken: set[str] = set()  # messages a test already took with wait_for

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        ports_file, log_path = self.folder / "ports.json", self.folder / "sink.log"
        with open(ports_file, "w") as out, open(log_path, "w") as log:
            self.process = subprocess.Popen([sys.executable, str(SINK), str(self.folder)],
                                            stdout=out, stderr=log, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + SINK_START_TIMEOUT
        while True:
            text = ports_file.read_text()
            if text.endswith("\n"):
                self.ports = json.loads(text)
                return
            if self.process.poll() is not None:
                raise AssertionError(f"smtp-sink.py exited with {self.process.returncode}\n{self.log()}")
            if time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"smtp-sink.py named no ports within {SINK_START_TIMEOUT} s\n{self.log()}")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None

    def log(self) -> str:
        path = self.folder / "sink.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def received(self) -> list[Mail]:
        """Every message received so far, oldest first (a .json is written after its .eml)."""
        mails = []
        for meta_path in sorted(self.mail_dir.glob("*.json")):
            eml = meta_path.with_suffix(".eml")
            message = email.message_from_bytes(eml.read_bytes(), policy=email.policy.default)
            mails.append(Mail(eml, json.loads(meta_path.read_text()), message))
        return mails

    def wait_for(self, to: str, link_path: str, server: PlazaServer, timeout: float = MAIL_TIMEOUT) -> Mail:
        """The first message not taken yet for `to` with a link to `link_path`; polls the mail
        folder until it comes, for at most `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            for mail in self.received():
                if str(mail.path) in self.taken or to not in mail.meta["to"]:
                    continue
                if server.url + link_path + "?token=" in mail.text:
                    self.taken.add(str(mail.path))
                    return mail
            if time.monotonic() > deadline:
                seen = [(m.path.name, m.meta, m.message["Subject"]) for m in self.received()]
                raise AssertionError(
                    f"no mail to {to} with a {link_path} link within {timeout} s; the sink has {seen}\n"
                    f"sink log:\n{self.log()}\nplaza log:\n{server.log()}")
            time.sleep(0.1)


@dataclass
class MailWorld:
    plaza: PlazaServer
    sink: SmtpSink


@contextlib.contextmanager
def mailing_server(data_dir: Path, tmp_path: Path, env: dict[str, str] | None = None):
    """A sink, and a server that mails through its STARTTLS port with AUTH (with `env` added);
    `postmaster` is an administrator (who may read the outbox)."""
    if importlib.util.find_spec("aiosmtpd") is None:
        pytest.fail("the mail tests need aiosmtpd: run scripts/install-deps.sh test", pytrace=False)
    sink = SmtpSink(tmp_path / "smtp")
    sink.start()
    try:
        made = run_plaza("user", "create", "--username", ADMIN, "--email", f"{ADMIN}@example.com",
                         "--password", ADMIN_PASSWORD, "--admin", data_dir=data_dir)
        assert made.returncode == 0, made.stdout + made.stderr
        port = free_port()
        plaza = PlazaServer(data_dir, tmp_path / "plaza.log", port=port, env={
            "PLAZA_SMTP_URL": f"smtp://plaza:plaza-secret@127.0.0.1:{sink.ports['starttls']}",
            "PLAZA_SMTP_CA_FILE": str(sink.cert),
            "PLAZA_MAIL_FROM": f"Plaza E2E <{SENDER}>",
            "PLAZA_PUBLIC_URL": PlazaServer.url_for(port),
            **(env or {}),
        })
        with plaza.running():
            yield MailWorld(plaza, sink)
    finally:
        sink.stop()


@pytest.fixture
def mail_world(data_dir: Path, tmp_path: Path):
    with mailing_server(data_dir, tmp_path) as world:
        yield world


def register(plaza: PlazaServer, username: str, password: str) -> tuple[str, dict]:
    """Signs up `username` (<username>@example.com); returns the address and the answer."""
    address = f"{username}@example.com"
    body = expect(plaza.client().post(f"{API}/auth/register",
                                      json={"username": username, "email": address, "password": password}), 201)
    assert body["token"] and body["user"]["username"] == username, body
    return address, body


def check_delivery(mail: Mail, to: str) -> None:
    """Sent over STARTTLS with AUTH, from PLAZA_MAIL_FROM, to `to` alone."""
    assert mail.meta == {"from": SENDER, "to": [to], "server": "starttls", "auth": True}, mail.meta
    assert mail.message["To"].addresses[0].addr_spec == to, mail.message["To"]
    assert mail.message["From"].addresses[0].addr_spec == SENDER, mail.message["From"]


def outbox(plaza: PlazaServer) -> list[dict]:
    """Everything the server queued, as its administrator reads it."""
    token = expect(plaza.client().post(f"{API}/auth/login", json={"login": ADMIN, "password": ADMIN_PASSWORD}),
                   200)["token"]
    return expect(plaza.client(token).get(f"{API}/admin/mail?limit=100"), 200)["items"]


def test_the_verification_mail_confirms_the_address(mail_world: MailWorld):
    plaza, sink = mail_world.plaza, mail_world.sink
    address, body = register(plaza, "vera", "vera-password-1")
    vera = plaza.client(body["token"])
    assert expect(vera.get(f"{API}/me"), 200)["emailVerified"] is False

    mail = sink.wait_for(address, "/verify-email", plaza)
    check_delivery(mail, address)
    assert "Confirm your email address" in mail.message["Subject"], mail.message["Subject"]
    token = mail.token(plaza.url, "/verify-email")

    response = plaza.client().post(f"{API}/auth/email/verify", json={"token": token})
    assert response.status_code == 204, describe(response)
    me = expect(vera.get(f"{API}/me"), 200)
    assert me["emailVerified"] is True and me["email"] == address, me
    # A link works once.
    expect_error(plaza.client().post(f"{API}/auth/email/verify", json={"token": token}), 400, "invalid_link")


def test_a_mailed_link_resets_the_password_once(mail_world: MailWorld):
    plaza, sink = mail_world.plaza, mail_world.sink
    address, body = register(plaza, "rosa", "old-password-1")
    old_session = plaza.client(body["token"])
    sink.wait_for(address, "/verify-email", plaza)

    # The same answer whether or not someone has the address.
    nobody = "nobody-here@example.com"
    response = plaza.client().post(f"{API}/auth/password/forgot", json={"email": nobody})
    assert response.status_code == 202 and not response.content, describe(response)
    response = plaza.client().post(f"{API}/auth/password/forgot", json={"email": address})
    assert response.status_code == 202 and not response.content, describe(response)

    mail = sink.wait_for(address, "/reset-password", plaza)
    check_delivery(mail, address)
    assert "Reset your" in mail.message["Subject"], mail.message["Subject"]
    token = mail.token(plaza.url, "/reset-password")

    reset = expect(plaza.client().post(f"{API}/auth/password/reset",
                                       json={"token": token, "newPassword": "new-password-2"}), 200)
    assert reset["user"]["username"] == "rosa" and reset["token"], reset
    new_session = plaza.client(reset["token"])
    me = expect(new_session.get(f"{API}/me"), 200)
    assert me["username"] == "rosa", me
    assert me["emailVerified"] is True, me  # the link proved the address too
    # Every earlier session ended; the link works once; only the new password signs in.
    expect_error(old_session.get(f"{API}/me"), 401)
    expect_error(plaza.client().post(f"{API}/auth/password/reset",
                                     json={"token": token, "newPassword": "third-password-3"}), 400, "invalid_link")
    expect_error(plaza.client().post(f"{API}/auth/login", json={"login": "rosa", "password": "old-password-1"}), 401)
    expect(plaza.client().post(f"{API}/auth/login", json={"login": "rosa", "password": "new-password-2"}), 200)

    # Nothing was queued for, nor delivered to, the unknown address: the outbox holds rosa's
    # two messages only, both sent, and so does the sink.
    queued = [(m["kind"], m["to"], m["state"]) for m in outbox(plaza)]
    assert sorted(queued) == [("password_reset", address, "sent"), ("verify_email", address, "sent")], queued
    delivered = [m.meta["to"] for m in sink.received()]
    assert delivered == [[address], [address]], delivered


def test_a_forgotten_password_is_reset_from_the_mailed_link_in_the_browser(mail_world: MailWorld, browser_factory):
    plaza, sink = mail_world.plaza, mail_world.sink
    address, _ = register(plaza, "wren", "old-password-1")
    browser = browser_factory()

    browser.get(plaza.url + "/login")
    click(browser, "a[href='/forgot-password']")
    wait_text(browser, "h1", "Forgot your password?", timeout=PAGE_TIMEOUT)
    screenshots(browser, "email-forgot-password")
    fill(browser, "form[action='/forgot-password'] input[name=email]", address)
    button = wait_for(browser, "form[action='/forgot-password'] button[type=submit]")
    assert button.text == "Send me a link", button.text
    button.click()
    wait_for(browser, "[data-reset-sent]", timeout=PAGE_TIMEOUT)
    screenshots(browser, "email-forgot-password-sent")

    link = sink.wait_for(address, "/reset-password", plaza).link(plaza.url, "/reset-password")
    browser.get(link)
    wait_text(browser, "h1", "Choose a new password", timeout=PAGE_TIMEOUT)
    screenshots(browser, "email-reset-password")
    fill(browser, "form[action='/reset-password'] input[name=newPassword]", "new-password-2")
    button = wait_for(browser, "form[action='/reset-password'] button[type=submit]")
    assert button.text == "Set password and sign in", button.text
    button.click()
    wait_for(browser, "body[data-signed-in]", timeout=PAGE_TIMEOUT)
    assert browser.current_url == plaza.url + "/", browser.current_url
    assert not browser.find_elements(By.CSS_SELECTOR, "[data-verify-banner]")  # the link proved the address

    click(browser, "form.logout button[type=submit]")
    wait_for(browser, "form[action='/login'] input[name=login]", timeout=PAGE_TIMEOUT)
    assert not browser.find_elements(By.CSS_SELECTOR, "body[data-signed-in]")
    fill(browser, "input[name=login]", "wren")
    fill(browser, "input[name=password]", "new-password-2")
    click(browser, "form[action='/login'] button[type=submit]")
    wait_for(browser, "body[data-signed-in]", timeout=PAGE_TIMEOUT)
    expect_error(plaza.client().post(f"{API}/auth/login", json={"login": "wren", "password": "old-password-1"}), 401)


def test_the_verify_banner_goes_once_the_mailed_link_is_confirmed(mail_world: MailWorld, browser_factory):
    plaza, sink = mail_world.plaza, mail_world.sink
    address, _ = register(plaza, "iris", "iris-password-1")
    browser = browser_factory()

    browser.get(plaza.url + "/login")
    fill(browser, "input[name=login]", "iris")
    fill(browser, "input[name=password]", "iris-password-1")
    click(browser, "form[action='/login'] button[type=submit]")
    wait_for(browser, "body[data-signed-in]", timeout=PAGE_TIMEOUT)
    wait_text(browser, "p[data-verify-banner]", address)

    link = sink.wait_for(address, "/verify-email", plaza).link(plaza.url, "/verify-email")
    browser.get(link)
    wait_text(browser, "h1", "Confirm your email address", timeout=PAGE_TIMEOUT)
    screenshots(browser, "email-verify")
    button = wait_for(browser, "form[action='/verify-email'] button[type=submit]")
    assert button.text == "Confirm my address", button.text
    button.click()
    wait_for(browser, "[data-email-verified]", timeout=PAGE_TIMEOUT)
    wait_gone(browser, "p[data-verify-banner]")

    browser.get(plaza.url + "/")
    wait_for(browser, "body[data-signed-in]", timeout=PAGE_TIMEOUT)
    assert not browser.find_elements(By.CSS_SELECTOR, "p[data-verify-banner]")
