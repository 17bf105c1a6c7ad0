"""Signing in with an OpenID Connect provider, against a real one: oidc-provider-mock (PyPI),
a Flask/authlib provider run on loopback in a thread of the test. Through Chromium (the
"Continue with Mock ID" buttons, linking from settings) and through the API (native apps
exchange an ID token the provider issued).

The provider takes any client id and secret and any redirect URI (no registration), signs ID
tokens with RS256 and names itself by the address it was reached at, http://127.0.0.1:<port>.
Its authorization page asks only for a subject (`sub`); a person's other claims (email,
email_verified, name) are set beforehand with its PUT /users/<sub>. Each test gets its own
provider and its own server, configured by PLAZA_AUTH_* (provider id `mock`), with its own
address as PLAZA_PUBLIC_URL so that the redirect URI is its callback.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import secrets
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By

from conftest import PlazaServer, describe, expect, expect_error, free_port
from web import click, console_errors, fill, screenshot_dir, screenshots, sign_in, wait_for, wait_gone, wait_text

API = "/api/v1"
PROVIDER_ID = "mock"
PROVIDER_NAME = "Mock ID"
CLIENT_ID = "plaza-e2e"
CLIENT_SECRET = "plaza-e2e-secret"
NATIVE_AUDIENCE = "com.example.app"  # PLAZA_AUTH_MOCK_AUDIENCES: what a native app's tokens are for
# The provider's authlib warns, from the provider's thread, about APIs the provider still uses.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:authlib")
PAGE_TIMEOUT = 30  # seconds for a page after a click (a debug build, both cores possibly busy)
# The provider's pages load a stylesheet from a CDN, which the test browser cannot resolve.
CDN = r"cdn\.jsdelivr\.net"


class MockProvider:
    """oidc-provider-mock on 127.0.0.1, on a free port, in a thread. Use it as a context manager."""

    def __init__(self):
        import authlib.deprecate  # noqa: F401 (it turns its warnings on when imported: before the filter below)
        import werkzeug.serving
        with warnings.catch_warnings():  # authlib's warnings about its own deprecations
            warnings.simplefilter("ignore")
            import oidc_provider_mock
        # Any client id and secret are accepted; nonces are optional for the provider (Plaza sends them).
        self.server = werkzeug.serving.make_server(
            "127.0.0.1", 0, oidc_provider_mock.app(require_client_registration=False), threaded=True)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        self._metadata: dict | None = None

    @property
    def issuer(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def __enter__(self) -> "MockProvider":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)

    def metadata(self) -> dict:
        """Its discovery document."""
        if self._metadata is None:
            response = requests.get(self.issuer + "/.well-known/openid-configuration", timeout=30)
            self._metadata = expect(response, 200)
            assert self._metadata["issuer"] == self.issuer, self._metadata
        return self._metadata

    def set_user(self, sub: str, **claims) -> None:
        """The claims the provider gives for `sub` from now on (email, email_verified, name …)."""
        response = requests.put(f"{self.issuer}/users/{sub}", json=claims, timeout=30)
        assert response.status_code == 204, describe(response)

    def id_token(self, *, sub: str, nonce: str, client_id: str = CLIENT_ID, redirect_uri: str,
                 scope: str = "openid email profile") -> str:
        """An ID token for `sub`, issued to `client_id` with `nonce`, through the authorization
        code flow as a browser and a client would run it: the authorization page, its form with
        the subject, the redirect (not followed: the code is read from its Location) and the
        token endpoint."""
        authorize = self.metadata()["authorization_endpoint"]
        state = secrets.token_urlsafe(16)
        query = {"client_id": client_id, "redirect_uri": redirect_uri, "response_type": "code",
                 "scope": scope, "nonce": nonce, "state": state}
        session = requests.Session()
        page = session.get(authorize, params=query, timeout=30)
        assert page.status_code == 200 and 'name="sub"' in page.text, describe(page)
        # The page's form posts to the page's own address (its query says which client asks).
        answer = session.post(authorize, params=query, data={"sub": sub}, allow_redirects=False, timeout=30)
        assert answer.status_code == 302, describe(answer)
        location = answer.headers["Location"]
        assert location.startswith(redirect_uri + "?"), location
        back = parse_qs(urlsplit(location).query)
        assert back.get("state") == [state] and back.get("code"), location
        tokens = expect(session.post(self.metadata()["token_endpoint"], timeout=30, data={
            "grant_type": "authorization_code", "code": back["code"][0], "redirect_uri": redirect_uri,
            "client_id": client_id, "client_secret": CLIENT_SECRET,
        }), 200)
        assert tokens.get("id_token"), tokens
        return tokens["id_token"]


@dataclass
class OidcWorld:
    plaza: PlazaServer
    provider: MockProvider

    @property
    def callback(self) -> str:
        return f"{self.plaza.url}{API}/auth/providers/{PROVIDER_ID}/callback"


@pytest.fixture
def oidc_world(data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A provider, and a server that offers it as "Mock ID"."""
    if importlib.util.find_spec("oidc_provider_mock") is None:
        pytest.fail("the OpenID Connect tests need oidc-provider-mock: run scripts/install-deps.sh test",
                    pytrace=False)
    # authlib refuses plain http unless told (the provider's own command line sets this too).
    monkeypatch.setenv("AUTHLIB_INSECURE_TRANSPORT", "1")
    with MockProvider() as provider:
        port = free_port()
        plaza = PlazaServer(data_dir, tmp_path / "plaza.log", port=port, env={
            "PLAZA_PUBLIC_URL": PlazaServer.url_for(port),
            "PLAZA_AUTH_PROVIDERS": PROVIDER_ID,
            "PLAZA_AUTH_MOCK_ISSUER": provider.issuer,
            "PLAZA_AUTH_MOCK_CLIENT_ID": CLIENT_ID,
            "PLAZA_AUTH_MOCK_CLIENT_SECRET": CLIENT_SECRET,
            "PLAZA_AUTH_MOCK_NAME": PROVIDER_NAME,
            "PLAZA_AUTH_MOCK_AUDIENCES": NATIVE_AUDIENCE,
        })
        with plaza.running():
            yield OidcWorld(plaza, provider)


