"""Mastodon's client API, used by a real Mastodon client: Mastodon.py (PyPI) against the real
binary. The app registers itself, the person signs in and allows it through Plaza's own sign-in
and consent pages (the forms posted by the test, as a browser would), and the app then toots
with a photo, pages timelines through Link headers, favourites, reads notifications, searches,
and hears a new status on the streaming API (Server-Sent Events).

The server runs with PLAZA_PUBLIC_URL set to its own loopback address, so the addresses it
hands out (OAuth endpoints, streaming, Link headers) are the ones the client connects to.
"""

from __future__ import annotations

import html
import re
import threading
from pathlib import Path
from urllib.parse import urljoin

import pytest
import requests
from mastodon import Mastodon, StreamListener

from conftest import PlazaServer, expect, free_port, png

OOB = "urn:ietf:wg:oauth:2.0:oob"
SCOPES = ["read", "write", "follow", "push"]
PASSWORD = "correct horse battery"


@pytest.fixture
def server(tmp_path: Path):
    port = free_port()
    data = tmp_path / "data"
    data.mkdir()
    plaza = PlazaServer(data, tmp_path / "plaza.log", env={"PLAZA_PUBLIC_URL": PlazaServer.url_for(port)}, port=port)
    with plaza.running():
        yield plaza


def hidden_fields(page: str) -> dict[str, str]:
    return {html.unescape(name): html.unescape(value)
            for name, value in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page)}


def authorize_in_browser(server: PlazaServer, url: str, login: str) -> str:
    """What a person does in the browser: opens the app's authorization URL, signs in on Plaza's
    page, allows the app on the consent page, and reads the code (out-of-band redirect)."""
    browser = requests.Session()
    first = browser.get(url, allow_redirects=False, timeout=30)
    assert first.status_code == 303, first.text
    sign_in_page = browser.get(urljoin(server.url, first.headers["Location"]), timeout=30)
    fields = hidden_fields(sign_in_page.text)
    assert fields["next"].startswith("/oauth/authorize?"), fields
    signed_in = browser.post(server.url + "/login", data={**fields, "login": login, "password": PASSWORD},
                             allow_redirects=False, timeout=30)
    assert signed_in.status_code == 303 and signed_in.headers["Location"] == fields["next"], signed_in.text
    consent = browser.get(server.url + fields["next"], timeout=30)
    assert consent.status_code == 200 and "Authorize Mastodon.py e2e" in consent.text
    allowed = browser.post(server.url + "/oauth/authorize", data={**hidden_fields(consent.text), "decision": "allow"},
                           allow_redirects=False, timeout=30)
    assert allowed.status_code == 200, allowed.text
    code = re.search(r'id="oauth-code" class="code" readonly value="([^"]+)"', allowed.text)
    assert code, allowed.text
    return code.group(1)


def signed_in_client(server: PlazaServer, login: str) -> Mastodon:
    client_id, client_secret = Mastodon.create_app(
        "Mastodon.py e2e", api_base_url=server.url, scopes=SCOPES, redirect_uris=OOB,
        website="https://github.com/halcy/Mastodon.py")
    app = Mastodon(client_id=client_id, client_secret=client_secret, api_base_url=server.url)
    url = app.auth_request_url(scopes=SCOPES, redirect_uris=OOB, allow_http=True)
    code = authorize_in_browser(server, url, login)
    app.log_in(code=code, redirect_uri=OOB, scopes=SCOPES, allow_http=True)
    return app


class Collector(StreamListener):
    def __init__(self):
        self.updates: list = []
        self.notifications: list = []
        self.heartbeats = 0
        self.arrived = threading.Condition()

    def handle_heartbeat(self):
        with self.arrived:
            self.heartbeats += 1
            self.arrived.notify_all()

    def on_update(self, status):
        with self.arrived:
            self.updates.append(status)
            self.arrived.notify_all()

    def on_notification(self, notification):
        with self.arrived:
            self.notifications.append(notification)
            self.arrived.notify_all()

    def wait(self, condition, timeout: float = 60) -> bool:
        """Waits for `condition`; the timeout only guards against a hang."""
        with self.arrived:
            return self.arrived.wait_for(condition, timeout=timeout)


