"""The browser harness itself: headless Chromium opens the running server, screenshots are
written, and two browsers are two separate users (cookie jars)."""

from __future__ import annotations

import struct
from pathlib import Path

from web import DESKTOP, PHONE, console_errors, screenshot_dir, screenshots, wait_text


def png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", header[16:24])


def test_the_browser_opens_the_server(plaza, browser_factory):
    browser = browser_factory()
    browser.get(plaza.url + "/healthz")
    wait_text(browser, "body", '"status":"ok"')
    # Chromium asks for /favicon.ico, which the API does not serve.
    assert not console_errors(browser, ignore=[r"/favicon\.ico"])

    for path in (screenshot_dir() / "smoke-healthz-phone.png", screenshot_dir() / "smoke-healthz-desktop.png"):
        path.unlink(missing_ok=True)
    phone, desktop = screenshots(browser, "smoke-healthz")
    assert phone == screenshot_dir() / "smoke-healthz-phone.png" and phone.is_file()
    assert desktop == screenshot_dir() / "smoke-healthz-desktop.png" and desktop.is_file()
    assert png_size(phone) == PHONE
    assert png_size(desktop) == DESKTOP
    assert browser.execute_script("return [window.innerWidth, window.innerHeight]") == [1280, 900]


def test_two_browsers_are_two_users(plaza, browser_factory):
    ana, bob = browser_factory(), browser_factory(*PHONE)
    for browser in (ana, bob):
        browser.get(plaza.url + "/healthz")
    ana.add_cookie({"name": "who", "value": "ana"})
    assert ana.get_cookie("who")["value"] == "ana"
    assert bob.get_cookie("who") is None
    assert bob.execute_script("return [window.innerWidth, window.innerHeight]") == list(PHONE)