def fresh_nonce() -> str:
    return secrets.token_urlsafe(24)


def exchange(world: OidcWorld, id_token: str, nonce: str) -> requests.Response:
    return world.plaza.client().post(f"{API}/auth/providers/{PROVIDER_ID}/token",
                                     json={"idToken": id_token, "nonce": nonce})


def refused(response: requests.Response, reason: str) -> None:
    """A 401 invalid_provider_token for `reason` (a part of the message, so that a token refused
    for another reason than the one under test does not pass)."""
    error = expect_error(response, 401, "invalid_provider_token")
    assert reason in error["message"], describe(response)


def through_provider(world: OidcWorld, browser, sub: str, screenshot: str | None = None) -> None:
    """In the browser, now on the provider's authorization page for Plaza: checks what Plaza
    asked for (its client id, its callback, state, nonce and a PKCE S256 challenge), types the
    subject and authorizes."""
    try:
        wait_text(browser, "h1", "Authorize Client", timeout=PAGE_TIMEOUT)
    except TimeoutException:
        # A navigation the page's own CSP blocked shows only in the console: say so.
        raise AssertionError(f"the browser did not reach the provider's page; console errors: "
                             f"{console_errors(browser, ignore=provider_noise(world))}") from None
    url = urlsplit(browser.current_url)
    assert f"{url.scheme}://{url.netloc}{url.path}" == world.provider.metadata()["authorization_endpoint"], url
    query = parse_qs(url.query)
    assert query["client_id"] == [CLIENT_ID] and query["response_type"] == ["code"], query
    assert query["redirect_uri"] == [world.callback], query
    assert "openid" in query["scope"][0].split(), query
    assert query["code_challenge_method"] == ["S256"], query
    for name in ("state", "nonce", "code_challenge"):
        assert len(query[name][0]) >= 16, query
    if screenshot:
        screenshots(browser, screenshot)
    fill(browser, "input[name=sub]", sub)
    click(browser, "form:has(input[name=sub]) button[type=submit]")


