"""Closed courses and moderation, in real browsers (seed 000's Q&A board, seed 003's reports).

1. A teacher makes a closed course, approves a student who asks to join, and the student's
   question is read by classmates only: an outsider reaches it by no page and no API call.
2. A person reports a post; an administrator resolves the report from /admin by suspending its
   author, whose browser is signed out and whose sign-in is refused with a clear message; the
   reporter is told the report was resolved.
Accounts and what is not the point of a story are set up through the API.
"""

from __future__ import annotations

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from conftest import PlazaServer, expect, expect_error, run_plaza
from web import click, console_errors, fill, page_status, screenshots, sign_in, wait_for, wait_gone, wait_text

API = "/api/v1"
PASSWORD = "correct horse battery"


def no_console_errors(*drivers) -> None:
    for driver in drivers:
        # A page the test opens to prove it is refused answers 404, which Chromium logs.
        errors = console_errors(driver, ignore=[r"/favicon\.ico", r"404 \(Not Found\)"])
        assert not errors, f"console errors on {driver.current_url}:\n" + "\n".join(e["message"] for e in errors)


def test_a_closed_course_admits_a_student_whose_question_only_classmates_read(plaza: PlazaServer, browser_factory):
    plaza.register("teacher")
    _, ana_api = plaza.register("ana")
    _, ben_api = plaza.register("ben")
    _, zoe_api = plaza.register("zoe")

    # The teacher starts a closed course from the spaces page.
    teacher = browser_factory()
    sign_in(teacher, plaza.url, "teacher")
    teacher.get(plaza.url + "/spaces")
    fill(teacher, "#new-space-heading ~ form input[name=name]", "Algorithms")
    fill(teacher, "#new-space-heading ~ form input[name=slug]", "algo")
    Select(wait_for(teacher, "#new-space-heading ~ form select[name=visibility]")).select_by_value("closed")
    click(teacher, "#new-space-heading ~ form button[type=submit]")
    wait_text(teacher, "#feed-heading", "Algorithms")
    assert teacher.current_url == plaza.url + "/s/algo"
    wait_text(teacher, ".space-head .tag", "Closed")
    screenshots(teacher, "moderation-closed-course")

    # Ana asks to join in her browser; Ben asks through the API.
    ana = browser_factory()
    sign_in(ana, plaza.url, "ana")
    ana.get(plaza.url + "/s/algo")
    assert ana.find_elements(By.CSS_SELECTOR, "[data-join=algo]") == [], "a closed space has no Join button"
    click(ana, "button[data-api='POST /api/v1/spaces/algo/requests']")
    wait_text(ana, ".space-head button[disabled]", "Requested")
    expect(ben_api.post(f"{API}/spaces/algo/requests"), 202)
    expect_error(ana_api.post(f"{API}/posts", json={"kind": "text", "body": "early", "spaces": ["algo"]}), 403,
                 "not_member")

    # The teacher approves both from the manage page.
    teacher.get(plaza.url + "/s/algo")
    click(teacher, "a[href='/s/algo/manage']")
    wait_for(teacher, "#request-ana")
    wait_for(teacher, "#request-ben")
    screenshots(teacher, "moderation-join-requests")
    for name in ("ana", "ben"):
        click(teacher, f"#request-{name} button.primary")
        wait_gone(teacher, f"#request-{name}")
    members = [row.text for row in teacher.find_elements(By.CSS_SELECTOR, "#members-heading ~ .row")]
    assert any("@ana" in row for row in members) and any("@ben" in row for row in members), members

    # A latecomer gets an invite link for one person, good for a week.
    fill(teacher, "#invite-heading ~ form input[name=maxUses]", "1")
    Select(wait_for(teacher, "#invite-heading ~ form select[name=expiresAt]")).select_by_value("7")
    click(teacher, "#invite-heading ~ form button[type=submit]")
    link = wait_text(teacher, "[data-invite-url]", "/join/").text
    code = link.rsplit("/", 1)[-1]
    _, cat_api = plaza.register("cat")
    assert expect(cat_api.post(f"{API}/spaces/join/{code}"), 200)["viewer"]["member"] is True
    expect_error(zoe_api.post(f"{API}/spaces/join/{code}"), 404, "invite_invalid")  # it was for one person

    # Ana asks a question from the space's "Post here"; it is for members whatever she picked.
    ana.get(plaza.url + "/s/algo")
    click(ana, "a[href='/compose?space=algo']")
    fill(ana, "input[name=title]", "Is Dijkstra greedy?")
    fill(ana, "textarea[name=body]", "Homework 4 asks why Dijkstra's algorithm is correct. Quixotic hint?")
    click(ana, "#compose details summary")
    assert wait_for(ana, "input[name=spaces][value=algo]").is_selected(), "the space is preselected"
    click(ana, "#compose button[type=submit]")
    wait_text(ana, ".post .post-title", "Is Dijkstra greedy?")
    post_id = ana.current_url.rsplit("/", 1)[-1]
    wait_text(ana, f"#post-{post_id} .byline .tag", "Members")
    screenshots(ana, "moderation-members-question")

    # Ben, a classmate, reads it on the space page and finds it by search.
    ben = browser_factory()
    sign_in(ben, plaza.url, "ben")
    ben.get(plaza.url + "/s/algo")
    wait_text(ben, f"#post-{post_id} .post-title", "Is Dijkstra greedy?")
    ben.get(plaza.url + "/search?q=quixotic")
    wait_for(ben, f"#post-{post_id}")
    assert expect(ben_api.get(f"{API}/posts/{post_id}"), 200)["audience"] == "members"

    # Zoe, not a member, reaches it by no page ...
    zoe = browser_factory()
    sign_in(zoe, plaza.url, "zoe")
    zoe.get(plaza.url + "/s/algo")
    wait_for(zoe, "#feed-heading")
    assert zoe.find_elements(By.CSS_SELECTOR, f"#post-{post_id}") == []
    zoe.get(f"{plaza.url}/p/{post_id}")
    wait_for(zoe, ".error-page")
    assert page_status(zoe) in (0, 404) and "Dijkstra" not in zoe.page_source
    for page in ("/explore", "/search?q=quixotic", "/u/ana"):
        zoe.get(plaza.url + page)
        wait_for(zoe, "main")
        assert zoe.find_elements(By.CSS_SELECTOR, f"#post-{post_id}") == [], page
    # ... and by no API call, signed in or not.
    anonymous = plaza.client()
    for client in (zoe_api, anonymous):
        assert client.get(f"{API}/posts/{post_id}").status_code == 404
        assert client.get(f"{API}/posts/{post_id}/comments").status_code == 404
        for path in ("/feed/global", "/spaces/algo/feed", "/users/ana/posts", "/search/posts?q=quixotic"):
            items = expect(client.get(API + path), 200)["items"]
            assert post_id not in [item["id"] for item in items], path

    no_console_errors(teacher, ana, ben, zoe)


