"""The life of a small instance, told through the real binary and its HTTP API."""

from __future__ import annotations

from conftest import PlazaServer, describe, expect, expect_error, run_plaza

API = "/api/v1"


def test_two_people_meet_post_comment_like_and_it_survives_a_restart(plaza: PlazaServer):
    # Two people register.
    ana_user, ana = plaza.register("ana", password="ana-password-1")
    bob_user, bob = plaza.register("bob", password="bob-password-1")
    assert ana_user["id"] != bob_user["id"]

    # Bob follows Ana.
    profile = expect(bob.put(f"{API}/users/ana/follow"), 200)
    assert profile["username"] == "ana"
    assert profile["viewer"]["following"] is True, profile
    assert profile["counts"]["followers"] == 1, profile

    # Ana posts.
    post = expect(ana.post(f"{API}/posts", json={"kind": "text", "title": "Hello Plaza", "body": "First post!"}), 201)
    post_id = post["id"]
    assert post["kind"] == "text" and post["title"] == "Hello Plaza" and post["body"] == "First post!", post
    assert post["author"]["username"] == "ana", post
    assert post["counts"] == {"likes": 0, "comments": 0, "boosts": 0}, post

    # Bob sees it in his home feed, comments and likes it.
    home = expect(bob.get(f"{API}/feed/home"), 200)
    assert post_id in [p["id"] for p in home["items"]], home
    assert "nextCursor" in home, home
    comment = expect(bob.post(f"{API}/posts/{post_id}/comments", json={"body": "Welcome, Ana!"}), 201)
    assert comment["postId"] == post_id and comment["body"] == "Welcome, Ana!", comment
    assert comment["author"]["username"] == "bob", comment
    like = expect(bob.put(f"{API}/posts/{post_id}/like"), 200)
    assert like == {"liked": True, "likes": 1}, like
    # Liking again changes nothing (PUT is idempotent).
    assert expect(bob.put(f"{API}/posts/{post_id}/like"), 200) == {"liked": True, "likes": 1}

    # Ana sees the counts and who liked it; the global feed has the post.
    seen = expect(ana.get(f"{API}/posts/{post_id}"), 200)
    assert seen["counts"] == {"likes": 1, "comments": 1, "boosts": 0}, seen
    likers = expect(ana.get(f"{API}/posts/{post_id}/likes"), 200)
    assert [u["username"] for u in likers["items"]] == ["bob"], likers
    assert expect(bob.get(f"{API}/posts/{post_id}"), 200)["viewer"]["liked"] is True
    world = expect(plaza.client().get(f"{API}/feed/global"), 200)
    assert post_id in [p["id"] for p in world["items"]], world

    # Bob signs out: his old token no longer works.
    assert expect(bob.post(f"{API}/auth/logout"), 204) is None
    expect_error(bob.get(f"{API}/me"), 401)

    # Restart on the same data dir (the old process must shut down gracefully).
    plaza.restart()

    # Everything is still there; both sign in again (with username and with email).
    bob = plaza.client(expect(plaza.client().post(f"{API}/auth/login", json={"login": "bob", "password": "bob-password-1"}), 200)["token"])
    ana_login = expect(plaza.client().post(f"{API}/auth/login", json={"login": "ana@example.com", "password": "ana-password-1"}), 200)
    assert ana_login["user"]["username"] == "ana", ana_login
    ana = plaza.client(ana_login["token"])

    seen = expect(ana.get(f"{API}/posts/{post_id}"), 200)
    assert seen["title"] == "Hello Plaza" and seen["counts"] == {"likes": 1, "comments": 1, "boosts": 0}, seen
    comments = expect(ana.get(f"{API}/posts/{post_id}/comments"), 200)
    assert [(c["author"]["username"], c["body"]) for c in comments["items"]] == [("bob", "Welcome, Ana!")], comments
    likers = expect(ana.get(f"{API}/posts/{post_id}/likes"), 200)
    assert [u["username"] for u in likers["items"]] == ["bob"], likers
    assert expect(bob.get(f"{API}/posts/{post_id}"), 200)["viewer"]["liked"] is True
    profile = expect(bob.get(f"{API}/users/ana"), 200)
    assert profile["viewer"]["following"] is True and profile["counts"]["followers"] == 1, profile
    home = expect(bob.get(f"{API}/feed/home"), 200)
    assert post_id in [p["id"] for p in home["items"]], home