def provider_noise(world: OidcWorld) -> list[str]:
    """Console entries of the provider's own pages (its stylesheet from a CDN the test browser
    cannot reach, its missing favicon): not Plaza's to answer for."""
    return [CDN, "^" + re.escape(world.provider.issuer + "/")]


def signed_in_as(browser) -> str:
    return wait_for(browser, "body[data-signed-in]", timeout=PAGE_TIMEOUT).get_attribute("data-signed-in")


def test_the_providers_are_listed(oidc_world: OidcWorld):
    body = expect(oidc_world.plaza.client().get(f"{API}/auth/providers"), 200)
    assert body == [{"id": PROVIDER_ID, "name": PROVIDER_NAME, "kind": "oidc"}], body


def test_continue_with_the_provider_makes_an_account_and_signs_in_to_it_again(oidc_world: OidcWorld, browser_factory):
    plaza, provider = oidc_world.plaza, oidc_world.provider
    provider.set_user("ada-0001", email="ada@example.org", email_verified=True, name="Ada Lovelace")
    browser = browser_factory()

    browser.get(plaza.url + "/signup")
    button = wait_for(browser, f"a[data-provider={PROVIDER_ID}]")
    assert button.text == f"Continue with {PROVIDER_NAME}", button.text

    browser.get(plaza.url + "/login")
    button = wait_for(browser, f"a[data-provider={PROVIDER_ID}]")
    assert button.text == f"Continue with {PROVIDER_NAME}", button.text
    screenshots(browser, "oidc-login")
    button.click()
    through_provider(oidc_world, browser, "ada-0001", screenshot="oidc-provider-authorize")

    username = signed_in_as(browser)
    assert browser.current_url == plaza.url + "/", browser.current_url
    assert username == "ada", username  # from the address's local part
    # The provider vouched for the address: nothing to confirm.
    assert not browser.find_elements(By.CSS_SELECTOR, "p[data-verify-banner]")
    # Accounts are never joined by address: the address is this account's now.
    expect_error(plaza.client().post(f"{API}/auth/register", json={
        "username": "ada2", "email": "ada@example.org", "password": "correct horse battery"}), 409, "email_taken")

    click(browser, "form.logout button[type=submit]")
    wait_for(browser, "form[action='/login'] input[name=login]", timeout=PAGE_TIMEOUT)
    assert not browser.find_elements(By.CSS_SELECTOR, "body[data-signed-in]")

    # Again, from a page that asks to come back to settings: the same account, and there.
    browser.get(plaza.url + "/login?next=/settings")
    click(browser, f"a[data-provider={PROVIDER_ID}]")
    through_provider(oidc_world, browser, "ada-0001")
    assert signed_in_as(browser) == username
    assert browser.current_url == plaza.url + "/settings", browser.current_url
    identity = wait_text(browser, f"[data-sign-in-methods] li[data-identity={PROVIDER_ID}]", PROVIDER_NAME)
    assert "ada@example.org" in identity.text, identity.text
    # No password: the provider is the only way in, so it cannot be removed.
    assert "your only way to sign in" in identity.text, identity.text
    assert not identity.find_elements(By.CSS_SELECTOR, "button")
    assert not browser.find_elements(By.CSS_SELECTOR, f"a[data-link-provider={PROVIDER_ID}]")
    assert not console_errors(browser, ignore=provider_noise(oidc_world))


