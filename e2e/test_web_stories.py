"""One whole user story per seed app, driven through the web app in real browsers (headless
Chromium). The API only sets up what is not the point of a story (accounts, spaces); the
story's own steps go through the pages and their scripts. Every browser is a separate person.
"""

from __future__ import annotations

import re
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from conftest import LocalSite, PlazaServer, expect, png
from web import (click, console_errors, fill, screenshots, set_value, sign_in, track_streams, wait_for,
                 wait_gone, wait_live, wait_text)

API = "/api/v1"
PASSWORD = "correct horse battery"
LISBON = (38.7223, -9.1393)
NEAR_LISBON = (38.7313, -9.1393)  # 1.0 km north
CHIADO = (38.71, -9.1393)  # 1.4 km south
BERLIN = "52.52,13.40"


# --- helpers -------------------------------------------------------------------------------

def write_png(folder: Path, name: str, colour: tuple[int, int, int], size: int = 64) -> Path:
    path = folder / name
    path.write_bytes(png(size, size, colour))
    return path


def pin_offset(driver, css: str) -> tuple[int, int]:
    """Where the pin of marker `css` points (its bottom centre), from the centre of its map, in
    whole pixels."""
    return tuple(driver.execute_script("""
        const marker = document.querySelector(arguments[0]).closest('.marker');
        const map = marker.closest('.map').getBoundingClientRect();
        const pin = marker.getBoundingClientRect();
        return [Math.round(pin.left + pin.width / 2 - (map.left + map.width / 2)),
                Math.round(pin.bottom - (map.top + map.height / 2))];
    """, css))


def post_id_from_url(driver) -> str:
    """The id of the post page the browser landed on (/p/{id})."""
    WebDriverWait(driver, 15).until(lambda d: re.search(r"/p/\d+$", d.current_url),
                                    f"not on a post page: {driver.current_url}")
    return re.search(r"/p/(\d+)$", driver.current_url).group(1)


def image_loaded(driver, css: str, timeout: float = 10):
    """Waits until the image matching `css` has been decoded (naturalWidth > 0)."""
    image = wait_for(driver, css, timeout)
    WebDriverWait(driver, timeout).until(
        lambda d: d.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0", image),
        f"{css} did not load on {driver.current_url}")
    return image


def grant_location(driver, origin: str, latitude: float, longitude: float) -> None:
    """Lets `origin` read the position, and makes the browser be at latitude, longitude."""
    driver.execute_cdp_cmd("Browser.grantPermissions", {"origin": origin, "permissions": ["geolocation"]})
    driver.execute_cdp_cmd("Emulation.setGeolocationOverride",
                           {"latitude": latitude, "longitude": longitude, "accuracy": 50})


def mark_page(driver) -> None:
    """Marks the current document; `still_same_page` is false once the page has been reloaded."""
    driver.execute_script("window.__plazaNoReload = true")


def still_same_page(driver) -> bool:
    return driver.execute_script("return window.__plazaNoReload === true")


def no_console_errors(*drivers) -> None:
    for driver in drivers:
        errors = console_errors(driver, ignore=[r"/favicon\.ico"])
        assert not errors, f"console errors on {driver.current_url}:\n" + "\n".join(e["message"] for e in errors)


# --- 1. Course ------------------------------------------------------------------------------