def test_mastodon_py_toots_pages_favourites_searches_and_streams(server: PlazaServer):
    server.register("ana")
    server.register("bea")
    ana = signed_in_client(server, "ana")
    bea = signed_in_client(server, "bea")

    assert ana.retrieve_mastodon_version() == "4.3.0"
    me = ana.account_verify_credentials()
    assert me.acct == "ana" and me.username == "ana"

    # Toot with a photo (POST /api/v2/media, then a status with its id).
    media = ana.media_post(png(64, 48), mime_type="image/png", description="a test pattern")
    photo = ana.status_post("A toot with a photo #pattern", media_ids=[media])
    assert photo.media_attachments[0].type == "image"
    assert photo.media_attachments[0].meta.original.width == 64
    assert photo.visibility == "public"

    # A retried toot (Mastodon.py's idempotency_key, as an app sends after a lost answer) is one
    # status; a key of Mastodon's own shape (long, with spaces) is taken as it is.
    key = "retry " + "x" * 100
    once = ana.status_post("Posted once however often it is sent", idempotency_key=key)
    again = ana.status_post("Posted once however often it is sent", idempotency_key=key)
    assert again.id == once.id
    ana.status_delete(once.id)

    # Bea follows Ana and reads her home feed two at a time, by the Link headers.
    relationship = bea.account_follow(me.id)
    assert relationship.following
    posted = [photo.id] + [ana.status_post(f"Toot number {n}").id for n in range(1, 6)]
    first = bea.timeline_home(limit=2)
    assert len(first) == 2
    everything = bea.fetch_remaining(first)
    assert [status.id for status in everything] == list(reversed(posted))

    # Favourite, and the notification it makes.
    favourited = bea.status_favourite(photo.id)
    assert favourited.favourited and favourited.favourites_count == 1
    notifications = ana.notifications()
    kinds = sorted(n.type for n in notifications)
    assert kinds == ["favourite", "follow"], kinds
    favourite = next(n for n in notifications if n.type == "favourite")
    assert favourite.account.acct == "bea" and favourite.status.id == photo.id

    # A reply is a comment, in the toot's context.
    reply = bea.status_post("Lovely pattern", in_reply_to_id=photo.id)
    context = ana.status_context(photo.id)
    assert [status.id for status in context.descendants] == [reply.id]

    # The links statuses and accounts carry open the web app's pages, signed out.
    assert photo.url == photo.uri == f"{server.url}/@ana/{photo.id}"
    assert me.url == f"{server.url}/@ana"
    assert reply.url == f"{server.url}/@ana/{photo.id}#c-{reply.id}"
    for url in [photo.url, me.url, reply.url, reply.account.url, favourite.status.url, favourite.account.url,
                photo.tags[0].url]:
        page = requests.get(url, timeout=30)
        assert page.status_code == 200, (url, page.status_code)
        assert page.headers["Content-Type"].startswith("text/html"), url
    assert f'id="c-{reply.id}"' in requests.get(reply.url, timeout=30).text

    # Search.
    found = bea.search_v2("pattern", result_type="statuses")
    assert photo.id in [status.id for status in found.statuses]
    people = bea.search_v2("ana", result_type="accounts")
    assert [account.acct for account in people.accounts] == ["ana"]

    # The streaming API (Server-Sent Events): Bea hears Ana's next toot.
    listener = Collector()
    handle = bea.stream_user(listener, run_async=True, reconnect_async=False)
    try:
        # The server subscribes before it sends the opening comment: once that arrived,
        # every later status reaches the stream.
        assert listener.wait(lambda: listener.heartbeats >= 1), "the stream opened"
        streamed = ana.status_post("Streamed toot")
        assert listener.wait(lambda: any(status.id == streamed.id for status in listener.updates))
        heard = next(status for status in listener.updates if status.id == streamed.id)
        assert heard.account.acct == "ana"
        assert heard.content == "<p>Streamed toot</p>"
        assert heard.created_at == streamed.created_at
    finally:
        handle.close()

    # Revoking the app's token ends it.
    requests.post(server.url + "/oauth/revoke", timeout=30, data={
        "client_id": bea.client_id, "client_secret": bea.client_secret, "token": bea.access_token,
    }).raise_for_status()
    with pytest.raises(Exception):
        bea.account_verify_credentials()


