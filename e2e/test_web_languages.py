"""People everywhere, in real browsers: Greta reads Plaza in German (her setting), finds a
Japanese post by a word inside its run of characters and likes it; Layla reads it in Arabic,
laid out right to left, with her posts in Arabic beside English ones. Screenshots:
language-de-*.png and language-ar-*.png."""

from __future__ import annotations

import json
from pathlib import Path

from selenium.webdriver.support.ui import WebDriverWait

from conftest import PlazaServer, expect
from web import click, console_errors, screenshots, sign_in, wait_for, wait_text

API = "/api/v1"
LOCALES = Path(__file__).resolve().parent.parent / "Sources/PlazaServer/Features/Web/Locales"


def catalog(language: str) -> dict:
    return json.loads((LOCALES / f"{language}.json").read_text(encoding="utf-8"))


def test_german_pages_a_japanese_word_and_german_counts(plaza: PlazaServer, browser_factory):
    de = catalog("de")
    _, greta_api = plaza.register("greta")
    _, kenji_api = plaza.register("kenji")
    expect(greta_api.patch(f"{API}/me/preferences", json={"language": "de", "timeZone": "Europe/Berlin"}), 200)
    ramen = expect(kenji_api.post(f"{API}/posts", json={"kind": "text", "title": "昼ごはん",
                                                         "body": "東京のラーメンが美味しい"}), 201)
    expect(greta_api.post(f"{API}/posts", json={"kind": "activity", "title": "Lauf am Fluss",
                                                "activity": {"type": "Laufen", "progress": 100}}), 201)

    greta = browser_factory()
    sign_in(greta, plaza.url, "greta")
    greta.get(plaza.url + "/")
    assert greta.execute_script("return [document.documentElement.lang, document.documentElement.dir]") == ["de", "ltr"]
    wait_text(greta, ".nav a[href='/'] .label", de["Home"])
    wait_text(greta, ".nav a[href='/notifications'] .label", de["Notifications"])
    # Times are relative in German ("gerade eben", "vor 1 Minute"), not English.
    times = [t.text for t in greta.find_elements("css selector", "main time")]
    assert times and not any("ago" in t or "now" in t for t in times), times
    screenshots(greta, "language-de-home")

    # A word inside a run of Japanese is found, and a like's count is said in German.
    greta.get(plaza.url + "/search?q=%E3%83%A9%E3%83%BC%E3%83%A1%E3%83%B3")  # ラーメン
    wait_for(greta, f"#post-{ramen['id']}")
    click(greta, f"#post-{ramen['id']} button.like")
    wait_for(greta, f"#post-{ramen['id']} button.like[aria-pressed=true]")
    one_like = de["{count} likes"]["one"].replace("{count}", "1")
    label = f"#post-{ramen['id']} button.like [data-count-label]"  # for screen readers: hidden, so read its textContent
    WebDriverWait(greta, 10).until(
        lambda d: one_like in d.execute_script("return document.querySelector(arguments[0]).textContent", label))
    screenshots(greta, "language-de-search")

    greta.get(plaza.url + "/u/greta")
    wait_for(greta, "[data-streak]")
    screenshots(greta, "language-de-profile")
    greta.get(plaza.url + "/settings")
    assert wait_for(greta, "select[name=language] option[value=de]").is_selected()
    assert wait_for(greta, "select[name=timeZone] option[selected]").text == "Europe/Berlin"
    errors = console_errors(greta, ignore=[r"/favicon\.ico"])
    assert not errors, "\n".join(e["message"] for e in errors)


def test_arabic_pages_are_laid_out_right_to_left(plaza: PlazaServer, browser_factory):
    ar = catalog("ar")
    _, layla_api = plaza.register("layla")
    _, omar_api = plaza.register("omar")
    expect(layla_api.patch(f"{API}/me", json={"displayName": "ليلى", "bio": "أحب القراءة والقهوة"}), 200)
    expect(layla_api.patch(f"{API}/me/preferences", json={"language": "ar"}), 200)
    expect(omar_api.put(f"{API}/users/layla/follow"), 200)
    expect(layla_api.post(f"{API}/posts", json={"kind": "text", "title": "صباح الخير",
                                                "body": "مَدْرَسَةٌ جديدة في القاهرة، والقهوة ☕ جاهزة."}), 201)
    expect(omar_api.post(f"{API}/posts", json={"kind": "text", "title": "Hello",
                                               "body": "An English post in an Arabic page."}), 201)

    layla = browser_factory()
    sign_in(layla, plaza.url, "layla")
    layla.get(plaza.url + "/explore")
    assert layla.execute_script("return [document.documentElement.lang, document.documentElement.dir]") == ["ar", "rtl"]
    wait_text(layla, ".nav a[href='/explore'] .label", ar["Explore"])
    # Mirrored: the brand sits at the right, and each post's text takes its own direction.
    brand_right, width = layla.execute_script(
        "const r = document.querySelector('.brand').getBoundingClientRect(); return [r.right, window.innerWidth]")
    assert brand_right > width / 2, (brand_right, width)
    directions = layla.execute_script(
        "return [...document.querySelectorAll('.post .body')].map(p => getComputedStyle(p).direction)")
    assert set(directions) == {"rtl", "ltr"}, directions
    screenshots(layla, "language-ar-explore")

    # Searching in Arabic folds the marks and the teh marbuta: "مدرسة" finds "مَدْرَسَةٌ".
    layla.get(plaza.url + "/search?q=%D9%85%D8%AF%D8%B1%D8%B3%D8%A9")
    wait_text(layla, ".post .post-title", "صباح الخير")
    layla.get(plaza.url + "/u/layla")
    wait_text(layla, "#profile-name", "ليلى")
    screenshots(layla, "language-ar-profile")
    layla.get(plaza.url + "/notifications")
    wait_for(layla, ".notification")
    screenshots(layla, "language-ar-notifications")
    errors = console_errors(layla, ignore=[r"/favicon\.ico"])
    assert not errors, "\n".join(e["message"] for e in errors)
