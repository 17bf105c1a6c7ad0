"""axe-core (the engine behind Lighthouse's accessibility score, shipped by axe-selenium-python)
on every page of the web app: the pages listed in pages.json (a Swift test keeps the list
complete), on the demo world, signed in and out, in light and dark mode, at phone and desktop
width. No violation of any impact may be found."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import pytest
from selenium.webdriver.support.ui import WebDriverWait

from conftest import PlazaServer, expect, run_plaza
from web import page_status, set_viewport, sign_in, wait_for

API = "/api/v1"
PAGES = json.loads((Path(__file__).parent / "pages.json").read_text())["pages"]
WIDTHS = {"phone": (390, 844), "desktop": (1366, 900)}


def axe():
    try:
        from axe_selenium_python import Axe
    except ImportError:
        pytest.fail("the accessibility tests need axe-selenium-python: run scripts/install-deps.sh test", pytrace=False)
    return Axe


def placeholders(plaza: PlazaServer) -> dict[str, str]:
    """The demo world's ids that pages.json's URLs name."""
    demo = plaza.client(expect(plaza.client().post(
        f"{API}/auth/login", json={"login": "demo", "password": "plaza-demo"}), 200)["token"])

    def posts(username: str, query: str = "") -> list[dict]:
        return expect(demo.get(f"{API}/users/{username}/posts?limit=50{query}"), 200)["items"]

    food = posts("eatstagram")
    video = next(p for p in food if any(m["contentType"].startswith("video/") for m in p["media"]))
    question = next(p for p in expect(demo.get(f"{API}/spaces/cs101/feed?limit=50"), 200)["items"]
                    if p["counts"]["comments"] > 0)
    invite = expect(demo.post(f"{API}/spaces/thesis-lab/invites", json={}), 201)
    app = expect(plaza.client().post(f"{API}/apps", data={
        "client_name": "Tour", "redirect_uris": "urn:ietf:wg:oauth:2.0:oob", "scopes": "read"}), 200)
    return {
        "meme": posts("memerly")[0]["id"], "activity": posts("priya", "&kind=activity")[0]["id"],
        "video": video["id"], "question": question["id"], "mine": posts("demo")[0]["id"],
        "collection": expect(demo.get(f"{API}/collections"), 200)["items"][0]["id"],
        "invite": invite["code"], "client": app["client_id"],
    }


def signed_in_browsers(plaza: PlazaServer, browser_factory) -> dict:
    """A browser for each of pages.json's `as`: a visitor, the demo account, the administrator."""
    browsers = {"visitor": browser_factory()}
    for who in ("demo", "admin"):
        browsers[who] = browser_factory()
        sign_in(browsers[who], plaza.url, who, "plaza-demo")
    return browsers


def page_views(plaza: PlazaServer, browsers: dict, values: dict[str, str]):
    """Opens every page of pages.json as each of its people, in turn: (url, who, browser)."""
    for page in PAGES:
        url = page["url"].format(**values)
        for who in page["as"]:
            driver = browsers[who]
            driver.get(plaza.url + url)
            wait_for(driver, "main")
            assert page_status(driver) in (page.get("status", 200), 0), f"{url} as {who}: {page_status(driver)}"
            yield url, who, driver


@pytest.fixture
def demo_world(data_dir: Path, tmp_path: Path):
    seeded = run_plaza("seed", "--demo", data_dir=data_dir)
    assert seeded.returncode == 0, seeded.stdout + seeded.stderr
    with PlazaServer(data_dir, tmp_path / "plaza.log").running() as plaza:
        yield plaza