def test_mastodon_py_filters_v2_warn_and_hide(server: PlazaServer):
    """Filters v2 as Mastodon.py makes them: one keyword a filter (Plaza keeps one phrase a
    filter); a warned status carries `filtered`, a hidden one is left out of the timeline."""
    server.register("ana")
    server.register("bea")
    ana = signed_in_client(server, "ana")
    bea = signed_in_client(server, "bea")
    bea.account_follow(ana.account_verify_credentials().id)

    warn = bea.create_filter_v2("Spoilers", ["home", "thread"], "warn", expires_in=3600,
                                keywords_attributes=[{"keyword": "spoiler", "whole_word": True}])
    assert warn.filter_action == "warn" and warn.title == "spoiler"
    assert sorted(warn.context) == ["home", "thread"] and warn.expires_at is not None
    assert [k.keyword for k in warn.keywords] == ["spoiler"]
    hide = bea.create_filter_v2("Secrets", ["home"], "hide",
                                keywords_attributes=[{"keyword": "secret", "whole_word": False}])
    assert sorted(f.id for f in bea.filters_v2()) == sorted([warn.id, hide.id])
    assert [k.id for k in bea.filter_keywords_v2(warn.id)] == [warn.id]
    with pytest.raises(Exception):
        bea.create_filter_v2("Two", ["home"], "warn", keywords_attributes=[{"keyword": "a"}, {"keyword": "b"}])

    spoiled = ana.status_post("A big Spoiler: the butler did it")
    kept_secret = ana.status_post("Our secretive plans")
    plain = ana.status_post("Nothing to see")
    home = bea.timeline_home()
    ids = [status.id for status in home]
    assert spoiled.id in ids and plain.id in ids and kept_secret.id not in ids
    warned = next(status for status in home if status.id == spoiled.id)
    assert warned.filtered[0].filter.id == warn.id
    assert warned.filtered[0].filter.filter_action == "warn"
    assert warned.filtered[0].keyword_matches == ["spoiler"]
    assert not next(status for status in home if status.id == plain.id).filtered
    # Ana's own timeline is hers: her filters, none.
    assert all(not status.filtered for status in ana.timeline_home())

    bea.delete_filter_v2(warn.id)
    bea.delete_filter_v2(hide.id)
    assert bea.filters_v2() == []
    assert {status.id for status in bea.timeline_home()} >= {spoiled.id, kept_secret.id, plain.id}