def test_course_a_question_in_two_spaces_gets_a_live_answer(plaza: PlazaServer, browser_factory):
    # The teacher sets up the course spaces (not the point of the story).
    _, teacher = plaza.register("teacher")
    for slug, name in (("cs101", "CS 101"), ("math", "Mathematics")):
        expect(teacher.post(f"{API}/spaces", json={"slug": slug, "name": name, "description": f"The {name} course"}), 201)
    plaza.register("ben")

    # Ana signs up in her browser.
    ana = browser_factory()
    track_streams(ana)
    ana.get(plaza.url + "/signup")
    screenshots(ana, "course-signup")
    fill(ana, "input[name=username]", "ana")
    fill(ana, "input[name=displayName]", "Ana Student")
    fill(ana, "input[name=email]", "ana@example.com")
    fill(ana, "input[name=password]", PASSWORD)
    click(ana, "form[action='/signup'] button[type=submit]")
    wait_for(ana, "body[data-signed-in=ana]")
    assert ana.current_url == plaza.url + "/"

    # She joins both spaces with their Join buttons.
    for slug in ("cs101", "math"):
        ana.get(f"{plaza.url}/s/{slug}")
        join = wait_for(ana, f"[data-join={slug}]")
        assert join.get_attribute("aria-pressed") == "false" and join.text == "Join"
        join.click()
        wait_text(ana, f"[data-join={slug}][aria-pressed=true]", "Leave")
    screenshots(ana, "course-space")
    assert sorted(a.get_attribute("data-space") for a in ana.find_elements(By.CSS_SELECTOR, ".switcher a[data-space]")) == ["cs101", "math"]

    # She asks a question in both spaces.
    ana.get(plaza.url + "/compose")
    assert wait_for(ana, "input[name=kind][value=text]").is_selected()
    fill(ana, "input[name=title]", "How do I prove a loop invariant?")
    fill(ana, "textarea[name=body]", "The sum loop in exercise 3 — what is the invariant?")
    click(ana, "#compose details summary")
    for slug in ("cs101", "math"):
        click(ana, f"input[name=spaces][value={slug}]")
    screenshots(ana, "course-compose")
    click(ana, "#compose button[type=submit]")
    post_id = post_id_from_url(ana)
    wait_text(ana, f"#post-{post_id} .post-title", "How do I prove a loop invariant?")
    chips = [a.text for a in ana.find_elements(By.CSS_SELECTOR, f"#post-{post_id} .meta .chip")]
    assert sorted(chips) == ["CS 101", "Mathematics"], chips

    # It is on both space pages.
    for slug in ("cs101", "math"):
        ana.get(f"{plaza.url}/s/{slug}")
        wait_text(ana, f"#post-{post_id} .post-title", "loop invariant")

    # Ana waits on her post page, its realtime stream open.
    ana.get(f"{plaza.url}/p/{post_id}")
    wait_for(ana, "[data-no-comments]")
    wait_live(ana)
    assert ana.find_element(By.ID, "unread").text == ""
    mark_page(ana)

    # Ben signs in, opens the question from the math space and answers.
    ben = browser_factory()
    sign_in(ben, plaza.url, "ben")
    ben.get(plaza.url + "/s/math")
    click(ben, f"#post-{post_id} .post-title a")
    wait_for(ben, f"[data-post-page='{post_id}']")
    answer = "Try: after k steps, s equals the sum of the first k items."
    fill(ben, "textarea[name=body]", answer)
    click(ben, ".comment-form button[type=submit]")
    wait_text(ben, "[data-comments] li", answer)
    screenshots(ben, "course-post-ben")

    # Without a reload, Ana sees the answer and her unread badge.
    wait_text(ana, "[data-comments] li", answer)
    wait_text(ana, "#unread", "1")
    assert ana.find_element(By.ID, "unread").get_attribute("aria-label") == "1 unread"
    assert ana.find_elements(By.CSS_SELECTOR, "[data-no-comments]") == []
    assert still_same_page(ana), "Ana's post page was reloaded"
    screenshots(ana, "course-post-ana")

    no_console_errors(ana, ben)


# --- 2. Activity ----------------------------------------------------------------------------

