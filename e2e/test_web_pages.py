"""Every page of the web app, in a real browser: a small world is seeded through the API, then
each page is opened signed in (and the public ones signed out) and must render without an
error, a script error or a CSP violation. Reading must work without JavaScript, and the
keyboard reaches the skip link and the navigation first, with a visible focus ring."""

from __future__ import annotations

import re
import time

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from conftest import LocalSite, PlazaServer, expect, free_port, png
from web import console_errors, console_log, page_status, screenshots, sign_in, wait_for, wait_text

API = "/api/v1"

LINK_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Seeds</title>
<meta property="og:title" content="The seed library handbook">
<meta property="og:description" content="How to run a seed swap in your neighbourhood.">
</head><body>Seeds</body></html>"""


def wait_until(condition, what: str, timeout: float = 15):
    """Polls `condition` (an API check) until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"{what} within {timeout} s"
        time.sleep(0.1)


def seed(plaza: PlazaServer, link_url: str) -> dict:
    """Two people (ada, bo), a space, a text, photo, link and activity post, a comment, a like,
    follows both ways, a collection with a saved link, and notifications for ada."""
    _, ada = plaza.register("ada")
    _, bo = plaza.register("bo_b")
    expect(ada.patch(f"{API}/me", json={"displayName": "Ada Lovegood", "bio": "Gardens and tea."}), 200)
    expect(ada.post(f"{API}/spaces", json={"slug": "garden", "name": "Community Garden", "description": "Plots, seeds, swaps."}), 201)
    expect(ada.put(f"{API}/spaces/garden/membership"), 200)
    expect(bo.put(f"{API}/spaces/garden/membership"), 200)

    text = expect(ada.post(f"{API}/posts", json={
        "kind": "text", "title": "Seed swap on Sunday", "body": "Bring labelled envelopes.", "spaces": ["garden"],
        "price": "free"}), 201)
    media = expect(ada.post(f"{API}/me/media", files={"file": ("tomato.png", png(96, 64, (200, 40, 40)), "image/png")}), 201)
    photo = expect(ada.post(f"{API}/posts", json={
        "kind": "photo", "body": "First tomato of the year", "mediaIds": [media["id"]],
        "location": {"latitude": 38.7223, "longitude": -9.1393, "name": "Plot 7"}}), 201)
    link = expect(ada.post(f"{API}/posts", json={"kind": "link", "body": "Worth a read", "link": {"url": link_url}}), 201)
    activity = expect(ada.post(f"{API}/posts", json={
        "kind": "activity", "body": "Weeding", "activity": {"type": "Gardening", "emoji": "🌱", "color": "#2e9e5a", "progress": 40}}), 201)
    bo_post = expect(bo.post(f"{API}/posts", json={"kind": "text", "body": "Anyone has spare basil?", "spaces": ["garden"]}), 201)

    expect(bo.post(f"{API}/posts/{text['id']}/comments", json={"body": "I will bring beans!"}), 201)
    expect(bo.put(f"{API}/posts/{text['id']}/like"), 200)
    expect(bo.put(f"{API}/users/ada/follow"), 200)
    expect(ada.put(f"{API}/users/bo_b/follow"), 200)

    shelf = expect(ada.post(f"{API}/collections", json={"name": "Reading list"}), 201)
    expect(ada.post(f"{API}/collections/{shelf['id']}/items", json={"url": link_url, "note": "seeds for spring"}), 201)
    expect(ada.post(f"{API}/collections/{shelf['id']}/items", json={"postId": bo_post["id"]}), 201)
    expect(ada.post(f"{API}/collections", json={"name": "Recipes"}), 201)

    # The link previews are fetched in the background; the pages look their best with them.
    wait_until(lambda: expect(ada.get(f"{API}/posts/{link['id']}"), 200)["link"].get("title"), "no link preview")
    wait_until(lambda: all(i.get("link") is None or i["link"].get("title")
                           for i in expect(ada.get(f"{API}/collections/{shelf['id']}/items"), 200)["items"]),
               "no saved link preview")
    notes = expect(ada.get(f"{API}/me/notifications"), 200)["items"]
    assert {n["kind"] for n in notes} >= {"like", "comment", "follow"}, notes
    return {"ada": ada, "bo": bo, "text": text, "photo": photo, "link": link, "activity": activity, "bo_post": bo_post,
            "shelf": shelf}