def test_mastodon_py_tags_reblogs_spoilers_and_edits(server: PlazaServer):
    """Step 22 through Mastodon.py: a spoiler and a sensitive flag, a tag's timeline and
    following it, a reblog in a follower's home with the post inside, edits with their history
    and source, the author's reblog and the reader's update notifications, a poll voted in."""
    for name in ("ana", "bea", "cy_d"):
        server.register(name)
    ana, bea, cyd = (signed_in_client(server, name) for name in ("ana", "bea", "cy_d"))
    cyd.account_follow(bea.account_verify_credentials().id)

    toot = ana.status_post("Slurping #Ramen with friends", spoiler_text="food", sensitive=True)
    assert toot.spoiler_text == "food" and toot.sensitive is True
    assert [t.name for t in toot.tags] == ["Ramen"] and toot.tags[0].url.endswith("/tags/Ramen")
    assert [s.id for s in bea.timeline_hashtag("ramen")] == [toot.id]
    followed = bea.tag_follow("ramen")
    assert followed.following is True
    assert [t.name for t in bea.followed_tags()] == ["Ramen"]

    reblog = bea.status_reblog(toot.id)
    assert reblog.reblog.id == toot.id and reblog.account.acct == "bea"
    home = cyd.timeline_home()
    assert [s.id for s in home] == [reblog.id] and home[0].reblog.id == toot.id
    assert [a.acct for a in ana.status_reblogged_by(toot.id)] == ["bea"]
    assert ana.notifications(types=["reblog"])[0].account.acct == "bea"

    ana.status_update(toot.id, "Slurping #udon now", spoiler_text="")
    history = bea.status_history(toot.id)
    assert [h.spoiler_text for h in history] == ["food", ""]
    assert "udon" in history[-1].content
    source = ana.status_source(toot.id)
    assert source.text == "Slurping #udon now" and source.spoiler_text == ""
    assert bea.notifications(types=["update"])[0].status.id == toot.id

    bea.status_unreblog(toot.id)
    assert cyd.timeline_home() == []
    assert [t.name for t in bea.trending_tags()] == ["Ramen"]
    # A poll, made and voted in through Mastodon.py as an app would.
    asked = ana.status_post("Lunch?", poll=ana.make_poll(["ramen", "udon", "soba"], expires_in=600, multiple=True))
    assert [o.title for o in asked.poll.options] == ["ramen", "udon", "soba"] and asked.poll.multiple is True
    unseen = bea.poll(asked.poll.id)
    assert unseen.voted is False and unseen.options[0].votes_count is None
    voted = bea.poll_vote(asked.poll.id, [0, 2])
    assert voted.voted is True and voted.own_votes == [0, 2]
    assert [o.votes_count for o in voted.options] == [1, 0, 1] and voted.voters_count == 1
    assert cyd.status(asked.id).poll.options[1].votes_count is None


def test_mastodon_py_photos_of_followers_only_statuses_load_without_credentials(server: PlazaServer):
    """An app's image loader sends no Authorization: the photo of a followers-only status reaches
    a follower through its capability URL, and stops once they no longer follow."""
    server.register("ana")
    server.register("bea")
    ana = signed_in_client(server, "ana")
    bea = signed_in_client(server, "bea")
    bea.account_follow(ana.account_verify_credentials().id)
    media = ana.media_post(png(64, 48), mime_type="image/png", description="for friends")
    toot = ana.status_post("Only for my followers", media_ids=[media], visibility="private")
    assert toot.visibility == "private"

    seen = bea.status(toot.id)
    url = seen.media_attachments[0].url
    assert "&r=" in url and "&s=" in url, url
    loaded = requests.get(url, timeout=30)
    assert loaded.status_code == 200 and loaded.headers["Content-Type"].startswith("image/")
    assert len(loaded.content) > 100
    assert loaded.headers["Cache-Control"].startswith("private, max-age=")
    assert requests.get(seen.media_attachments[0].preview_url, timeout=30).status_code == 200
    assert seen.media_attachments[0].remote_url is None
    # Without the signature the key alone serves nothing to a client without credentials.
    assert requests.get(url.split("&r=")[0], timeout=30).status_code == 404

    bea.account_unfollow(ana.account_verify_credentials().id)
    assert requests.get(url, timeout=30).status_code == 404