def test_activity_friends_see_progress_live_and_done_on_the_heatmap(plaza: PlazaServer, browser_factory):
    plaza.register("cleo")
    plaza.register("dan")
    cleo, dan = browser_factory(), browser_factory()
    track_streams(cleo)
    sign_in(cleo, plaza.url, "cleo")
    sign_in(dan, plaza.url, "dan")

    # They follow each other from their profiles.
    for driver, other in ((cleo, "dan"), (dan, "cleo")):
        driver.get(f"{plaza.url}/u/{other}")
        follow = wait_for(driver, f".profile [data-follow={other}]")
        assert follow.text == "Follow"
        follow.click()
        wait_text(driver, f".profile [data-follow={other}][aria-pressed=true]", "Unfollow")
        wait_text(driver, "[data-followers]", "1")
    dan.refresh()
    wait_text(dan, ".profile .chip", "Follows you")
    screenshots(dan, "activity-profile-follow")

    # Cleo reads her home feed, live.
    cleo.get(plaza.url + "/")
    wait_for(cleo, ".posts[data-live=home]")
    wait_live(cleo)
    mark_page(cleo)

    # Dan logs a run.
    dan.get(plaza.url + "/compose")
    click(dan, "input[name=kind][value=activity]")
    wait_for(dan, "input[name=activityType]")
    # An activity may carry a photo; a link's field stays hidden.
    assert dan.find_element(By.CSS_SELECTOR, "[data-for='photo activity']").is_displayed()
    assert not dan.find_element(By.CSS_SELECTOR, "[data-for=link]").is_displayed()
    fill(dan, "input[name=activityType]", "Running")
    set_value(dan, "input[name=emoji]", "🏃")
    set_value(dan, "input[name=color]", "#e4572e")
    set_value(dan, "input[name=progress]", "60")
    wait_text(dan, "[data-progress-out]", "60%")
    fill(dan, "textarea[name=body]", "Half-marathon training, week 3")
    screenshots(dan, "activity-compose")
    click(dan, "#compose button[type=submit]")
    post_id = post_id_from_url(dan)
    wait_text(dan, f"#post-{post_id} .activity", "Running")
    assert dan.find_element(By.CSS_SELECTOR, f"#post-{post_id} .activity progress").get_attribute("value") == "60"
    ring = dan.find_element(By.CSS_SELECTOR, f"#post-{post_id} .activity .ring")
    # The ring's dash is the progress, drawn by the server; its colour is the activity's.
    fill_circle = ring.find_element(By.CSS_SELECTOR, ".ring-fill")
    assert fill_circle.get_attribute("stroke-dasharray") == "60 100"
    assert dan.execute_script("return getComputedStyle(arguments[0]).stroke", fill_circle) == "rgb(228, 87, 46)"
    assert dan.find_elements(By.CSS_SELECTOR, f"#post-{post_id} .activity .done") == []

    # It appears at the top of Cleo's home feed without a reload.
    first = wait_for(cleo, f".posts[data-live=home] > article#post-{post_id}")
    assert cleo.execute_script("return document.querySelector('.posts[data-live=home] > article').id") == f"post-{post_id}"
    assert "60%" in first.text and "Running" in first.text
    # The activity takes its colour.
    assert cleo.execute_script(
        "return getComputedStyle(arguments[0]).getPropertyValue('--accent').trim()",
        first.find_element(By.CSS_SELECTOR, ".activity")) == "#e4572e"
    assert still_same_page(cleo)
    screenshots(cleo, "activity-home-live")

    # Dan finishes: Edit → progress 100.
    click(dan, f"#post-{post_id} .post-menu summary")
    click(dan, f"#post-{post_id} .post-menu a[href='/p/{post_id}/edit']")
    wait_for(dan, "form[data-edit]")
    assert dan.find_element(By.CSS_SELECTOR, "input[name='activity.progress']").get_attribute("value") == "60"
    set_value(dan, "input[name='activity.progress']", "100")
    wait_text(dan, "[data-progress-out]", "100%")
    screenshots(dan, "activity-edit")
    click(dan, "form[data-edit] button[type=submit]")
    WebDriverWait(dan, 10).until(lambda d: d.current_url == f"{plaza.url}/p/{post_id}")
    wait_text(dan, f"#post-{post_id} .activity .done", "Done")
    assert dan.find_element(By.CSS_SELECTOR, f"#post-{post_id} .activity .done svg.check").is_displayed()
    screenshots(dan, "activity-post-done")

    # His heatmap counts the completed day.
    today = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    dan.get(f"{plaza.url}/u/dan")
    wait_text(dan, "[data-completed]", "1")
    assert dan.find_element(By.CSS_SELECTOR, "[data-completed]").text == "1"
    cell = wait_for(dan, f".heatmap i[data-date='{today}']")
    assert re.search(r"\bl[34]\b", cell.get_attribute("class")), cell.get_attribute("class")
    assert dan.find_elements(By.CSS_SELECTOR, ".heatmap i.l3, .heatmap i.l4")
    screenshots(dan, "activity-profile-heatmap")

    no_console_errors(cleo, dan)


