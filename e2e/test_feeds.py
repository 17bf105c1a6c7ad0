"""The feeds to subscribe to, read by a real feed reader's parser (feedparser) from the real
binary: a person's, an open space's and a hashtag's RSS 2.0 and Atom, with their public posts alone, titles,
links, dates and photos as enclosures; ETag and If-None-Match; 404 for a closed space."""

from __future__ import annotations

import calendar
import datetime

import feedparser
import requests

from conftest import PlazaServer, expect, png

API = "/api/v1"
HOSTILE = "Tea & <b>cake</b> ]]> \u0001 مرحبا 😀"


def read(plaza: PlazaServer, path: str, content_type: str) -> feedparser.FeedParserDict:
    response = requests.get(plaza.url + path, timeout=10)
    assert response.status_code == 200, f"{path}: {response.status_code} {response.text[:500]}"
    assert response.headers["Content-Type"] == f"{content_type}; charset=utf-8"
    parsed = feedparser.parse(response.content, response_headers={"content-type": content_type})
    assert not parsed.bozo, f"{path}: {parsed.get('bozo_exception')}\n{response.text[:2000]}"
    return parsed


def seed(plaza: PlazaServer) -> dict:
    _, ada = plaza.register("ada")
    _, bo = plaza.register("bo_b")
    expect(ada.patch(f"{API}/me", json={"displayName": "Ada Lovegood", "bio": "Gardens and tea."}), 200)
    expect(ada.post(f"{API}/spaces", json={"slug": "garden", "name": "Community Garden"}), 201)
    expect(ada.post(f"{API}/spaces", json={"slug": "club", "name": "Club", "visibility": "closed"}), 201)
    text = expect(ada.post(f"{API}/posts", json={
        "kind": "text", "title": "Seed swap", "body": HOSTILE + "\n\nhttps://example.org/seeds #Seeds #東京", "spaces": ["garden"]}), 201)
    expect(ada.post(f"{API}/posts", json={"kind": "text", "body": "for followers", "audience": "followers"}), 201)
    media = expect(ada.post(f"{API}/me/media", files={"file": ("tomato.png", png(96, 64), "image/png")}), 201)
    photo = expect(ada.post(f"{API}/posts", json={"kind": "photo", "mediaIds": [media["id"]]}), 201)
    expect(bo.put(f"{API}/spaces/garden/membership"), 200)
    expect(bo.post(f"{API}/posts", json={"kind": "text", "body": "members only", "spaces": ["garden"],
                                         "audience": "members"}), 201)
    return {"text": text, "photo": photo, "media": media}


def milliseconds(rfc3339: str) -> int:
    """Milliseconds since 1970 of the API's `2026-12-06T07:18:16.123Z`."""
    return int(datetime.datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp() * 1000)


def test_feeds_read_by_feedparser(plaza: PlazaServer):
    world = seed(plaza)
    text, photo = world["text"], world["photo"]
    for suffix, content_type, version in [(".rss", "application/rss+xml", "rss20"),
                                          (".atom", "application/atom+xml", "atom10")]:
        person = read(plaza, "/@ada" + suffix, content_type)
        assert person.version == version
        assert person.feed.title == "Posts by Ada Lovegood (@ada)"
        assert person.feed.link.endswith("/@ada")
        assert [e.link.rsplit("/", 1)[-1] for e in person.entries] == [photo["id"], text["id"]]
        assert [e.id for e in person.entries] == [e.link for e in person.entries]
        assert person.entries[0].title == "Photo by @ada"
        assert person.entries[1].title == "Seed swap"
        summary = person.entries[1].summary
        assert "Tea &amp; &lt;b&gt;cake&lt;/b&gt; ]]&gt;" in summary and "مرحبا 😀" in summary, summary
        assert 'href="https://example.org/seeds"' in summary
        enclosures = person.entries[0].enclosures
        assert len(enclosures) == 1 and enclosures[0].type == world["media"]["contentType"], enclosures
        assert f"/media/{world['media']['id']}/original" in enclosures[0].href
        assert requests.get(enclosures[0].href, timeout=10).status_code == 200
        published = calendar.timegm(person.entries[1].published_parsed) * 1000
        assert abs(published - milliseconds(text["createdAt"])) < 1000
        assert person.entries[1].author == "Ada Lovegood"

        space = read(plaza, "/s/garden" + suffix, content_type)
        assert space.feed.title.startswith("Community Garden")
        assert [e.link.rsplit("/", 1)[-1] for e in space.entries] == [text["id"]]
        assert requests.get(plaza.url + "/s/club" + suffix, timeout=10).status_code == 404
        for tag in ["seeds", "%E6%9D%B1%E4%BA%AC"]:
            tagged = read(plaza, f"/tags/{tag}" + suffix, content_type)
            assert [e.link.rsplit("/", 1)[-1] for e in tagged.entries] == [text["id"]], tag
        assert 'rel="tag"' in tagged.entries[0].summary and "/tags/Seeds" in tagged.entries[0].summary
        assert requests.get(plaza.url + "/@nobody" + suffix, timeout=10).status_code == 404


def test_etag_and_if_none_match(plaza: PlazaServer):
    _, ada = plaza.register("ada")
    expect(ada.post(f"{API}/posts", json={"kind": "text", "body": "first"}), 201)
    first = requests.get(plaza.url + "/@ada.atom", timeout=10)
    etag = first.headers["ETag"]
    assert etag.startswith('"') and "public" in first.headers["Cache-Control"]
    again = requests.get(plaza.url + "/@ada.atom", headers={"If-None-Match": etag}, timeout=10)
    assert again.status_code == 304 and again.content == b""
    # feedparser sends the ETag it was given and reports the 304.
    parsed = feedparser.parse(plaza.url + "/@ada.atom", etag=etag)
    assert parsed.status == 304, parsed
    expect(ada.post(f"{API}/posts", json={"kind": "text", "body": "second"}), 201)
    changed = requests.get(plaza.url + "/@ada.atom", headers={"If-None-Match": etag}, timeout=10)
    assert changed.status_code == 200 and changed.headers["ETag"] != etag


def test_pages_link_their_feeds(plaza: PlazaServer):
    _, ada = plaza.register("ada")
    expect(ada.post(f"{API}/spaces", json={"slug": "garden", "name": "Community Garden"}), 201)
    profile = requests.get(plaza.url + "/@ada", timeout=10).text
    assert '<link rel="alternate" type="application/rss+xml"' in profile and 'href="/@ada.atom"' in profile
    space = requests.get(plaza.url + "/s/garden", timeout=10).text
    assert 'href="/s/garden.rss"' in space