def test_a_password_account_links_the_provider_in_settings(oidc_world: OidcWorld, browser_factory):
    plaza, provider = oidc_world.plaza, oidc_world.provider
    bruno, client = plaza.register("bruno")
    provider.set_user("bruno-at-mock", email="bruno.mock@example.org", email_verified=True, name="Bruno")
    assert expect(client.get(f"{API}/me/identities"), 200)["items"] == []
    browser = browser_factory()
    sign_in(browser, plaza.url, "bruno")

    browser.get(plaza.url + "/settings")
    wait_text(browser, "[data-sign-in-methods]", "Password: set")
    assert not browser.find_elements(By.CSS_SELECTOR, "li[data-identity]")
    link = wait_for(browser, f"a[data-link-provider={PROVIDER_ID}]")
    assert link.text == f"Link {PROVIDER_NAME}", link.text
    link.click()
    through_provider(oidc_world, browser, "bruno-at-mock")

    identity = wait_text(browser, f"[data-sign-in-methods] li[data-identity={PROVIDER_ID}]", PROVIDER_NAME,
                         timeout=PAGE_TIMEOUT)
    assert browser.current_url == plaza.url + "/settings", browser.current_url
    assert signed_in_as(browser) == "bruno"
    assert "bruno.mock@example.org" in identity.text, identity.text
    assert identity.find_element(By.CSS_SELECTOR, "button").text == "Remove"  # a password is left
    assert not browser.find_elements(By.CSS_SELECTOR, f"a[data-link-provider={PROVIDER_ID}]")
    card = wait_for(browser, "[data-sign-in-methods]")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", card)
    assert card.screenshot(str(screenshot_dir() / "oidc-settings-sign-in-methods.png"))

    items = expect(client.get(f"{API}/me/identities"), 200)["items"]
    assert len(items) == 1, items
    assert {k: items[0][k] for k in ("provider", "name", "email")} == {
        "provider": PROVIDER_ID, "name": PROVIDER_NAME, "email": "bruno.mock@example.org"}, items
    assert items[0]["linkedAt"] and items[0]["lastUsedAt"], items
    # Linking did not change the account's own address.
    me = expect(client.get(f"{API}/me"), 200)
    assert me["username"] == "bruno" and me["email"] == "bruno@example.com", me

    # The provider now signs in to bruno.
    click(browser, "form.logout button[type=submit]")
    wait_for(browser, "form[action='/login'] input[name=login]", timeout=PAGE_TIMEOUT)
    click(browser, f"a[data-provider={PROVIDER_ID}]")
    through_provider(oidc_world, browser, "bruno-at-mock")
    assert signed_in_as(browser) == "bruno"

    # Removed from settings, it is gone from the API too.
    browser.get(plaza.url + "/settings")
    click(browser, f"li[data-identity={PROVIDER_ID}] button")
    wait_gone(browser, f"li[data-identity={PROVIDER_ID}]", timeout=PAGE_TIMEOUT)
    wait_for(browser, f"a[data-link-provider={PROVIDER_ID}]", timeout=PAGE_TIMEOUT)
    assert expect(client.get(f"{API}/me/identities"), 200)["items"] == []
    assert not console_errors(browser, ignore=provider_noise(oidc_world))