# --- 3. Crates ------------------------------------------------------------------------------

PAGE = """<!doctype html><html><head><meta charset="utf-8">
<title>Blue Train</title>
<meta property="og:title" content="Blue Train by John Coltrane">
<meta property="og:description" content="Hard bop on Blue Note, 1957, a crate digger's staple.">
<meta property="og:site_name" content="Local Records">
</head><body><h1>Blue Train</h1></body></html>"""


def test_crates_save_a_link_move_it_and_find_it(plaza: PlazaServer, browser_factory):
    plaza.register("eve")
    eve = browser_factory()
    sign_in(eve, plaza.url, "eve")

    # Two collections.
    eve.get(plaza.url + "/collections")
    wait_text(eve, ".empty", "No collections yet")
    for name in ("Crate", "Records"):
        fill(eve, "form[data-api='POST /api/v1/collections'] input[name=name]", name)
        click(eve, "form[data-api='POST /api/v1/collections'] button[type=submit]")
        wait_text(eve, ".collections a.name", name)
    screenshots(eve, "crates-collections")

    with LocalSite({"/records/blue-train": (PAGE.encode(), "text/html; charset=utf-8")}) as site:
        # Eve opens Crate and saves a link.
        next(a for a in eve.find_elements(By.CSS_SELECTOR, ".collections a.name") if a.text == "Crate").click()
        wait_text(eve, "#collection-heading", "Crate")
        fill(eve, "input[name=url]", site.url("/records/blue-train"))
        fill(eve, "input[name=note]", "for Saturday")
        click(eve, "form[data-api$='/items'] button[type=submit]")
        wait_for(eve, ".items li.item")

        # The preview is fetched in the background: reload until its title shows.
        def preview_shown(driver):
            if any("Blue Train by John Coltrane" in e.text for e in driver.find_elements(By.CSS_SELECTOR, ".item .link-card strong")):
                return True
            driver.refresh()
            return False
        WebDriverWait(eve, 20, poll_frequency=0.3).until(preview_shown, "the link preview did not arrive")
    item = wait_for(eve, ".items li.item")
    item_id = item.get_attribute("data-item")
    assert "Hard bop on Blue Note" in item.text and "for Saturday" in item.text
    screenshots(eve, "crates-crate")

    # Move it to Records.
    select = Select(eve.find_element(By.CSS_SELECTOR, f"#item-{item_id} select[name=collectionId]"))
    select.select_by_visible_text("Records")
    click(eve, f"#item-{item_id} .item-actions form button[type=submit]")
    wait_gone(eve, f"#item-{item_id}")
    eve.refresh()
    wait_text(eve, ".empty", "Nothing saved here yet")

    eve.get(plaza.url + "/collections")
    next(a for a in eve.find_elements(By.CSS_SELECTOR, ".collections a.name") if a.text == "Records").click()
    wait_text(eve, "#collection-heading", "Records")
    wait_text(eve, f"#item-{item_id} .link-card strong", "Blue Train by John Coltrane")
    screenshots(eve, "crates-records")

    # And it is found among her saved items by a word of its title.
    eve.get(plaza.url + "/search?type=saved")
    fill(eve, "input[name=q]", "Coltrane")
    click(eve, "form[data-search] button[type=submit]")
    wait_text(eve, f"#item-{item_id} .link-card strong", "Blue Train by John Coltrane")
    assert "type=saved" in eve.current_url and "q=Coltrane" in eve.current_url
    screenshots(eve, "crates-search-saved")

    no_console_errors(eve)