def check_page(driver, base_url: str, path: str, name: str, heading: str | None = None, status: int = 200) -> None:
    """Opens `path`: the status, an <h1> (containing `heading`), no error page (unless the status
    is an error), screenshots, and no console errors while it was open."""
    seen = len(console_log(driver))
    driver.get(base_url + path)
    WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.TAG_NAME, "h1"), f"no <h1> on {path}")
    h1 = driver.find_element(By.TAG_NAME, "h1")
    assert page_status(driver) == status, f"{path}: HTTP {page_status(driver)}"
    if status < 400:
        assert not driver.find_elements(By.CSS_SELECTOR, ".error-page"), f"{path} shows an error: {h1.text}"
    if heading is not None:
        assert heading in h1.get_attribute("textContent"), f"{path}: <h1> is {h1.get_attribute('textContent')!r}, expected {heading!r}"
    # Scripts have run (module scripts are deferred): the page is what a person sees.
    driver.execute_async_script("const done = arguments[0]; requestAnimationFrame(() => done())")
    screenshots(driver, f"page-{name}")
    expected = re.compile(rf"{re.escape(path)} - Failed to load resource: .*status of {status}") if status >= 400 else None
    errors = [e["message"] for e in console_log(driver)[seen:] if e.get("level") == "SEVERE"
              and not re.search(r"/favicon\.ico", e["message"]) and not (expected and expected.search(e["message"]))]
    assert not errors, f"console errors on {path}:\n" + "\n".join(errors)