def test_a_native_app_exchanges_an_id_token_once(oidc_world: OidcWorld):
    plaza, provider = oidc_world.plaza, oidc_world.provider
    provider.set_user("cleo-42", email="cleo@example.org", email_verified=True, name="Cleo")

    first_nonce = fresh_nonce()
    first = provider.id_token(sub="cleo-42", nonce=first_nonce, redirect_uri=oidc_world.callback)
    made = expect(exchange(oidc_world, first, first_nonce), 201)
    assert made["token"] and made["user"]["username"] == "cleo", made
    cleo = plaza.client(made["token"])
    me = expect(cleo.get(f"{API}/me"), 200)
    assert me["email"] == "cleo@example.org" and me["emailVerified"] is True, me
    items = expect(cleo.get(f"{API}/me/identities"), 200)["items"]
    assert [(i["provider"], i["name"], i["email"]) for i in items] == [
        (PROVIDER_ID, PROVIDER_NAME, "cleo@example.org")], items

    # A fresh token for the same person signs in to the same account: 200. This one carries the
    # nonce's SHA-256 in hex (as Sign in with Apple's native flow does); Plaza is sent the nonce.
    second_nonce = fresh_nonce()
    second = provider.id_token(sub="cleo-42", nonce=hashlib.sha256(second_nonce.encode()).hexdigest(),
                               redirect_uri=oidc_world.callback)
    again = expect(exchange(oidc_world, second, second_nonce), 200)
    assert again["user"]["id"] == made["user"]["id"] and again["token"] != made["token"], again
    expect(plaza.client(again["token"]).get(f"{API}/me"), 200)

    # Each nonce works once: the first token again is a replay.
    refused(exchange(oidc_world, first, first_nonce), "already used")
    refused(exchange(oidc_world, second, second_nonce), "already used")

    # A token that does not carry the nonce sent with it.
    third_nonce = fresh_nonce()
    third = provider.id_token(sub="cleo-42", nonce=third_nonce, redirect_uri=oidc_world.callback)
    refused(exchange(oidc_world, third, fresh_nonce()), "nonce")

    # A token the provider issued to another client is not for Plaza ...
    other_nonce = fresh_nonce()
    other = provider.id_token(sub="cleo-42", nonce=other_nonce, client_id="someone-else",
                              redirect_uri="http://127.0.0.1:9/someone-else/callback")
    refused(exchange(oidc_world, other, other_nonce), "audience")
    # ... but one issued to the native app Plaza was told of (PLAZA_AUTH_MOCK_AUDIENCES) is.
    native_nonce = fresh_nonce()
    native = provider.id_token(sub="cleo-42", nonce=native_nonce, client_id=NATIVE_AUDIENCE,
                               redirect_uri="com.example.app:/oauth2redirect")
    assert expect(exchange(oidc_world, native, native_nonce), 200)["user"]["id"] == made["user"]["id"]

    # Garbage is refused the same way.
    refused(exchange(oidc_world, "not.a.token", fresh_nonce()), "")


def test_provider_accounts_keep_only_vouched_addresses_and_their_last_way_in(oidc_world: OidcWorld):
    plaza, provider = oidc_world.plaza, oidc_world.provider
    plaza.register("dora")  # dora@example.com

    # A verified address another account has: refused, never joined to that account.
    provider.set_user("dora-elsewhere", email="dora@example.com", email_verified=True, name="Dora")
    nonce = fresh_nonce()
    token = provider.id_token(sub="dora-elsewhere", nonce=nonce, redirect_uri=oidc_world.callback)
    expect_error(exchange(oidc_world, token, nonce), 409, "email_in_use")

    # An address the provider does not vouch for is not kept: the account has none.
    provider.set_user("eve-7", email="eve@example.org", email_verified=False, name="Eve")
    nonce = fresh_nonce()
    token = provider.id_token(sub="eve-7", nonce=nonce, redirect_uri=oidc_world.callback)
    made = expect(exchange(oidc_world, token, nonce), 201)
    eve = plaza.client(made["token"])
    me = expect(eve.get(f"{API}/me"), 200)
    assert not me.get("email") and me.get("emailVerified") is not True, me

    # The provider is eve's only way in: it stays.
    expect_error(eve.delete(f"{API}/me/identities/{PROVIDER_ID}"), 409, "last_sign_in_method")
    assert [i["provider"] for i in expect(eve.get(f"{API}/me/identities"), 200)["items"]] == [PROVIDER_ID]
    # Once eve has a password, it may go.
    response = eve.put(f"{API}/me/password", json={"currentPassword": "", "newPassword": "eve-password-1"})
    assert response.status_code in (200, 204), describe(response)
    response = eve.delete(f"{API}/me/identities/{PROVIDER_ID}")
    assert response.status_code == 204, describe(response)
    assert expect(eve.get(f"{API}/me/identities"), 200)["items"] == []
    expect(plaza.client().post(f"{API}/auth/login",
                               json={"login": made["user"]["username"], "password": "eve-password-1"}), 200)