def test_an_administrator_resolves_a_report_by_suspending_its_author(data_dir, tmp_path, browser_factory):
    made = run_plaza("user", "create", "--username", "xena", "--email", "xena@example.com",
                     "--password", PASSWORD, "--admin", data_dir=data_dir)
    assert made.returncode == 0, made.stdout + made.stderr
    plaza = PlazaServer(data_dir, tmp_path / "plaza.log")
    plaza.start()
    try:
        _, cleo_api = plaza.register("cleo")
        _, ben_api = plaza.register("ben")
        spam = expect(cleo_api.post(f"{API}/posts", json={"kind": "text", "title": "Cheap followers",
                                                          "body": "Buy ten thousand followers today"}), 201)
        cleo = browser_factory()
        sign_in(cleo, plaza.url, "cleo")

        # Ben reports the post from its page.
        ben = browser_factory()
        sign_in(ben, plaza.url, "ben")
        ben.get(f"{plaza.url}/p/{spam['id']}")
        click(ben, ".post-menu summary")
        click(ben, ".post-menu [data-dialog=report-sheet]")
        Select(wait_for(ben, "#report-sheet select[name=reason]")).select_by_value("spam")
        fill(ben, "#report-sheet textarea[name=note]", "Selling followers")
        click(ben, "#report-sheet button[type=submit]")
        wait_text(ben, "#toast", "The moderators will look at it")
        assert not ben.execute_script("return document.getElementById('report-sheet').open"), "the sheet closes"

        # Xena sees it in the queue with the post's text and Cleo's recent content.
        xena = browser_factory()
        sign_in(xena, plaza.url, "xena")
        xena.get(plaza.url + "/admin")
        report = wait_for(xena, ".reports .report")
        report_id = report.get_attribute("data-report")
        card = f"#report-{report_id}"
        wait_text(xena, f"{card} .snapshot", "Buy ten thousand followers")
        assert "Selling followers" in xena.find_element(By.CSS_SELECTOR, card).text
        click(xena, f"{card} details summary")
        wait_text(xena, f"{card} details li", "Buy ten thousand followers")
        screenshots(xena, "moderation-queue")

        # She suspends Cleo.
        click(xena, f"{card} input[name=action][value=suspend]")
        fill(xena, f"{card} input[name=note]", "spam account")
        click(xena, f"{card} button[type=submit]")
        wait_gone(xena, card)
        xena.get(plaza.url + "/admin?state=resolved")
        wait_text(xena, f"{card}", "Resolved")
        wait_text(xena, ".audit li", "cleo")
        screenshots(xena, "moderation-resolved")

        # Cleo's browser is signed out at its next page, and signing in again is refused.
        cleo.get(plaza.url + "/")
        wait_for(cleo, "body:not([data-signed-in])")
        cleo.get(plaza.url + "/login")
        fill(cleo, "input[name=login]", "cleo")
        fill(cleo, "input[name=password]", PASSWORD)
        click(cleo, "form[action='/login'] button[type=submit]")
        wait_text(cleo, ".auth .error", "suspended")
        expect_error(plaza.client().post(f"{API}/auth/login", json={"login": "cleo", "password": PASSWORD}), 403,
                     "account_suspended")

        # Her post is gone for everyone; Ben is told his report was resolved.
        assert ben_api.get(f"{API}/posts/{spam['id']}").status_code == 404
        ben.get(plaza.url + "/notifications")
        wait_text(ben, ".notification.kind-report_resolved", "resolved your report")

        # Xena thinks again and lifts the suspension from the resolved report: Cleo signs in.
        click(xena, f"{card} button[data-api='DELETE /api/v1/admin/users/cleo/suspension']")
        WebDriverWait(xena, 10).until(lambda d: d.switch_to.alert).accept()
        wait_text(xena, "#toast", "Suspension lifted")
        sign_in(cleo, plaza.url, "cleo")
        assert ben_api.get(f"{API}/posts/{spam['id']}").status_code == 200

        no_console_errors(ben, xena)
    finally:
        plaza.stop()