# --- 4. Memes -------------------------------------------------------------------------------

def test_memes_a_photo_is_liked_found_and_in_the_grid(plaza: PlazaServer, browser_factory, tmp_path: Path):
    plaza.register("finn")
    _, gus_api = plaza.register("gus")

    finn = browser_factory()
    sign_in(finn, plaza.url, "finn")
    finn.get(plaza.url + "/compose")
    click(finn, "input[name=kind][value=photo]")
    wait_text(finn, "[data-body-label]", "Caption")
    wide = tmp_path / "wide.png"
    wide.write_bytes(png(160, 80, (255, 120, 0)))
    wait_for(finn, "input[name=photo]").send_keys(str(wide))
    preview = image_loaded(finn, "img[data-preview]")
    assert finn.execute_script("return arguments[0].naturalWidth", preview) == 160
    # Cropped square before it goes up: the frame starts as the middle square, the keyboard
    # moves it to the left edge, and the photo that replaces the chosen one is 80 × 80.
    click(finn, "[data-crop='0']")
    canvas = wait_for(finn, "dialog[open] canvas")
    wait_text(finn, "dialog[open] [data-crop-size]", "80 × 80 pixels")
    for _ in range(30):
        canvas.send_keys(Keys.ARROW_LEFT)
    screenshots(finn, "memes-crop")
    click(finn, "dialog[open] [data-crop-apply]")
    WebDriverWait(finn, 10).until(lambda d: d.execute_script(
        "const f = document.querySelector('input[name=photo]').files[0]; return f && f.size && f.type === 'image/png' "
        "&& document.querySelector('img[data-preview]').naturalWidth === 80"))
    assert finn.execute_script("return document.querySelector('img[data-preview]').naturalHeight") == 80
    fill(finn, "textarea[name=body]", "When the build is green on Friday flamingo")
    screenshots(finn, "memes-compose")
    click(finn, "#compose button[type=submit]")
    post_id = post_id_from_url(finn)
    image_loaded(finn, f"#post-{post_id} .photo img")
    wait_text(finn, f"#post-{post_id} .body", "flamingo")
    stored = requests.get(f"{plaza.url}/api/v1/posts/{post_id}", timeout=10).json()["media"][0]
    assert (stored["width"], stored["height"]) == (80, 80), stored
    # Its BlurHash, the placeholder painted while it loads, decodes to the picture's colour
    # (away from the picture's white diagonal: the top right corner).
    colour = finn.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const img = document.querySelector(arguments[0]);
        import(document.querySelector('script[type=module]').src).then((app) => {
          const p = app.blurhashPixels(img.dataset.blurhash, 4, 4);
          done(p ? [p[12], p[13], p[14]] : null);
        });""", f"#post-{post_id} .photo img")
    assert colour and abs(colour[0] - 255) < 30 and abs(colour[1] - 120) < 30 and colour[2] < 80, colour
    screenshots(finn, "memes-post")

    # Gus likes it from Explore.
    gus = browser_factory()
    sign_in(gus, plaza.url, "gus")
    gus.get(plaza.url + "/explore")
    like = wait_for(gus, f"#post-{post_id} [data-like]")
    assert like.get_attribute("aria-pressed") == "false" and like.find_element(By.CSS_SELECTOR, ".count").text == "0"
    like.click()
    wait_for(gus, f"#post-{post_id} [data-like][aria-pressed=true]")
    wait_text(gus, f"#post-{post_id} [data-like] .count", "1")
    screenshots(gus, "memes-explore-liked")
    gus.refresh()  # the like is stored, not only shown
    assert wait_for(gus, f"#post-{post_id} [data-like]").get_attribute("aria-pressed") == "true"

    # Anyone finds it by a word of its caption.
    gus.get(plaza.url + "/search")
    fill(gus, "input[name=q]", "flamingo")
    click(gus, "form[data-search] button[type=submit]")
    wait_for(gus, f".posts #post-{post_id}")
    screenshots(gus, "memes-search")
    # Opening it from the results is a click, which Recommended ranks by.
    click(gus, f".posts #post-{post_id} a.when")
    wait_for(gus, f"[data-post-page='{post_id}']")
    WebDriverWait(gus, 10).until(
        lambda _: any(item["post"]["id"] == post_id and item["clicks"] == 1
                      for item in expect(gus_api.get(f"{API}/me/history"), 200)["items"]),
        "the click from the search results was not recorded")
    visitor = requests.get(plaza.url + "/search?q=flamingo", timeout=10)  # signed out, too
    assert visitor.status_code == 200 and f'id="post-{post_id}"' in visitor.text, visitor.status_code

    # It is in Finn's photo grid.
    finn.get(plaza.url + "/u/finn?kind=photo")
    image_loaded(finn, f".photo-grid a[href='/p/{post_id}'] img")
    assert finn.find_element(By.CSS_SELECTOR, ".tabs a[aria-current=page]").text == "Photos"
    screenshots(finn, "memes-profile-grid")

    no_console_errors(finn, gus)


# --- 5. Food --------------------------------------------------------------------------------

def test_food_a_photo_with_a_place_is_found_near_me(plaza: PlazaServer, browser_factory, tmp_path: Path):
    plaza.register("hana")
    plaza.register("ivan")
    picture = write_png(tmp_path, "nata.png", (240, 200, 90))

    hana = browser_factory()
    sign_in(hana, plaza.url, "hana")
    grant_location(hana, plaza.url, *LISBON)
    hana.get(plaza.url + "/compose")
    click(hana, "input[name=kind][value=photo]")
    wait_for(hana, "input[name=photo]").send_keys(str(picture))
    image_loaded(hana, "img[data-preview]")
    fill(hana, "textarea[name=body]", "Pastel de nata, still warm")
    click(hana, "#compose details summary")
    fill(hana, "input[name=placeName]", "Manteigaria")
    click(hana, "[data-locate]")
    wait_text(hana, "[data-location-status]", "Location added")
    assert hana.find_element(By.CSS_SELECTOR, "input[name=latitude]").get_attribute("value") == "38.722300"
    assert hana.find_element(By.CSS_SELECTOR, "input[name=longitude]").get_attribute("value") == "-9.139300"
    screenshots(hana, "food-compose")
    click(hana, "#compose button[type=submit]")
    post_id = post_id_from_url(hana)
    wait_text(hana, f"#post-{post_id} .place", "Manteigaria")
    image_loaded(hana, f"#post-{post_id} .photo img")
    # The post's place beside it: a card with its name and position (the tests run without a
    # tile server, so no map: a lone pin on a blank map would say nothing more).
    wait_text(hana, ".place-card", "38.7223, -9.1393")
    assert hana.find_elements(By.CSS_SELECTOR, ".place-card .map") == []
    screenshots(hana, "food-post")

    # Editing the post moves it: a place name needs a location, then it is saved with it.
    hana.get(f"{plaza.url}/p/{post_id}/edit")
    click(hana, "[data-place] [data-unlocate]")
    fill(hana, "input[name='location.name']", "Manteigaria Chiado")
    click(hana, "form[data-edit] button[type=submit]")
    wait_text(hana, "form[data-edit] .error", "Use my location")
    grant_location(hana, plaza.url, *CHIADO)
    click(hana, "[data-place] [data-locate]")
    wait_text(hana, "[data-place] [data-location-status]", "Location added")
    click(hana, "form[data-edit] button[type=submit]")
    wait_text(hana, f"#post-{post_id} .place", "Manteigaria Chiado")
    wait_text(hana, ".place-card", "38.71, -9.1393")

    # Ivan, a kilometre away, looks near himself.
    ivan = browser_factory()
    sign_in(ivan, plaza.url, "ivan")
    grant_location(ivan, plaza.url, *NEAR_LISBON)
    ivan.get(plaza.url + "/search")
    click(ivan, "[data-near-me]")
    wait_for(ivan, f".posts #post-{post_id}", timeout=15)
    assert "near=38.73130%2C-9.13930" in ivan.current_url, ivan.current_url
    assert ivan.find_element(By.CSS_SELECTOR, "input[data-near]").get_attribute("value") == "38.73130,-9.13930"
    # The results on a map around him: he is at its centre, the place 2.4 km (20 pixels) south.
    wait_for(ivan, ".map.drawn")
    assert pin_offset(ivan, ".map .marker.here") == (0, 0)
    dx, dy = pin_offset(ivan, f".map .marker a[href='/p/{post_id}']")
    assert abs(dx) <= 1 and 15 < dy < 25, (dx, dy)
    screenshots(ivan, "food-search-near")

    # Among people he follows only: nobody yet, then Hana once he follows her.
    click(ivan, "input[name=followed]")
    click(ivan, "form[data-search] button[type=submit]")
    wait_text(ivan, ".empty", "No results")
    assert "followed=true" in ivan.current_url
    ivan.get(f"{plaza.url}/u/hana")
    click(ivan, "[data-follow]")
    wait_text(ivan, "[data-follow]", "Unfollow")
    ivan.get(f"{plaza.url}/search?type=posts&near=38.7313,-9.1393&followed=true")
    wait_for(ivan, f".posts #post-{post_id}")

    # Far away (Berlin), it is not found.
    fill(ivan, "input[data-near]", BERLIN)
    click(ivan, "form[data-search] button[type=submit]")
    wait_text(ivan, ".empty", "No results")
    assert "near=52.52%2C13.40" in ivan.current_url, ivan.current_url
    assert ivan.find_elements(By.ID, f"post-{post_id}") == []
    screenshots(ivan, "food-search-far")

    no_console_errors(hana, ivan)


def test_food_a_recipe_video_plays_once_processed(plaza: PlazaServer, browser_factory, tmp_path: Path):
    """A video goes through the composer like a photo; its author sees it processed, then
    everyone can play it in the feed, seeking through Range requests."""
    plaza.register("vera")
    plaza.register("walt")
    clip = tmp_path / "recipe.mov"
    subprocess.run(
        ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i",
         "testsrc=size=640x360:rate=25", "-f", "lavfi", "-i", "sine=frequency=330", "-t", "3", "-c:v", "libx264",
         "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", "-y", str(clip)],
        check=True)

    vera = browser_factory()
    sign_in(vera, plaza.url, "vera")
    vera.get(plaza.url + "/compose")
    click(vera, "input[name=kind][value=photo]")
    wait_for(vera, "input[name=photo]").send_keys(str(clip))
    wait_for(vera, "video[data-preview]")
    fill(vera, "textarea[name=body]", "Shakshuka in three seconds")
    click(vera, "#compose button[type=submit]")
    post_id = post_id_from_url(vera)
    # Processing, then the card is swapped for the playable one by the page's script.
    video = wait_for(vera, f"#post-{post_id} video.video", timeout=60)
    WebDriverWait(vera, 20).until(
        lambda d: d.execute_script("return arguments[0].readyState >= 1 && arguments[0].duration > 2", video),
        "the video's metadata did not load")
    screenshots(vera, "food-video-post")

    walt = browser_factory()
    sign_in(walt, plaza.url, "walt")
    walt.get(plaza.url + "/explore")
    video = wait_for(walt, f"#post-{post_id} video.video")
    WebDriverWait(walt, 20).until(
        lambda d: d.execute_script("return arguments[0].readyState >= 1", video), "metadata did not load")
    # Seek near the end: the browser asks for a span of the file and gets it.
    walt.execute_script("arguments[0].currentTime = 2.5", video)
    WebDriverWait(walt, 20).until(
        lambda d: d.execute_script("return !arguments[0].seeking && arguments[0].currentTime >= 2.4", video),
        "seeking did not complete")
    screenshots(walt, "food-video-explore")
    source = video.get_attribute("src")
    span = requests.get(source, headers={"Range": "bytes=0-15"}, timeout=10)
    assert span.status_code == 206 and span.headers["Content-Range"].startswith("bytes 0-15/"), span.status_code

    no_console_errors(vera, walt)


def test_crates_save_into_a_new_collection_in_one_step(plaza: PlazaServer, browser_factory):
    """A post, then a pasted link, saved with the collection picked or made in the same form."""
    _, gil = plaza.register("gil")
    _, fay_api = plaza.register("fay")
    post_id = expect(gil.post(f"{API}/posts", json={"kind": "text", "body": "A crate-worthy find"}), 201)["id"]
    fay = browser_factory()
    sign_in(fay, plaza.url, "fay")
    fay.get(plaza.url + f"/p/{post_id}")
    click(fay, ".actions [data-dialog=save-sheet]")
    # No collection yet: the form asks for the new one's name.
    wait_for(fay, "form[data-save] [data-new-collection]:not([hidden])")
    fill(fay, "form[data-save] input[name=newName]", "Inspiration")
    click(fay, "form[data-save] button[type=submit]")
    wait_text(fay, "#toast", "Saved to Inspiration")
    collections = expect(fay_api.get(f"{API}/collections"), 200)["items"]
    assert [c["name"] for c in collections] == ["Inspiration"], collections
    crate = collections[0]["id"]
    items = expect(fay_api.get(f"{API}/collections/{crate}/items"), 200)["items"]
    assert [i["post"]["id"] for i in items if i.get("post")] == [post_id], items

    # A pasted link from Saved, into the collection just made (picked by default).
    fay.get(plaza.url + "/collections")
    wait_for(fay, "form[data-save] input[name=url]")
    assert not fay.find_element(By.CSS_SELECTOR, "form[data-save] [data-new-collection]").is_displayed()
    fill(fay, "form[data-save] input[name=url]", "http://127.0.0.1:9/some/record")
    click(fay, "form[data-save] button[type=submit]")
    wait_text(fay, "#toast", "Saved to Inspiration")
    items = expect(fay_api.get(f"{API}/collections/{crate}/items"), 200)["items"]
    assert len(items) == 2 and any(i.get("link", {}) and i["link"]["url"] == "http://127.0.0.1:9/some/record" for i in items), items
    screenshots(fay, "crates-save-in-one-step")
    no_console_errors(fay)


def test_course_a_space_is_created_with_its_picture(plaza: PlazaServer, browser_factory, tmp_path: Path):
    plaza.register("tara")
    picture = write_png(tmp_path, "course.png", (30, 90, 200), size=200)
    tara = browser_factory()
    sign_in(tara, plaza.url, "tara")
    tara.get(plaza.url + "/spaces")
    fill(tara, "form[data-api='POST /api/v1/spaces'] input[name=name]", "Biology 201")
    fill(tara, "form[data-api='POST /api/v1/spaces'] input[name=slug]", "bio201")
    wait_for(tara, "form[data-api='POST /api/v1/spaces'] input[type=file]").send_keys(str(picture))
    click(tara, "form[data-api='POST /api/v1/spaces'] button[type=submit]")
    WebDriverWait(tara, 15).until(lambda d: d.current_url.endswith("/s/bio201"), "not on the new space")
    image_loaded(tara, "img.space-image")
    tara.get(plaza.url + "/spaces")
    image_loaded(tara, ".space-row img.space-thumb")
    screenshots(tara, "course-space-with-picture")
    no_console_errors(tara)