def test_every_page_has_no_axe_violation_signed_in_and_out_light_and_dark_phone_and_desktop(
        demo_world: PlazaServer, browser_factory):
    plaza = demo_world
    values = placeholders(plaza)
    browsers = signed_in_browsers(plaza, browser_factory)
    Axe = axe()
    found: list[str] = []
    checked = 0
    for (width_name, (width, height)), scheme in itertools.product(WIDTHS.items(), ("light", "dark")):
        for driver in browsers.values():
            set_viewport(driver, width, height)
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                                   {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
        for url, who, driver in page_views(plaza, browsers, values):
            checker = Axe(driver)
            checker.inject()
            results = checker.run()
            assert results["passes"], f"axe-core checked nothing on {url}"
            for violation in results["violations"]:
                for node in violation["nodes"]:
                    found.append(f"{url} as {who}, {scheme}, {width_name}: {violation['id']} "
                                 f"({violation['impact']}) {node['html'][:160]} "
                                 f"{node.get('failureSummary', '')[:300]}")
            checked += 1
    print(f"axe-core: {checked} page views, {len(found)} violations")
    assert not found, "\n".join(found[:60])


# What the README and docs/web.md show, in this order: (name, page, who).
TOUR = [
    ("landing", "/", "visitor"),
    ("home", "/", "demo"),
    ("explore-photos", "/explore?kind=photo", "demo"),
    ("space", "/s/cs101", "demo"),
    ("post", "/p/{question}", "demo"),
    ("food", "/@eatstagram", "visitor"),
    ("profile-activity", "/u/priya", "demo"),
    ("collections", "/collections/{collection}", "demo"),
    ("notifications", "/notifications", "demo"),
    ("admin", "/admin", "admin"),
]


def test_a_tour_of_the_demo_world_at_phone_and_desktop_width(demo_world: PlazaServer, browser_factory):
    """Screenshots of the demo world, as a newcomer sees it: written to
    $PLAZA_TOUR_SCREENSHOTS (docs/screenshots to refresh the docs' pictures), else to
    e2e/screenshots/tour."""
    plaza = demo_world
    values = placeholders(plaza)
    folder = Path(os.environ.get("PLAZA_TOUR_SCREENSHOTS") or Path(__file__).parent / "screenshots" / "tour")
    folder.mkdir(parents=True, exist_ok=True)
    browsers = signed_in_browsers(plaza, browser_factory)
    for name, url, who in TOUR:
        driver = browsers[who]
        for width_name, (width, height) in WIDTHS.items():
            set_viewport(driver, width, height)
            driver.get(plaza.url + url.format(**values))
            wait_for(driver, "main")
            # Pictures load lazily: wait until those in view have.
            driver.execute_script("window.scrollTo(0, 0)")
            WebDriverWait(driver, 15).until(lambda d: d.execute_script(
                "return [...document.images].filter(i => i.getBoundingClientRect().top < innerHeight)"
                ".every(i => i.complete)"), f"{url}: pictures in view")
            path = folder / f"{name}-{width_name}.png"
            assert driver.save_screenshot(str(path)), path
            assert path.stat().st_size > 10_000, f"{path} is blank"


# No page ships more than this much JavaScript plus CSS, as sent (gzipped).
MAX_SCRIPT_AND_STYLE_BYTES = 60 * 1024

WEIGHT_SCRIPT = """
const nav = performance.getEntriesByType('navigation')[0];
const paint = performance.getEntriesByType('paint').find((p) => p.name === 'first-contentful-paint');
const files = performance.getEntriesByType('resource').map((r) => ({
  name: r.name, sent: r.encodedBodySize, size: r.decodedBodySize }));
return { html: nav.encodedBodySize, firstPaint: paint ? paint.startTime : null, files };
"""


def test_every_page_is_light_its_scripts_and_styles_under_60_kb_as_sent(demo_world: PlazaServer, browser_factory):
    """Each page's HTML, CSS and JavaScript as the browser received them (no cache, no service
    worker) and its first contentful paint, at desktop width; the table goes to
    e2e/screenshots/page-weights.md (docs/web.md lists it). Times are reported, never asserted."""
    plaza = demo_world
    values = placeholders(plaza)
    browsers = signed_in_browsers(plaza, browser_factory)
    rows, heavy = [], []
    for driver in browsers.values():
        set_viewport(driver, *WIDTHS["desktop"])
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
        driver.execute_cdp_cmd("Network.setBypassServiceWorker", {"bypass": True})
    for page in PAGES:
        url = page["url"].format(**values)
        who = page["as"][-1]
        driver = browsers[who]
        driver.get(plaza.url + url)
        wait_for(driver, "main")
        WebDriverWait(driver, 60).until(lambda d: d.execute_script("return document.readyState") == "complete")
        weight = driver.execute_script(WEIGHT_SCRIPT)
        def total(suffix: str, key: str) -> int:
            return sum(f[key] for f in weight["files"] if f["name"].split("?")[0].endswith(suffix))
        js, css = total(".js", "sent"), total(".css", "sent")
        assert js > 0 and css > 0, f"{url}: no script or style measured: {weight['files']}"
        paint = weight["firstPaint"]
        rows.append(f"| `{page['url']}` | {who} | {weight['html'] / 1024:.1f} | {css / 1024:.1f} "
                    f"({total('.css', 'size') / 1024:.1f}) | {js / 1024:.1f} ({total('.js', 'size') / 1024:.1f}) | "
                    f"{'—' if paint is None else f'{paint:.0f}'} |")
        if js + css > MAX_SCRIPT_AND_STYLE_BYTES:
            heavy.append(f"{url}: {js + css} bytes of script and style")
    report = Path(__file__).parent / "screenshots" / "page-weights.md"
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text("| Page | As | HTML KB | CSS KB sent (unzipped) | JS KB sent (unzipped) | First paint ms |\n"
                      "|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n")
    print(report.read_text())
    assert not heavy, "\n".join(heavy)


# The controls a keyboard must reach on the page as it stands: visible, enabled, not taken out
# of the tab order, not inside a closed menu or sheet. Each is marked `data-kb` with its number.
CONTROLS_SCRIPT = """
const selector = 'a[href], button, input:not([type=hidden]), select, textarea, summary, [tabindex]';
const shown = (el) => {
  if (el.closest('[inert], dialog:not([open])')) return false;
  const closed = el.closest('details:not([open])');
  if (closed && el !== closed.querySelector(':scope > summary')) return false;
  const style = getComputedStyle(el);
  if (style.visibility !== 'visible' || el.getClientRects().length === 0) return false;
  const box = el.getBoundingClientRect();
  return box.width > 1 && box.height > 1;
};
// A group of radio buttons is one stop (the arrow keys move within it): its checked one, else its first.
const radioStop = (el) => {
  if (el.type !== 'radio' || !el.name) return true;
  const group = [...(el.form ?? document).querySelectorAll(`input[type=radio][name="${CSS.escape(el.name)}"]`)];
  return el === (group.find((r) => r.checked) ?? group[0]);
};
const controls = [...document.querySelectorAll(selector)]
  .filter((el) => !el.disabled && el.tabIndex >= 0 && shown(el) && radioStop(el));
controls.forEach((el, i) => { el.dataset.kb = String(i); });
return controls.map((el) => el.outerHTML.slice(0, 120));
"""

# What has the focus, and whether it shows its ring: an outline of 2px or more (plaza.css draws
# every focus ring so; a shadow some controls always have is no ring).
FOCUS_SCRIPT = """
const el = document.activeElement;
if (!el || el === document.body) return null;
const style = getComputedStyle(el);
const ring = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2;
return { kb: el.dataset.kb ?? null, ring, html: el.outerHTML.slice(0, 120) };
"""


def tab_through(driver, url: str) -> list[str]:
    """Presses Tab until the focus has gone round the page; returns what went wrong."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    controls = driver.execute_script(CONTROLS_SCRIPT)
    assert controls, f"{url}: no control found to tab to"
    driver.execute_script("document.activeElement?.blur(); window.scrollTo(0, 0)")
    reached: set[str] = set()
    problems: list[str] = []
    # Room for what loads meanwhile (a feed's next page, near enough at load to come by itself).
    for _ in range(2 * len(controls) + 30):
        ActionChains(driver).send_keys(Keys.TAB).perform()
        focus = driver.execute_script(FOCUS_SCRIPT)
        if focus is None:
            continue
        if not focus["ring"]:
            problems.append(f"{url}: no visible focus on {focus['html']}")
        if focus["kb"] is not None:
            reached.add(focus["kb"])
        if len(reached) == len(controls):
            break
    # A feed's "older posts" link is replaced by the posts it loads once scrolled into view.
    still_there = driver.execute_script("return [...document.querySelectorAll('[data-kb]')].map((el) => el.dataset.kb)")
    missing = [html for i, html in enumerate(controls) if str(i) not in reached and str(i) in still_there]
    problems += [f"{url}: Tab never reaches {html}" for html in missing]
    return problems


def test_every_page_works_by_keyboard_alone_with_a_visible_focus_ring(demo_world: PlazaServer, browser_factory):
    """Tab alone, on every page of pages.json as each of its people, at phone and desktop width:
    it reaches every control on the page (none is skipped and nothing traps the focus), and each
    shows its focus ring. Then the post page's menu, its sheets and a carousel, by keys only."""
    plaza = demo_world
    values = placeholders(plaza)
    browsers = signed_in_browsers(plaza, browser_factory)
    problems: list[str] = []
    visited = 0
    for width in WIDTHS.values():
        for driver in browsers.values():
            set_viewport(driver, *width)
        for url, who, driver in page_views(plaza, browsers, values):
            problems += [f"{p} (as {who}, {width[0]}px)" for p in tab_through(driver, url)]
            visited += 1
    print(f"keyboard: {visited} page views, {len(problems)} problems")
    assert not problems, "\n".join(problems[:60])
    keyboard_menus_sheets_and_carousels(plaza, browsers["demo"], values)


def keyboard_menus_sheets_and_carousels(plaza: PlazaServer, driver, values: dict[str, str]) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    def press(*keys):
        ActionChains(driver).send_keys(*keys).perform()

    def focused(script: str):
        return driver.execute_script(f"return document.activeElement.{script}")

    set_viewport(driver, *WIDTHS["desktop"])
    driver.get(plaza.url + f"/p/{values['meme']}")
    wait_for(driver, "main")
    driver.execute_script("document.querySelector('.post-menu summary').focus()")
    press(Keys.ENTER)
    assert driver.execute_script("return document.querySelector('.post-menu').open"), "Enter opens the menu"
    press(Keys.ESCAPE)
    assert not driver.execute_script("return document.querySelector('.post-menu').open"), "Escape closes it"
    assert focused("matches('.post-menu summary')"), "and gives the focus back to its button"
    press(Keys.ENTER)
    for _ in range(20):
        press(Keys.TAB)
        if focused("dataset.dialog") == "report-sheet":
            break
    assert focused("dataset.dialog") == "report-sheet", "Tab reaches Report in the menu"
    press(Keys.ENTER)
    assert driver.execute_script("return document.getElementById('report-sheet').open"), "Enter opens the sheet"
    assert focused("closest('#report-sheet') !== null"), "the focus moves into the sheet"
    press(Keys.ESCAPE)
    assert not driver.execute_script("return document.getElementById('report-sheet').open"), "Escape closes it"
    assert focused("matches('.post-menu summary')"), "the focus is back on the menu's button"

    # The save sheet from the action row, closed by its button.
    driver.execute_script("document.querySelector('[data-dialog=save-sheet]').focus()")
    press(Keys.ENTER)
    assert driver.execute_script("return document.getElementById('save-sheet').open")
    driver.execute_script("document.querySelector('#save-sheet [data-close]').focus()")
    press(Keys.ENTER)
    assert not driver.execute_script("return document.getElementById('save-sheet').open")
    assert focused("dataset.dialog") == "save-sheet", "the focus is back on Save"

    # A post with several photos: its next arrow steps to the second.
    with_several = next(p["id"] for p in expect(plaza.client().get(f"{API}/users/eatstagram/posts?limit=50"), 200)["items"]
                        if len(p["media"]) > 1)
    driver.get(plaza.url + f"/p/{with_several}")
    count = wait_for(driver, "[data-slide-count]")
    assert count.text.startswith("1 /"), count.text
    driver.execute_script("document.querySelector('.carousel .next').focus()")
    press(Keys.ENTER)
    WebDriverWait(driver, 10).until(lambda d: count.text.startswith("2 /"), "the next arrow shows the second photo")