def test_every_page_renders_signed_in_and_out(plaza: PlazaServer, browser_factory):
    with LocalSite({"/seeds/handbook": (LINK_PAGE.encode(), "text/html; charset=utf-8")}) as site:
        world = seed(plaza, site.url("/seeds/handbook"))
    text, photo, shelf = world["text"], world["photo"], world["shelf"]

    ada = browser_factory()
    sign_in(ada, plaza.url, "ada")
    signed_in = [
        ("/", "home", "Home"),
        ("/explore", "explore", "Everyone"),
        ("/spaces", "spaces", "Spaces"),
        ("/s/garden", "space", "Community Garden"),
        ("/compose", "compose", "New post"),
        (f"/p/{text['id']}", "post", None),
        (f"/p/{photo['id']}", "post-photo", None),
        (f"/p/{world['link']['id']}", "post-link", None),
        (f"/p/{world['activity']['id']}", "post-activity", None),
        (f"/p/{text['id']}/edit", "edit", "Edit post"),
        (f"/p/{world['activity']['id']}/edit", "edit-activity", "Edit post"),
        (f"/p/{text['id']}/likes", "likes", "Liked by"),
        ("/u/ada", "profile", "Ada Lovegood"),
        ("/u/ada?kind=photo", "profile-photos", "Ada Lovegood"),
        ("/u/bo_b", "profile-other", "bo_b"),
        ("/u/ada/followers", "followers", "People following Ada Lovegood"),
        ("/u/ada/following", "following", "Ada Lovegood follows"),
        ("/collections", "collections", "Saved"),
        (f"/collections/{shelf['id']}", "collection", "Reading list"),
        ("/search?q=seed", "search", "Search"),
        ("/search?type=accounts&q=bo", "search-accounts", "Search"),
        ("/search?type=saved&q=spring", "search-saved", "Search"),
        ("/history", "history", "Posts you viewed"),
        ("/recommended", "recommended", "Recommended for you"),
        ("/notifications", "notifications", "Notifications"),
        ("/settings", "settings", "Settings"),
    ]
    for path, name, heading in signed_in:
        check_page(ada, plaza.url, path, name, heading)
        # What each page is for is on it.
        if name == "home":
            for post in (text, photo, world["bo_post"]):
                wait_for(ada, f"#post-{post['id']}")
        elif name == "post":
            wait_text(ada, "[data-comments] li", "I will bring beans!")
            assert ada.find_element(By.CSS_SELECTOR, f"#post-{text['id']} [data-like] .count").text == "1"
        elif name == "post-photo":
            assert ada.execute_script("return document.querySelector('.photo img').naturalWidth") > 0
            wait_text(ada, ".post-page", "Plot 7")
        elif name == "post-link":
            wait_text(ada, ".link-card strong", "The seed library handbook")
        elif name == "post-activity":
            wait_text(ada, ".activity", "Gardening")
        elif name == "profile-photos":
            wait_for(ada, f".photo-grid a[href='/p/{photo['id']}'] img")
        elif name in ("followers", "following", "likes"):
            wait_text(ada, ".users .user-row", "bo_b")
        elif name == "collection":
            wait_text(ada, ".items", "The seed library handbook")
            wait_text(ada, ".items", "Anyone has spare basil?")
        elif name == "search":
            wait_for(ada, f".posts #post-{text['id']}")
        elif name == "search-accounts":
            wait_text(ada, ".users .user-row", "bo_b")
        elif name == "search-saved":
            wait_text(ada, ".items", "seeds for spring")
        elif name in ("history", "recommended"):
            wait_for(ada, f".history #post-{text['id']}")
        elif name == "notifications":
            wait_text(ada, ".notifications", "followed you")
            wait_text(ada, ".notifications", "liked your post")
            wait_text(ada, ".notifications", "commented on your post")

    visitor = browser_factory()
    for path, name, heading in (("/login", "login", "Sign in"), ("/signup", "signup", "Create your account"),
                                ("/explore", "explore-signed-out", "Everyone"), (f"/p/{text['id']}", "post-signed-out", None)):
        check_page(visitor, plaza.url, path, name, heading)
    check_page(visitor, plaza.url, "/no/such/page", "404", "404", status=404)
    check_page(visitor, plaza.url, "/p/1234567890", "404-post", "404", status=404)
    # A page that needs an account sends a visitor to sign in, and back afterwards.
    visitor.get(plaza.url + "/collections")
    wait_text(visitor, "h1", "Sign in")
    assert visitor.current_url == plaza.url + "/login?next=%2Fcollections"


def test_reading_works_without_javascript(plaza: PlazaServer, browser_factory):
    _, ada = plaza.register("ada")
    _, bo = plaza.register("bo_b")
    post = expect(ada.post(f"{API}/posts", json={"kind": "text", "title": "Tea in the garden", "body": "Mint or sage?"}), 201)
    expect(bo.post(f"{API}/posts/{post['id']}/comments", json={"body": "Sage, always."}), 201)
    expect(bo.put(f"{API}/users/ada/follow"), 200)

    browser = browser_factory(javascript=False)
    sign_in(browser, plaza.url, "bo_b")  # the plain form posts and redirects; no script needed
    wait_for(browser, "body[data-signed-in=bo_b]")
    card = wait_for(browser, f"#post-{post['id']}")
    assert "Tea in the garden" in card.text
    # Scripts really are off: times keep their server-rendered date and time (a script makes them relative).
    when = card.find_element(By.CSS_SELECTOR, "time").text
    assert re.search(r"\b20\d\d\b", when) and "ago" not in when and "now" not in when, when
    screenshots(browser, "nojs-home")

    browser.find_element(By.CSS_SELECTOR, f"#post-{post['id']} .post-title a").click()
    wait_text(browser, "[data-comments] li", "Sage, always.")
    assert browser.current_url == f"{plaza.url}/p/{post['id']}"
    screenshots(browser, "nojs-post")

    browser.find_element(By.CSS_SELECTOR, f"#post-{post['id']} .byline a.name").click()
    wait_text(browser, "h1", "ada")
    wait_for(browser, f".posts #post-{post['id']}")
    assert browser.find_element(By.CSS_SELECTOR, ".profile [data-follow]").text == "Unfollow"
    screenshots(browser, "nojs-profile")
    assert not console_errors(browser, ignore=[r"/favicon\.ico"])


