"""Helpers for the browser tests (selenium + headless Chromium; the `browser_factory` fixture in
conftest.py opens the browsers).

Implicit waits are off: every look-up that may have to wait for the page says so through one of
these helpers, each with its own deadline. PLAZA_SCREENSHOTS names the folder for screenshots
and for what a failed browser test leaves behind (default e2e/screenshots/ in the repository).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterable

from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parent.parent

PHONE = (390, 844)  # CSS pixels of the viewport, not of the window
DESKTOP = (1280, 900)


def screenshot_dir() -> Path:
    """The folder for screenshots (created on first use)."""
    path = Path(os.environ.get("PLAZA_SCREENSHOTS") or ROOT / "e2e" / "screenshots").resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def _wait(driver: WebDriver, timeout: float, condition, what: str):
    return WebDriverWait(driver, timeout).until(condition, f"{what} within {timeout} s on {driver.current_url}")


def wait_for(driver: WebDriver, css: str, timeout: float = 10) -> WebElement:
    """The first element matching `css` once it is visible."""
    return _wait(driver, timeout, EC.visibility_of_element_located((By.CSS_SELECTOR, css)), f"no visible {css!r}")


def wait_text(driver: WebDriver, css: str, text: str, timeout: float = 10) -> WebElement:
    """The first element matching `css` whose text contains `text`, once there is one."""
    def find(d: WebDriver):
        for element in d.find_elements(By.CSS_SELECTOR, css):
            try:
                if text in element.text:
                    return element
            except WebDriverException:  # replaced while we looked: try again on the next poll
                pass
        return False
    return _wait(driver, timeout, find, f"no {css!r} containing {text!r}")


def wait_gone(driver: WebDriver, css: str, timeout: float = 10) -> None:
    """Waits until no element matching `css` is visible (removed from the page, or hidden)."""
    def gone(d: WebDriver) -> bool:
        try:
            return not any(element.is_displayed() for element in d.find_elements(By.CSS_SELECTOR, css))
        except WebDriverException:
            return False
    _wait(driver, timeout, gone, f"{css!r} still visible")


def click(driver: WebDriver, css: str, timeout: float = 10) -> WebElement:
    """Waits until the element matching `css` is clickable (visible and enabled), then clicks it."""
    element = _wait(driver, timeout, EC.element_to_be_clickable((By.CSS_SELECTOR, css)), f"no clickable {css!r}")
    element.click()
    return element


def fill(driver: WebDriver, css: str, text: str, timeout: float = 10) -> WebElement:
    """Waits for the field matching `css`, clears it and types `text`."""
    element = wait_for(driver, css, timeout)
    element.clear()
    element.send_keys(text)
    return element


def console_log(driver: WebDriver) -> list[dict]:
    """Every browser console entry this driver has seen (level, message, source, timestamp).

    Chrome hands each entry out once; they are kept on the driver so that asking twice (a test,
    then the failure report) loses nothing.
    """
    seen: list[dict] = driver.__dict__.setdefault("_plaza_console", [])
    try:
        seen.extend(driver.get_log("browser"))
    except (WebDriverException, AttributeError, ValueError):
        pass  # a driver without the log, or a browser already gone
    return list(seen)


def console_errors(driver: WebDriver, ignore: Iterable[str] = ()) -> list[dict]:
    """The SEVERE console entries so far: uncaught JS errors, console.error, CSP violations and
    failed loads. `ignore` holds regular expressions; an entry whose message matches one is left
    out. Use `assert not console_errors(driver)`."""
    patterns = [re.compile(p) for p in ignore]
    return [
        entry for entry in console_log(driver)
        if entry.get("level") == "SEVERE" and not any(p.search(entry.get("message", "")) for p in patterns)
    ]


def set_viewport(driver: WebDriver, width: int, height: int) -> None:
    """Resizes the window so that the page's viewport is width × height CSS pixels (a headless
    window still counts some pixels for browser chrome that is not drawn)."""
    target_width, target_height = width, height
    for _ in range(3):
        driver.set_window_size(target_width, target_height)
        inner_width, inner_height = driver.execute_script("return [window.innerWidth, window.innerHeight]")
        if (inner_width, inner_height) == (width, height):
            return
        target_width += width - inner_width
        target_height += height - inner_height


def _settle(driver: WebDriver) -> None:
    """Scrolls to the top and lets the page lay out and paint (two animation frames)."""
    driver.execute_script("window.scrollTo(0, 0)")
    if not driver.__dict__.get("plaza_javascript", True):
        return  # with scripts off, an asynchronous script never calls back (the screenshot waits for paint)
    driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "requestAnimationFrame(() => requestAnimationFrame(() => done()));"
    )


def screenshots(driver: WebDriver, name: str) -> list[Path]:
    """Saves the current page at phone and at desktop size, from the top, as `<name>-phone.png`
    and `<name>-desktop.png` in screenshot_dir(); the window gets its size back afterwards."""
    folder = screenshot_dir()
    before = driver.get_window_size()
    paths = []
    try:
        for label, (width, height) in (("phone", PHONE), ("desktop", DESKTOP)):
            set_viewport(driver, width, height)
            _settle(driver)
            path = folder / f"{name}-{label}.png"
            if not driver.save_screenshot(str(path)):
                raise AssertionError(f"the browser did not save {path}")
            paths.append(path)
    finally:
        driver.set_window_size(before["width"], before["height"])
    return paths


def save_failure(driver: WebDriver, name: str) -> list[Path]:
    """What a failed test leaves: FAILED-<name>.png (the window as it is), .html (the page
    source) and .log (the console). Best effort: a browser that is gone leaves less."""
    folder = screenshot_dir()
    written = []
    base = folder / f"FAILED-{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)}"
    try:
        if driver.save_screenshot(str(base) + ".png"):
            written.append(Path(str(base) + ".png"))
    except WebDriverException:
        pass
    try:
        html = Path(str(base) + ".html")
        html.write_text(driver.page_source, encoding="utf-8")
        written.append(html)
    except WebDriverException:
        pass
    try:
        url = driver.current_url
    except WebDriverException:
        url = "?"
    log = Path(str(base) + ".log")
    lines = [f"# {url}"] + [
        f"{entry.get('timestamp', '')} {entry.get('level', '')} {entry.get('source', '')} {entry.get('message', '')}"
        for entry in console_log(driver)
    ]
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    written.append(log)
    return written


# --- Helpers for the web app's pages (test_web_stories.py, test_web_pages.py) ---

def sign_in(driver: WebDriver, base_url: str, login: str, password: str = "correct horse battery") -> None:
    """Signs in through the /login form and waits until the signed-in layout is shown."""
    driver.get(base_url + "/login")
    fill(driver, "input[name=login]", login)
    fill(driver, "input[name=password]", password)
    click(driver, "form[action='/login'] button[type=submit]")
    _wait(driver, 10, lambda d: d.find_elements(By.CSS_SELECTOR, "body[data-signed-in]"), f"{login} not signed in")


def page_status(driver: WebDriver) -> int:
    """The HTTP status of the document the browser shows (0 if the browser does not say)."""
    return driver.execute_script(
        "const n = performance.getEntriesByType('navigation')[0]; return n ? (n.responseStatus || 0) : 0")


# Before any script of a page runs, EventSource is wrapped so a test can tell when the page's
# realtime stream is connected (scripts added through DevTools are not subject to the CSP).
_TRACK_STREAMS = """
(() => {
  const Native = window.EventSource;
  if (!Native || Native.__plazaTracked) return;
  const streams = window.__plazaStreams = [];
  window.EventSource = class extends Native {
    constructor(...args) { super(...args); streams.push(this); }
  };
  window.EventSource.__plazaTracked = true;
})();
"""


def track_streams(driver: WebDriver) -> None:
    """From now on, every page this browser opens records its EventSources (see wait_live)."""
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": _TRACK_STREAMS})


def wait_live(driver: WebDriver, timeout: float = 10) -> None:
    """Waits until the current page's realtime stream is open (needs track_streams first)."""
    _wait(driver, timeout, lambda d: d.execute_script(
        "return (window.__plazaStreams || []).some((s) => s.readyState === 1)"), "no open realtime stream")


def set_value(driver: WebDriver, css: str, value: str, events: Iterable[str] = ("input", "change")) -> WebElement:
    """Sets a field's value from script (sliders, colour pickers, emoji that chromedriver cannot
    type) and dispatches `events` as a person's change would."""
    element = wait_for(driver, css)
    driver.execute_script(
        "const [el, value, events] = arguments; el.value = value;"
        "for (const type of events) el.dispatchEvent(new Event(type, { bubbles: true }));",
        element, value, list(events))
    return element
