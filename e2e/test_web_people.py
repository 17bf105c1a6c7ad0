"""Seed 001's friends, in real browsers: Ana locks her account in settings, Ben asks to follow
her (his button says Requested), Ana approves him from the inbox her notification links to,
they are friends, and Ben mutes her. Each step goes through the pages and their scripts."""

from __future__ import annotations

from conftest import PlazaServer, expect
from web import click, console_errors, screenshots, sign_in, wait_for, wait_gone, wait_text

API = "/api/v1"


def test_a_locked_account_approves_a_follow_request(plaza: PlazaServer, browser_factory):
    _, ana_api = plaza.register("ana")
    _, ben_api = plaza.register("ben")
    expect(ana_api.put(f"{API}/users/ben/follow"), 200)

    # Ana ticks "Locked account" in settings and saves her profile.
    ana = browser_factory()
    sign_in(ana, plaza.url, "ana")
    ana.get(plaza.url + "/settings")
    locked = wait_for(ana, "input[name=locked]")
    assert not locked.is_selected()
    locked.click()
    click(ana, "form[data-api='PATCH /api/v1/me'] button[type=submit]")
    wait_text(ana, "#toast", "Profile saved")
    assert expect(ana_api.get(f"{API}/me"), 200)["locked"] is True

    # Ben's follow button asks instead of following.
    ben = browser_factory()
    sign_in(ben, plaza.url, "ben")
    ben.get(plaza.url + "/u/ana")
    wait_text(ben, ".profile .chip", "Locked")
    click(ben, ".profile [data-follow=ana]")
    wait_text(ben, ".profile [data-follow=ana][aria-pressed=true]", "Requested")
    screenshots(ben, "people-requested")
    assert expect(ben_api.get(f"{API}/users/ana"), 200)["viewer"]["requested"] is True

    # Ana's notification opens her inbox, where she approves him.
    ana.get(plaza.url + "/notifications")
    click(ana, ".notification.kind-follow_request a")
    wait_for(ana, "#request-ben")
    assert ana.current_url == plaza.url + "/follow-requests"
    screenshots(ana, "people-follow-requests")
    click(ana, "#request-ben button.primary")
    wait_gone(ana, "#request-ben")
    assert expect(ana_api.get(f"{API}/me/follow-requests"), 200)["items"] == []

    # Ben follows her now, and they are friends.
    ben.get(plaza.url + "/u/ana")
    wait_text(ben, ".profile [data-follow=ana][aria-pressed=true]", "Unfollow")
    click(ben, "a[href='/u/ana/friends']")
    wait_text(ben, ".users .user-row .name", "ben")

    # Ben mutes Ana from her profile; the button turns to Unmute after the reload.
    ben.get(plaza.url + "/u/ana")
    click(ben, "[data-mute=ana]")
    wait_text(ben, "[data-mute=ana]", "Unmute")
    assert expect(ben_api.get(f"{API}/users/ana"), 200)["viewer"]["muting"] is True

    for driver in (ana, ben):
        errors = console_errors(driver, ignore=[r"/favicon\.ico"])
        assert not errors, "\n".join(e["message"] for e in errors)


def test_someone_downloads_their_data_then_deletes_their_account_and_changes_their_mind(
    plaza: PlazaServer, browser_factory
):
    _, ana_api = plaza.register("anouk")
    _, ben_api = plaza.register("benno")
    expect(ana_api.post(f"{API}/posts", json={"kind": "text", "body": "Leaving soon"}), 201)

    ana = browser_factory()
    sign_in(ana, plaza.url, "anouk")
    ana.get(plaza.url + "/settings")
    # The download link works with the browser's session: a ZIP archive named for her.
    link = wait_for(ana, "a[data-export]")
    answer = ana.execute_async_script(
        """const done = arguments[arguments.length - 1];
        fetch(arguments[0]).then(async (r) => done([r.status, r.headers.get('content-type'),
            r.headers.get('content-disposition'), (await r.arrayBuffer()).byteLength]));""",
        link.get_attribute("href"),
    )
    assert answer[0] == 200 and answer[1] == "application/zip", answer
    assert answer[2].startswith('attachment; filename="plaza-anouk-') and answer[3] > 500, answer

    # A wrong password deletes nothing; the right one hides the account and signs her out.
    form = "form[data-delete-account]"
    wait_for(ana, f"{form} input[name=currentPassword]").send_keys("not my password")
    click(ana, f"{form} button[type=submit]")
    wait_text(ana, f"{form} .error", "current password")
    expect(ben_api.get(f"{API}/users/anouk"), 200)
    field = wait_for(ana, f"{form} input[name=currentPassword]")
    field.clear()
    field.send_keys("correct horse battery")
    click(ana, f"{form} button[type=submit]")
    wait_for(ana, "[data-deleting]")
    screenshots(ana, "account-deleting")
    expect(ben_api.get(f"{API}/users/anouk"), 404)
    expect(ana_api.get(f"{API}/me"), 401)

    # Signing in again within the grace period keeps the account.
    sign_in(ana, plaza.url, "anouk")
    expect(ben_api.get(f"{API}/users/anouk"), 200)

    # The one failed load is the wrong password's 403.
    assert not console_errors(ana, ignore=[r"/api/v1/me - Failed to load resource: .* 403"])