def test_mastodon_py_lists_paging_and_reports(server: PlazaServer):
    """The lists an app shows on a profile and in its settings, paged by the Link header past the
    first page (numeric max_id), and a report the moderators then see."""
    server.register("ana")
    server.register("bea")
    fans = []
    for n in range(5):
        _, fan = server.register(f"fan{n}")
        expect(fan.put("/api/v1/users/ana/follow"), 200)
        fans.append(f"fan{n}")
    ana = signed_in_client(server, "ana")
    bea = signed_in_client(server, "bea")
    me = ana.account_verify_credentials()

    # Followers, two a page: the Link header's max_id is digits, and fetch_remaining walks it.
    first = bea.account_followers(me.id, limit=2)
    assert len(first) == 2
    assert re.fullmatch(r"\d+", str(first._pagination_next["max_id"])), first._pagination_next
    assert [a.acct for a in bea.fetch_remaining(first)] == list(reversed(fans))

    # Bookmarks and favourites, newest first.
    posts = [bea.status_post(f"Bea's toot {n}") for n in range(3)]
    for status in (posts[1], posts[0], posts[2]):
        ana.status_favourite(status.id)
        ana.status_bookmark(status.id)
    expected = [posts[2].id, posts[0].id, posts[1].id]
    for listing in (ana.favourites, ana.bookmarks):
        page = listing(limit=2)
        assert [s.id for s in ana.fetch_remaining(page)] == expected
    ana.status_unbookmark(posts[0].id)
    assert [s.id for s in ana.bookmarks()] == [posts[2].id, posts[1].id]

    # Blocks and mutes: listed until undone.
    fan_ids = {a.acct: a.id for a in bea.fetch_remaining(first)}
    ana.account_block(fan_ids["fan1"])
    ana.account_mute(fan_ids["fan2"])
    assert [a.acct for a in ana.blocks()] == ["fan1"]
    assert [a.acct for a in ana.mutes()] == ["fan2"]
    ana.account_unblock(fan_ids["fan1"])
    ana.account_unmute(fan_ids["fan2"])
    assert ana.blocks() == [] and ana.mutes() == []
    assert ana.account_featured_tags(me.id) == []

    # A report of one of Bea's statuses, as an app files one (the path is Plaza's own report's too).
    bea_id = bea.account_verify_credentials().id
    report = ana.report(bea_id, status_ids=[posts[1].id], comment="Spam", category="spam")
    assert report.category == "spam" and report.target_account.id == bea_id
    assert [str(i) for i in report.status_ids] == [str(posts[1].id)]


def test_mastodon_py_lists_notes_and_familiar_followers(server: PlazaServer):
    """Lists as Mastodon.py makes them: only followed accounts go in; the list's timeline is their
    posts, paged past the first page; an exclusive list's accounts leave the home timeline; another
    person's list is not found. A private note on an account, and familiar followers."""
    for name in ("ana", "bea", "cat", "dan"):
        server.register(name)
    ana, bea, cat, dan = (signed_in_client(server, name) for name in ("ana", "bea", "cat", "dan"))
    bea_id, cat_id, dan_id = (client.account_verify_credentials().id for client in (bea, cat, dan))
    ana.account_follow(bea_id)
    ana.account_follow(cat_id)
    bea.account_follow(dan_id)

    friends = ana.list_create("Friends", replies_policy="followed", exclusive=True)
    assert friends.title == "Friends" and friends.replies_policy == "followed" and friends.exclusive
    with pytest.raises(Exception):
        ana.list_accounts_add(friends.id, [dan_id])  # not followed: 422
    ana.list_accounts_add(friends.id, [bea_id])
    assert [account.id for account in ana.list_accounts(friends.id)] == [bea_id]
    assert [lst.id for lst in ana.account_lists(bea_id)] == [friends.id]
    assert [lst.id for lst in ana.lists()] == [friends.id]

    posts = [bea.status_post(f"bea {n}").id for n in range(5)]
    cat_post = cat.status_post("cat").id
    page = ana.timeline_list(friends.id, limit=2)
    seen = [status.id for status in page]
    while (page := ana.fetch_next(page)) is not None and len(page) > 0:
        seen += [status.id for status in page]
    assert seen == list(reversed(posts))
    # Exclusive: Bea's posts are in the list, not at home.
    home = [status.id for status in ana.timeline_home()]
    assert cat_post in home and not set(posts) & set(home)

    # Bea cannot see or change Ana's list.
    with pytest.raises(Exception):
        bea.list(friends.id)
    with pytest.raises(Exception):
        bea.timeline_list(friends.id)

    renamed = ana.list_update(friends.id, "Pals", replies_policy="list", exclusive=False)
    assert renamed.title == "Pals" and not renamed.exclusive
    assert set(posts) <= {status.id for status in ana.timeline_home(limit=40)}
    ana.list_accounts_delete(friends.id, [bea_id])
    assert list(ana.list_accounts(friends.id)) == []
    ana.list_delete(friends.id)
    assert ana.lists() == []

    relationship = ana.account_note_set(bea_id, "Met at the café")
    assert relationship.note == "Met at the café"
    assert ana.account_relationships(bea_id)[0].note == "Met at the café"
    assert bea.account_relationships(ana.account_verify_credentials().id)[0].note == ""

    # Mastodon.py sends the ids as a JSON body on the GET; Ice Cubes and the official app as `id[]=`.
    familiar = ana.account_familiar_followers([dan_id, cat_id])
    assert [entry.id for entry in familiar] == [dan_id, cat_id]
    assert [account.acct for account in familiar[0].accounts] == ["bea"]
    assert familiar[1].accounts == []
    by_query = requests.get(f"{server.url}/api/v1/accounts/familiar_followers?id[]={dan_id}&id[]={cat_id}",
                            headers={"Authorization": f"Bearer {ana.access_token}"}, timeout=30).json()
    assert [entry["id"] for entry in by_query] == [str(dan_id), str(cat_id)]