def test_session_token_survives_a_restart(plaza: PlazaServer):
    _, ana = plaza.register("ana")
    plaza.restart()
    me = expect(ana.get(f"{API}/me"), 200)
    assert me["username"] == "ana", me


def test_api_errors_have_the_documented_shape(plaza: PlazaServer):
    anonymous = plaza.client()
    expect_error(anonymous.get(f"{API}/me"), 401)
    expect_error(anonymous.get(f"{API}/users/nobody_here"), 404)
    # JSON is required as the body's media type.
    response = anonymous.post(f"{API}/auth/register", data='{"username": "x"}', headers={"Content-Type": "text/plain"})
    expect_error(response, 415)
    # Validation errors name the field.
    response = anonymous.post(f"{API}/auth/register", json={"username": "ok_name", "email": "ok@example.com", "password": "short"})
    assert expect_error(response, 422).get("field") == "password", describe(response)
    plaza.register("ana")
    response = anonymous.post(f"{API}/auth/register", json={"username": "ANA", "email": "other@example.com", "password": "long-enough-1"})
    expect_error(response, 409)
    response = anonymous.post(f"{API}/auth/login", json={"login": "ana", "password": "wrong-password"})
    expect_error(response, 401)


def test_seed_demo_then_sign_in_as_demo(data_dir, tmp_path):
    result = run_plaza("seed", "--demo", data_dir=data_dir)
    assert result.returncode == 0, result.stderr
    assert "demo / plaza-demo" in result.stdout and "admin / plaza-demo" in result.stdout, result.stdout
    # Seeding again is harmless.
    again = run_plaza("seed", "--demo", data_dir=data_dir)
    assert again.returncode == 0 and "already" in again.stdout, again.stdout + again.stderr

    server = PlazaServer(data_dir, tmp_path / "plaza.log")
    with server.running():
        login = expect(server.client().post(f"{API}/auth/login", json={"login": "demo", "password": "plaza-demo"}), 200)
        demo = server.client(login["token"])
        world = expect(demo.get(f"{API}/feed/global"), 200)
        assert len(world["items"]) > 0, world
        assert len(expect(demo.get(f"{API}/feed/home"), 200)["items"]) > 0
        # The pictures the seeding drew are served.
        memes = expect(demo.get(f"{API}/users/memerly/posts"), 200)["items"]
        picture = demo.get(memes[0]["media"][0]["variants"]["medium"])
        assert picture.status_code == 200 and picture.headers["content-type"] == "image/jpeg", picture.headers


def test_user_create_makes_an_admin_who_can_sign_in(data_dir, tmp_path):
    result = run_plaza("user", "create", "--username", "xena", "--email", "xena@example.com",
                       "--password", "x-password-123", "--admin", data_dir=data_dir)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "administrator xena" in result.stdout, result.stdout
    # The same username (in any case) again is refused with a message, not a crash.
    again = run_plaza("user", "create", "--username", "Xena", "--email", "xena2@example.com",
                      "--password", "x-password-123", data_dir=data_dir)
    assert again.returncode != 0, again.stdout

    server = PlazaServer(data_dir, tmp_path / "plaza.log")
    server.start()
    try:
        login = expect(server.client().post(f"{API}/auth/login", json={"login": "xena", "password": "x-password-123"}), 200)
        me = expect(server.client(login["token"]).get(f"{API}/me"), 200)
        assert me["username"] == "xena" and me["email"] == "xena@example.com", me
        assert me.get("isAdmin") is True, me
    finally:
        server.stop()


def test_migrate_on_a_fresh_data_dir(data_dir):
    result = run_plaza("migrate", data_dir=data_dir)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Applied migrations" in result.stdout, result.stdout
    again = run_plaza("migrate", data_dir=data_dir)
    assert again.returncode == 0 and "up to date" in again.stdout, again.stdout + again.stderr
