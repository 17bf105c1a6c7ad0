"""Spaces and saved links against the real binary: a course space feeding members' home
feeds, the last space kept across a restart, and a link saved into a crate whose preview the
server fetches from a local web page (loopback allow-listed) and keeps across a restart."""

from __future__ import annotations

import time

import pytest

from conftest import LocalSite, expect, expect_error, png

PAGE = b"""<!doctype html><html><head>
<meta property="og:title" content="Knife skills, part 1">
<meta property="og:description" content="How to hold a chef's knife.">
<meta property="og:image" content="/cover.png">
<meta property="og:site_name" content="Kitchen Notes">
<title>ignored</title></head><body>...</body></html>"""


@pytest.fixture
def site():
    """A web page with OpenGraph tags and a cover image, on 127.0.0.1."""
    pages = {"/recipe": (PAGE, "text/html; charset=utf-8"), "/cover.png": (png(64, 48), "image/png")}
    with LocalSite(pages) as local:
        yield local.url("")


def test_a_course_space_feeds_its_members_and_is_reopened_after_a_restart(plaza):
    _, teacher = plaza.register("teacher")
    _, student = plaza.register("student")
    space = expect(teacher.post("/api/v1/spaces", json={"slug": "cs101", "name": "Intro to CS"}), 201)
    assert space["counts"] == {"members": 1, "posts": 0}
    expect(teacher.post("/api/v1/spaces", json={"slug": "math", "name": "Linear Algebra"}), 201)
    expect_error(student.post("/api/v1/spaces", json={"slug": "cs101", "name": "Again"}), 409, "slug_taken")
    assert expect(student.put("/api/v1/spaces/cs101/membership"), 200)["viewer"]["member"] is True

    question = expect(teacher.post("/api/v1/posts", json={"kind": "text", "title": "Week 1", "body": "What is a vector?",
                                                          "spaces": ["cs101", "math"]}), 201)
    assert sorted(s["slug"] for s in question["spaces"]) == ["cs101", "math"]
    home = expect(student.get("/api/v1/feed/home"), 200)
    assert [p["id"] for p in home["items"]] == [question["id"]], "a joined space's posts reach the home feed"
    assert [p["id"] for p in expect(student.get("/api/v1/spaces/math/feed"), 200)["items"]] == [question["id"]]
    expect_error(student.post("/api/v1/posts", json={"kind": "text", "body": "x", "spaces": ["nope"]}), 422, "unknown_space")

    expect(student.get("/api/v1/spaces/cs101"), 200)
    plaza.restart()
    assert expect(student.get("/api/v1/me/preferences"), 200)["lastSpace"] == "cs101"
    assert expect(student.get("/api/v1/spaces?member=true"), 200)["items"][0]["slug"] == "cs101"


def test_a_saved_link_gets_its_preview_and_keeps_it(plaza, site):
    _, cook = plaza.register("cook")
    _, other = plaza.register("other")
    crate = expect(cook.post("/api/v1/collections", json={"name": "Knife skills"}), 201)
    later = expect(cook.post("/api/v1/collections", json={"name": "Later"}), 201)
    item = expect(cook.post(f"/api/v1/collections/{crate['id']}/items", json={"url": site + "/recipe", "note": "practice"}), 201)
    assert item["state"] in ("pending", "ready") and item["link"]["siteName"]

    deadline = time.monotonic() + 20
    while item["state"] == "pending" and time.monotonic() < deadline:
        time.sleep(0.1)
        item = expect(cook.get(f"/api/v1/collections/{crate['id']}/items"), 200)["items"][0]
    assert item["state"] == "ready", item
    link = item["link"]
    assert (link["title"], link["description"], link["siteName"]) == ("Knife skills, part 1", "How to hold a chef's knife.", "Kitchen Notes")
    image = cook.get(link["imageURL"])
    assert image.status_code == 200 and image.headers["Content-Type"].startswith("image/"), link["imageURL"]

    moved = expect(cook.patch(f"/api/v1/collections/items/{item['id']}", json={"collectionId": later["id"]}), 200)
    assert moved["collectionId"] == later["id"]
    expect_error(other.get(f"/api/v1/collections/{later['id']}/items"), 404)
    plaza.restart()
    kept = expect(cook.get(f"/api/v1/collections/{later['id']}/items"), 200)["items"]
    assert [i["link"]["title"] for i in kept] == ["Knife skills, part 1"] and kept[0]["note"] == "practice"
    assert [c["counts"]["items"] for c in expect(cook.get("/api/v1/collections"), 200)["items"]] == [1, 0], "newest first: Later, then the emptied crate"
