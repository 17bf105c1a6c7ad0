"""Step 22 in real browsers: hashtags are links to their page, which follows them; a content
warning hides the text and photo until opened and sensitive photos are blurred until shown; a
boost brings a post to the booster's followers as "bob boosted"; the composer suggests tags."""

from __future__ import annotations

from conftest import PlazaServer, expect, png
from web import click, console_errors, screenshots, set_value, sign_in, wait_for, wait_text

API = "/api/v1"


def test_tags_warnings_and_boosts(plaza: PlazaServer, browser_factory):
    _, ana_api = plaza.register("ana")
    _, bob_api = plaza.register("bob")
    _, cy_api = plaza.register("cyd")
    expect(cy_api.put(f"{API}/users/bob/follow"), 200)
    media = expect(ana_api.post(f"{API}/me/media", files={"file": ("bowl.png", png(120, 90), "image/png")}), 201)
    warned = expect(ana_api.post(f"{API}/posts", json={
        "kind": "photo", "body": "Who dies at the end, with #Ramen", "mediaIds": [media["id"]],
        "contentWarning": "Film spoilers", "sensitive": True}), 201)
    plain = expect(ana_api.post(f"{API}/posts", json={"kind": "text", "body": "Broth for 18 hours #ramen @bob"}), 201)
    expect(bob_api.put(f"{API}/posts/{plain['id']}/boost"), 200)

    # Cy's home: Ana's post, which Bo boosted, with its tag and mention linked.
    cy = browser_factory()
    sign_in(cy, plaza.url, "cyd")
    cy.get(plaza.url + "/")
    card = wait_for(cy, f"#post-{plain['id']}")
    assert "bob boosted" in card.find_element("css selector", ".boosted-by").text
    assert card.find_element("css selector", "a.hashtag").get_attribute("href").endswith("/tags/ramen")
    assert card.find_element("css selector", "a.u-url").get_attribute("href").endswith("/@bob")
    screenshots(cy, "social-home-boost")

    # The tag's page: both posts; the warned one closed, its photo blurred once opened.
    click(cy, f"#post-{plain['id']} a.hashtag")
    wait_text(cy, "h1", "#Ramen")
    warned_card = wait_for(cy, f"#post-{warned['id']}")
    details = warned_card.find_element("css selector", "details.cw")
    assert details.get_attribute("open") is None
    assert not warned_card.find_element("css selector", ".body").is_displayed()
    screenshots(cy, "social-tag-closed")
    click(cy, f"#post-{warned['id']} details.cw summary")
    wait_for(cy, f"#post-{warned['id']} .body")
    image = warned_card.find_element("css selector", ".media-box.sensitive img")
    assert "blur" in cy.execute_script("return getComputedStyle(arguments[0]).filter", image)
    click(cy, f"#post-{warned['id']} .reveal")
    assert cy.execute_script("return getComputedStyle(arguments[0]).filter", image) == "none"
    screenshots(cy, "social-tag-open")

    # Following the tag from its page.
    click(cy, "[data-follow-tag]")
    wait_for(cy, "[data-follow-tag][aria-pressed=true]")
    assert [t["key"] for t in expect(cy_api.get(f"{API}/me/followed-hashtags"), 200)["items"]] == ["ramen"]

    # Cy boosts Ana's photo post from the tag's page? It is public: the button counts.
    click(cy, f"#post-{plain['id']} [data-boost]")
    wait_text(cy, f"#post-{plain['id']} [data-boost][aria-pressed=true] .count", "2")

    # The composer suggests tags as one types.
    cy.get(plaza.url + "/compose")
    set_value(cy, "textarea[name=body]", "Tonight: #ra")
    wait_text(cy, "[data-tag-suggestions] [data-tag]", "#Ramen")
    screenshots(cy, "social-compose-tags")
    click(cy, "[data-tag-suggestions] [data-tag]")
    assert cy.find_element("css selector", "textarea[name=body]").get_attribute("value") == "Tonight: #Ramen "
    assert not console_errors(cy)


def test_polls_in_the_browser(plaza: PlazaServer, browser_factory):
    """Ana writes a poll in the composer; Bob votes in it from his feed and sees the results."""
    plaza.register("ana")
    _, bob_api = plaza.register("bob")
    ana = browser_factory()
    sign_in(ana, plaza.url, "ana")
    ana.get(plaza.url + "/compose")
    set_value(ana, "textarea[name=body]", "Lunch on Friday?")
    click(ana, "details[data-for~=text] summary")
    fields = ana.find_elements("css selector", "input[name=pollOption]")
    for field, option in zip(fields, ["Ramen", "Udon"]):
        field.send_keys(option)
    click(ana, "[data-add-option]")
    assert len(ana.find_elements("css selector", "input[name=pollOption]")) == 5
    screenshots(ana, "social-compose-poll")
    click(ana, "#compose button[type=submit]")
    wait_for(ana, ".post .poll-results")
    post_id = ana.current_url.rstrip("/").split("/")[-1]
    poll = expect(bob_api.get(f"{API}/posts/{post_id}"), 200)["poll"]
    assert [o["title"] for o in poll["options"]] == ["Ramen", "Udon"] and poll["multiple"] is False

    bob = browser_factory()
    sign_in(bob, plaza.url, "bob")
    bob.get(plaza.url + f"/p/{post_id}")
    wait_for(bob, f"form[data-poll='{post_id}']")
    screenshots(bob, "social-poll-vote")
    click(bob, f"form[data-poll='{post_id}'] input[value='1']")
    click(bob, f"form[data-poll='{post_id}'] button[type=submit]")
    wait_for(bob, ".poll-results li.chosen")
    assert "100%" in bob.find_element("css selector", ".poll-results li.chosen").text
    screenshots(bob, "social-poll-results")
    assert not console_errors(bob) and not console_errors(ana)