def test_keyboard_reaches_the_skip_link_then_the_navigation_with_a_visible_focus(plaza: PlazaServer, browser_factory):
    plaza.register("ada")
    browser = browser_factory()
    sign_in(browser, plaza.url, "ada")
    browser.get(plaza.url + "/")
    wait_for(browser, "h1")

    def tab() -> dict:
        ActionChains(browser).send_keys(Keys.TAB).perform()
        return browser.execute_script("""
            const el = document.activeElement, style = getComputedStyle(el), box = el.getBoundingClientRect();
            return {tag: el.tagName, cls: el.className, href: el.getAttribute('href'), text: el.textContent.trim(),
                    inHeader: !!el.closest('header.top'), inNav: !!el.closest('nav.nav'),
                    outline: style.outlineStyle, outlineWidth: parseFloat(style.outlineWidth),
                    visible: box.width > 0 && box.height > 0 && box.right > 0 && box.bottom > 0 && box.left < innerWidth};
        """)

    first = tab()
    assert first["cls"] == "skip" and first["href"] == "#main", first
    assert first["visible"], f"the focused skip link is off screen: {first}"
    assert first["outline"] != "none" and first["outlineWidth"] > 0, first
    screenshots(browser, "keyboard-skip-link")
    assert browser.execute_script("return document.activeElement.className") == "skip"

    seen = []
    for _ in range(3):
        focused = tab()
        seen.append(focused)
        assert focused["inHeader"], f"focus left the header before the navigation: {seen}"
        assert focused["outline"] != "none" and focused["outlineWidth"] > 0, focused
        assert focused["visible"], focused
        if focused["inNav"]:
            break
    assert seen[-1]["inNav"] and seen[-1]["href"] == "/", f"the navigation was not reached: {seen}"

    # The skip link moves the focus to the content.
    browser.get(plaza.url + "/")
    wait_for(browser, "h1")
    tab()
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    assert browser.execute_script("return document.activeElement.id") == "main"
    assert not console_errors(browser, ignore=[r"/favicon\.ico"])


def test_a_map_whose_tiles_cannot_be_had_is_a_card_of_its_places(data_dir, tmp_path, browser_factory):
    """The tile server is a loopback port nothing listens on: the post page's map gives up its
    tiles and shows the place as a list, with no image left in it."""
    closed = free_port()
    server = PlazaServer(data_dir, tmp_path / "plaza.log",
                         env={"PLAZA_MAP_TILES": f"http://127.0.0.1:{closed}/{{z}}/{{x}}/{{y}}.png"})
    with server.running():
        _, ada = server.register("ada")
        post = expect(ada.post(f"{API}/posts", json={
            "kind": "text", "body": "Lunch", "location": {"latitude": 52.52, "longitude": 13.405, "name": "Mitte"}}), 201)
        browser = browser_factory()
        browser.get(f"{server.url}/p/{post['id']}")
        WebDriverWait(browser, 15).until(
            lambda d: d.execute_script("return 'offline' in document.querySelector('[data-map]').dataset"),
            "the map to give up its tiles")
        assert browser.find_elements(By.CSS_SELECTOR, ".map .map-tile") == []
        assert "drawn" not in browser.find_element(By.CSS_SELECTOR, "[data-map]").get_attribute("class")
        wait_text(browser, ".map .marker", "Mitte")
        assert not browser.find_element(By.CSS_SELECTOR, ".map-attribution").is_displayed()

