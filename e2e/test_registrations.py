"""Registration modes in the browser, with the mail they send read from a real SMTP server
(scripts/smtp-sink.py): a server that starts in approval mode (PLAZA_REGISTRATIONS), a sign-up
that waits, the admins' mail, approval on the admin's page and the welcome mail; then the admin
switches to invites, makes a link, and a visitor signs up with it; members are allowed to invite
and one does; a report cites a rule; the two-factor key's QR code scans; then sign-ups close."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from conftest import PlazaServer, expect
from test_email import ADMIN, ADMIN_PASSWORD, MAIL_TIMEOUT, Mail, SmtpSink, mailing_server
from web import click, fill, screenshot_dir, screenshots, sign_in, wait_for, wait_text

PASSWORD = "correct horse battery"


def mail_titled(sink: SmtpSink, to: str, subject: str, server: PlazaServer) -> Mail:
    """The first message to `to` whose subject has `subject`, polled for at most MAIL_TIMEOUT s."""
    deadline = time.monotonic() + MAIL_TIMEOUT
    while True:
        for mail in sink.received():
            if to in mail.meta["to"] and subject in mail.message["Subject"] and str(mail.path) not in sink.taken:
                sink.taken.add(str(mail.path))
                return mail
        if time.monotonic() > deadline:
            seen = [(m.meta["to"], m.message["Subject"]) for m in sink.received()]
            raise AssertionError(f"no mail to {to} about {subject!r}; the sink has {seen}\n{server.log()}")
        time.sleep(0.1)


@pytest.fixture
def approval_world(data_dir: Path, tmp_path: Path):
    env = {"PLAZA_REGISTRATIONS": "approval", "PLAZA_INSTANCE_NAME": "Riverside"}
    with mailing_server(data_dir, tmp_path, env) as world:
        yield world.plaza, world.sink


def sign_up_form(browser, url: str, username: str, **extra: str) -> None:
    browser.get(url)
    for name, value in extra.items():
        field = wait_for(browser, f"[name={name}]")
        field.clear()
        field.send_keys(value)
    fill(browser, "input[name=username]", username)
    fill(browser, "input[name=email]", f"{username}@example.com")
    fill(browser, "input[name=password]", PASSWORD)
    click(browser, "form[action='/signup'] button[type=submit]")


def test_sign_ups_wait_for_approval_then_need_an_invite_then_stop(approval_world, browser_factory):
    plaza, sink = approval_world
    about = expect(plaza.client().get("/api/v1/about"), 200)
    assert about["registrations"] == "approval" and about["name"] == "Riverside", about

    visitor = browser_factory()
    sign_up_form(visitor, plaza.url + "/signup", "ana", reason="I run by the river every morning.")
    wait_text(visitor, "[role=status]", "ana@example.com")
    waiting = mail_titled(sink, f"{ADMIN}@example.com", "ana wants to join Riverside", plaza)
    assert "I run by the river every morning." in waiting.text
    assert plaza.url + "/admin/instance#registrations" in waiting.text
    # Until approved, the password does not sign in, and says why.
    refused = plaza.client().post("/api/v1/auth/login", json={"login": "ana", "password": PASSWORD})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "pending_approval"

    admin = browser_factory()
    sign_in(admin, plaza.url, ADMIN, ADMIN_PASSWORD)
    admin.get(plaza.url + "/admin/instance")
    wait_text(admin, "[data-waiting=ana]", "I run by the river every morning.")
    screenshots(admin, "admin-instance")
    click(admin, "[data-waiting=ana] button.primary")
    wait_text(admin, "#registrations .empty", "Nobody is waiting.")
    welcome = mail_titled(sink, "ana@example.com", "Welcome to Riverside", plaza)
    assert plaza.url + "/login" in welcome.text
    sign_in(visitor, plaza.url, "ana", PASSWORD)

    # The dashboard counts her, finds her by name, and makes her an admin.
    admin.get(plaza.url + "/admin/dashboard")
    wait_text(admin, ".figures", "2: 1 admins, 0 waiting, 0 suspended")
    fill(admin, "input[name=q]", "an")
    click(admin, "form[role=search] button[type=submit]")
    wait_for(admin, "[data-person=ana]")
    assert admin.find_elements(By.CSS_SELECTOR, "[data-person=postmaster]") == []
    screenshots(admin, "admin-dashboard")
    click(admin, "[data-person=ana] button[data-body*=admin]")
    admin.switch_to.alert.accept()
    wait_for(admin, "[data-person=ana] button[data-body*=member]")
    admin.get(plaza.url + "/admin/instance")

    # Invites: the admin switches the mode and makes a link for one person.
    Select(wait_for(admin, "select[name=registrations]")).select_by_value("invite")
    fill(admin, "textarea[name=rules]", "Be kind.\nCredit photos.")
    click(admin, "form[data-api='PATCH /api/v1/admin/instance'] button[type=submit]")
    wait_for(admin, ".toast")
    about = expect(plaza.client().get("/api/v1/about"), 200)
    assert about["registrations"] == "invite", about
    assert [r["text"] for r in about["rules"]] == ["Be kind.", "Credit photos."], about
    fill(admin, "input[name=maxUses]", "1")
    click(admin, "form[data-api='POST /api/v1/admin/invites'] button[type=submit]")
    link = wait_text(admin, "[data-invite-url]", "/signup?invite=").text
    assert link.startswith(plaza.url + "/signup?invite="), link

    newcomer = browser_factory(width=390, height=844)
    newcomer.get(plaza.url + "/signup")
    wait_text(newcomer, "main", "Signing up here needs an invite from a member.")
    rules = [li.text for li in newcomer.find_elements(By.CSS_SELECTOR, ".rules li")]
    screenshots(newcomer, "signup-invite")
    assert rules == ["Be kind.", "Credit photos."], rules
    sign_up_form(newcomer, link, "bea")
    wait_for(newcomer, "body[data-signed-in]", timeout=30)
    # Used up: the next person with the same link is refused, on the form.
    third = browser_factory()
    sign_up_form(third, link, "cyd")
    wait_text(third, ".error[role=alert]", "This invite is not valid")

    # Members may invite once the admin allows it: Bea makes a link from her settings.
    click(admin, "input[name=membersMayInvite]")
    click(admin, "form[data-api='PATCH /api/v1/admin/instance'] button[type=submit]")
    wait_for(admin, ".toast")
    about = expect(plaza.client().get("/api/v1/about"), 200)
    assert about["membersMayInvite"] is True and len(about["rules"]) == 2, about
    newcomer.get(plaza.url + "/settings")
    wait_for(newcomer, "#invite-heading")
    newcomer.get(newcomer.find_element(By.CSS_SELECTOR, "a[href='/invites']").get_attribute("href"))
    uses = wait_for(newcomer, "input[name=maxUses]")
    assert uses.get_attribute("value") == "10" and uses.get_attribute("max") == "100"
    click(newcomer, "form[data-api='POST /api/v1/invites'] button[type=submit]")
    bea_link = wait_text(newcomer, "[data-invite-url]", "/signup?invite=").text
    screenshots(newcomer, "invites")
    sign_up_form(third, bea_link, "cyd")
    wait_for(third, "body[data-signed-in]", timeout=30)

    # Cyd reports a post of Bea's for breaking a rule she names; the admin sees which.
    post = expect(plaza.client(login_token(plaza, "bea")).post(
        "/api/v1/posts", json={"kind": "text", "title": "Found online", "body": "A photo I did not take"}), 201)
    third.get(plaza.url + f"/p/{post['id']}")
    click(third, ".post-menu summary")
    click(third, ".post-menu [data-dialog=report-sheet]")
    Select(wait_for(third, "#report-sheet select[name=reason]")).select_by_value("rules")
    rule_boxes = third.find_elements(By.CSS_SELECTOR, "#report-sheet [data-report-rules] input")
    assert [box.find_element(By.XPATH, "..").text for box in rule_boxes] == ["Be kind.", "Credit photos."]
    click(third, "#report-sheet [data-report-rules] input[value='2']")
    screenshots(third, "report-rules")
    click(third, "#report-sheet button[type=submit]")
    wait_for(third, ".toast")
    admin.get(plaza.url + "/admin")
    wait_text(admin, ".reports .cited-rules", "Credit photos.")

    # Two-factor sign-in: the key's QR code, drawn by Plaza, scans as the key's otpauth URL.
    newcomer.get(plaza.url + "/settings")
    fill(newcomer, "form[data-api='POST /api/v1/me/two-factor'] input[name=currentPassword]", PASSWORD)
    click(newcomer, "form[data-api='POST /api/v1/me/two-factor'] button[type=submit]")
    code = wait_for(newcomer, "img[data-two-factor-qr]")
    wait_text(newcomer, "[data-two-factor-secret]", " ")
    secret = newcomer.find_element(By.CSS_SELECTOR, "[data-two-factor-secret]").text.replace(" ", "")
    newcomer.execute_script("arguments[0].scrollIntoView({block: 'center'})", code)
    scanned = scan_qr(code.screenshot_as_png)
    assert scanned.startswith("otpauth://totp/Plaza:bea?") and f"secret={secret}" in scanned, scanned

    # Closed: no form at all.
    expect(plaza.client(admin_token(plaza)).patch("/api/v1/admin/instance", json={"registrations": "closed"}), 200)
    late = browser_factory()
    late.get(plaza.url + "/signup")
    wait_text(late, "main", "This server is not taking new sign-ups.")
    assert late.find_elements(By.CSS_SELECTOR, "form[action='/signup']") == []


def admin_token(plaza: PlazaServer) -> str:
    return expect(plaza.client().post("/api/v1/auth/login", json={"login": ADMIN, "password": ADMIN_PASSWORD}),
                  200)["token"]


def login_token(plaza: PlazaServer, username: str) -> str:
    return expect(plaza.client().post("/api/v1/auth/login", json={"login": username, "password": PASSWORD}),
                  200)["token"]


def scan_qr(png: bytes) -> str:
    """What zbar (zbarimg, installed by scripts/install-deps.sh) reads in a PNG (kept beside the
    screenshots)."""
    path = screenshot_dir() / "two-factor-qr.png"
    path.write_bytes(png)
    done = subprocess.run(["zbarimg", "--quiet", "--raw", str(path)], capture_output=True, check=False)
    assert done.returncode == 0, f"zbarimg read no code in {path}: {done.stderr!r}"
    return done.stdout.decode().strip()