def test_mastodon_py_notifications_by_account_instance_bits_and_suggestions(server: PlazaServer):
    """v1 `account_id`, v2 paging through numeric Link ids, unread counts, the instance's
    smaller endpoints and Plaza's own suggestions, as Mastodon.py asks for them."""
    for name in ("ana", "bea", "cid", "dee"):
        server.register(name)
    ana = signed_in_client(server, "ana")
    bea = signed_in_client(server, "bea")
    cid = signed_in_client(server, "cid")
    posts = [ana.status_post(f"Post {n}") for n in range(4)]
    for client, post in zip((bea, cid, bea, cid), posts):
        client.status_favourite(post.id)
    bea_id = bea.account_verify_credentials().id
    from_bea = ana.notifications(account_id=bea_id)
    assert len(from_bea) == 2 and all(n.account.id == bea_id for n in from_bea)
    assert {n.status.id for n in from_bea} == {posts[0].id, posts[2].id}
    # Two at a time, by the Link headers, both ways.
    first = ana.notifications(limit=2)
    everything = ana.fetch_remaining(first)
    assert len(everything) == 4
    newest_first = [n.id for n in everything]
    above = ana.notifications(min_id=newest_first[-1], limit=2)
    assert [n.id for n in above] == newest_first[1:3]
    headers = {"Authorization": f"Bearer {ana.access_token}"}
    grouped = requests.get(server.url + "/api/v2/notifications?limit=1", headers=headers, timeout=30)
    next_url = grouped.links["next"]["url"]
    assert re.search(r"max_id=\d+(&|$)", next_url), next_url
    count = requests.get(server.url + "/api/v1/notifications/unread_count", headers=headers, timeout=30).json()
    assert count == {"count": 4}

    assert ana.instance_peers() == []
    extended = ana.instance_extended_description()
    assert extended.content.startswith("<p>")
    languages = requests.get(server.url + "/api/v1/instance/languages", timeout=30).json()
    assert {"code": "en", "name": "English"} in languages

    # Dee follows Bea, who follows Cid: Cid is suggested to Dee.
    dee = signed_in_client(server, "dee")
    dee.account_follow(bea_id)
    bea.account_follow(cid.account_verify_credentials().id)
    suggested = dee.suggestions()
    assert "cid" in [getattr(s, "acct", None) or s.account.acct for s in suggested]
