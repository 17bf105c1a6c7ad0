import Foundation
import HTTPTypes
import Hummingbird
import PlazaAPI

/// The web app: server-rendered pages over the same handlers as the API (so a page and its
/// endpoint parse, authorise and answer alike), sign-in forms that set the session cookie,
/// and the static files. Scripts enhance the pages and write through the JSON API.
struct WebController {
    let renderer: WebRenderer
    let api: APIControllers
    /// What the pages' forms do (the same actions as the API's).
    let actions: Actions
    let stores: Stores
    /// Where maps get their tiles.
    let map: MapSettings
    let sessionDays: Int
    /// The same limits as the API's (sign-up counts as a registration); nil when turned off.
    let rateLimiter: RateLimiter?
    /// The feeds at the profile's and the space's addresses with `.rss` or `.atom`.
    let syndication: SyndicationController

    /// The stores the pages read besides the API's handlers: sessions, spaces' keys, collections.
    struct Stores {
        let accounts: AccountStore
        let posts: PostStore
        let spaces: SpaceStore
        let members: SpaceMembersStore
        let collections: CollectionStore
        let moderation: ModerationStore
        let linkPreviews: LinkPreviewStore
        let pushDevices: PushDeviceStore
        let oauth: OAuthStore
    }

    /// The API's handlers, which the pages call with the page's own request.
    struct APIControllers {
        let accounts: AccountsController
        let people: PeopleController
        let posts: PostsController
        let feeds: FeedsController
        let spaces: SpacesController
        let search: SearchController
        let history: HistoryController
        let collections: CollectionsController
        let notifications: NotificationsController
        let tags: TagsController
        let moderation: ModerationController
        let identity: IdentityController
    }

    /// The web app: its assets and install files, then its pages and forms behind its own
    /// middleware (errors as HTML pages, the session cookie, the reader's language), and last a
    /// page for every other path outside the other doors' prefixes.
    var routes: RouteCollection<PlazaContext> {
        let routes = RouteCollection(context: PlazaContext.self)
        routes.get("assets/**") { request, context in
            renderer.asset(request, path: context.parameters.getCatchAll().joined(separator: "/"))
        }
        let install = WebInstallPages(web: self)
        routes.get("manifest.webmanifest", use: install.manifest)
        routes.get("sw.js", use: install.serviceWorker)
        // The browser's steps of external sign-in sit at the API's paths, with its JSON errors.
        browser(routes.group()).addRoutes(WebIdentityPages(web: self).routes)
        let pages = browser(
            routes.group().add(middleware: WebErrorMiddleware(renderer: renderer, siteName: api.accounts.instance.name))
        )
        pages.get("login", use: loginPage)
        pages.post("login", use: login)
        pages.post("login/second-factor", use: loginSecondFactor)
        pages.get("signup", use: signupPage)
        pages.post("signup", use: signup)
        pages.post("logout", use: logout)
        pages.addRoutes(of: [
            WebPages(web: self), WebAdminPage(web: self), WebInstancePages(web: self, instance: api.accounts.instance),
            WebEmailPages(web: self), WebFilterPages(web: self, filters: actions.filters),
            WebOAuthPages(web: self, oauth: stores.oauth), install,
        ])
        for method in HTTPRequest.Method.answered + [.options] {
            pages.on("**", method: method) { _, _ -> Response in throw HTTPError(.notFound) }
        }
        return routes
    }

    /// `group` as the browser's: forms' queries read, the session cookie looked at (as on the
    /// API, limits before authentication: a stale or forged cookie pays its address; then per
    /// person), and the reader's language.
    private func browser(_ group: RouterGroup<PlazaContext>) -> RouterGroup<PlazaContext> {
        group.add(middleware: FormQueryMiddleware())
            .authenticated(
                by: AuthMiddleware(accounts: stores.accounts, requireCSRFHeader: false), limiter: rateLimiter
            )
            .add(middleware: WebLocaleMiddleware(accounts: stores.accounts))
    }

    // MARK: rendering

    /// The request's language and time zone, with what formats in them.
    func localizer(_ context: PlazaContext) -> Localizer {
        Localizer(
            catalog: renderer.catalogs[context.language] ?? .english,
            timeZone: context.timeZone ?? TimeZone(identifier: "UTC") ?? .current)
    }

    /// Renders `body` inside the layout, whose values say who is signed in, their spaces and
    /// the CSRF token. Anonymous visitors get a pre-session nonce for the forms' token.
    func page(
        _ template: String, title: String, nav: Layout.Nav? = nil, _ body: some Sendable, request: Request,
        context: PlazaContext, status: HTTPResponse.Status = .ok, frameSources: [String] = [],
        formTargets: [String] = [], alternates: [Layout.Alternate] = []
    ) async throws -> Response {
        let t = localizer(context)
        let layout: Layout
        var nonce: String?
        if let identity = context.identity, let token = WebSession.sessionToken(request, secure: context.isHTTPS) {
            let me = try await stores.accounts.me(userID: identity.userID)
            let joined = try await stores.spaces.list(
                .init(memberOf: identity.userID, page: .init(limit: 50)), viewer: identity.userID)
            layout = Layout(
                title: title, nav: nav, assetVersion: renderer.assetVersion, csrf: WebSession.csrfToken(secret: token),
                t: t, me: me, mySpaces: joined.items,
                moderates: try await stores.moderation.scope(of: identity.userID) != .none)
        } else {
            let secret = WebSession.nonce(request, secure: context.isHTTPS) ?? WebSession.newNonce()
            if WebSession.nonce(request, secure: context.isHTTPS) == nil { nonce = secret }
            let csrf = WebSession.csrfToken(secret: secret)
            layout = Layout(
                title: title, nav: nav, assetVersion: renderer.assetVersion, csrf: csrf, t: t)
        }
        var complete = layout
        complete.signInProviders = api.identity.signIn.providers.map { .init(id: $0.id, name: $0.name) }
        complete.scriptMessages = renderer.scriptMessages[context.language] ?? "{}"
        complete.siteName = try await api.accounts.instance.currentName()
        complete.alternates = alternates
        var response = renderer.html(
            template, WebPage(layout: complete, body: body), language: context.language, status: status,
            frameSources: frameSources, formTargets: formTargets)
        if let nonce { response.setCookie(WebSession.nonceCookie(nonce, secure: context.isHTTPS)) }
        // The server's session slides with use; so does the cookie, renewed on every signed-in page.
        if context.identity != nil, let token = WebSession.sessionToken(request, secure: context.isHTTPS) {
            response.setCookie(WebSession.sessionCookie(token: token, maxAgeDays: sessionDays, secure: context.isHTTPS))
        }
        if context.identity == nil, WebSession.sessionToken(request, secure: context.isHTTPS) != nil {
            response.setCookie(WebSession.expiredSessionCookie(secure: context.isHTTPS))
        }
        // Whose page this is, for the service worker: its offline copies are dropped when it changes.
        response.headers[Self.viewerHeader] = context.identity.map { String($0.userID) } ?? "anonymous"
        return response
    }

    static let viewerHeader = HTTPField.Name("Plaza-Viewer")!

    /// Only the list part of a page (`?fragment=1`), for infinite scroll and live updates.
    func fragment(_ template: String, _ view: some Sendable, context: PlazaContext) -> Response {
        var response = renderer.html(template, view, language: context.language)
        // Scripts insert only responses that say they are fragments (not, say, a sign-in page after a redirect).
        response.headers[HTTPField.Name("X-Plaza-Fragment")!] = "1"
        return response
    }

    static func redirect(to location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location])
    }

    /// `next` if it is a path on this site, else `/`.
    static func safeNext(_ next: String?) -> String {
        // Browsers drop tabs and newlines from URLs and read `\` as `/`, so `/\t/evil` would leave the site.
        guard let next, next.hasPrefix("/"), !next.hasPrefix("//"), next.utf8.count <= 2000,
            next.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F && $0 != "\\" })
        else { return "/" }
        return next
    }

    // MARK: sign-in, sign-up, sign-out

    struct LoginForm: Decodable {
        var login: String?
        var password: String?
        var next: String?
        var _csrf: String?
    }

    struct SecondFactorForm: Decodable {
        var challenge: String?
        var code: String?
        var next: String?
        var _csrf: String?
    }

    struct SignupForm: Decodable {
        var username: String?
        var email: String?
        var password: String?
        var displayName: String?
        /// Filled in by the page's script from the browser.
        var timeZone: String?
        /// When sign-ups need an invite, or approval.
        var invite: String?
        var reason: String?
        var _csrf: String?
    }

    struct LogoutForm: Decodable { var _csrf: String? }

    func form<T: Decodable>(_ type: T.Type, _ request: Request, context: PlazaContext) async throws -> T {
        try Self.decodeForm(type, from: try await request.body.collect(upTo: 16 * 1024))
    }

    /// An `application/x-www-form-urlencoded` body, or 400.
    static func decodeForm<T: Decodable>(_ type: T.Type, from body: ByteBuffer) throws -> T {
        do {
            return try URLEncodedFormDecoder().decode(type, from: String(buffer: body))
        } catch {
            throw PlazaError.malformed("The form could not be read.")
        }
    }

    /// The form's CSRF token must match the browser's session, or its pre-session nonce when
    /// not signed in (a stale session cookie does not count, as on the page that made the form).
    func checkCSRF(_ token: String?, _ request: Request, context: PlazaContext) throws {
        let secret =
            context.identity != nil
            ? WebSession.sessionToken(request, secure: context.isHTTPS)
            : WebSession.nonce(request, secure: context.isHTTPS)
        guard WebSession.verify(token, secret: secret, request: request) else {
            throw PlazaError(.forbidden, "csrf_failed", "This form has expired. Reload the page and try again.")
        }
    }

    @Sendable func loginPage(_ request: Request, context: PlazaContext) async throws -> Response {
        if context.identity != nil { return Self.redirect(to: Self.safeNext(request.uri.queryParameters.get("next"))) }
        let t = localizer(context)
        var body = LoginPage(next: Self.safeNext(request.uri.queryParameters.get("next")))
        body.deleting = request.uri.queryParameters.get("deleting") == "1"
        return try await page("login", title: t("Sign in"), nav: .login, body, request: request, context: context)
    }

    @Sendable func login(_ request: Request, context: PlazaContext) async throws -> Response {
        let form = try await form(LoginForm.self, request, context: context)
        try checkCSRF(form._csrf, request, context: context)
        let t = localizer(context)
        let next = Self.safeNext(form.next)
        do {
            let auth = try await api.accounts.signIn(
                LoginRequest(login: form.login ?? "", password: form.password ?? ""), request: request, context: context
            )
            return try await signedIn(auth, context: context, next: await afterSignIn(next, auth))
        } catch let error as PlazaError where error.challenge != nil {
            let body = LoginPage(login: form.login ?? "", next: next, challenge: error.challenge)
            return try await page("login", title: t("Sign in"), nav: .login, body, request: request, context: context)
        } catch let error as PlazaError {
            let body = LoginPage(error: error.message, login: form.login ?? "", next: next)
            return try await page(
                "login", title: t("Sign in"), nav: .login, body, request: request, context: context,
                status: error.status)
        }
    }

    /// The code form after a right password with two-factor sign-in on; a wrong code asks again.
    @Sendable func loginSecondFactor(_ request: Request, context: PlazaContext) async throws -> Response {
        let form = try await form(SecondFactorForm.self, request, context: context)
        try checkCSRF(form._csrf, request, context: context)
        let t = localizer(context)
        let next = Self.safeNext(form.next)
        let challenge = form.challenge ?? ""
        do {
            let auth = try await api.accounts.completeSignIn(
                SecondFactorRequest(challenge: challenge, code: form.code ?? ""), request: request, context: context)
            return try await signedIn(auth, context: context, next: await afterSignIn(next, auth))
        } catch let error as PlazaError {
            // Asked again unless the challenge is gone (then the password form).
            let expired = error.code == AccountsController.challengeGone.code
            let body = LoginPage(error: error.message, next: next, challenge: expired ? nil : challenge)
            return try await page(
                "login", title: t("Sign in"), nav: .login, body, request: request, context: context,
                status: error.status)
        }
    }

    @Sendable func signupPage(_ request: Request, context: PlazaContext) async throws -> Response {
        if context.identity != nil { return Self.redirect(to: "/") }
        let t = localizer(context)
        var body = SignupPage(about: try await api.accounts.instance.info())
        body.invite = String((request.uri.queryParameters.get("invite") ?? "").prefix(64))
        return try await page(
            "signup", title: t("Create your account"), nav: .signup, body, request: request, context: context)
    }

    @Sendable func signup(_ request: Request, context: PlazaContext) async throws -> Response {
        let form = try await form(SignupForm.self, request, context: context)
        try checkCSRF(form._csrf, request, context: context)
        let body = RegisterRequest(
            username: form.username ?? "", email: form.email ?? "", password: form.password ?? "",
            displayName: form.displayName.flatMap { $0.isEmpty ? nil : $0 },
            // A zone the browser names that Plaza does not know is left out rather than refused.
            timeZone: form.timeZone.flatMap { Validate.timeZone($0) != nil ? $0 : nil },
            // The page's language, kept: mails and pushes speak it before any setting is changed.
            language: context.language.rawValue, invite: form.invite, reason: form.reason)
        let t = localizer(context)
        var page = SignupPage(about: try await api.accounts.instance.info())
        do {
            switch try await api.accounts.signUp(body, request: request, context: context) {
            case .signedIn(let auth): return try await signedIn(auth, context: context, next: "/")
            case .pending:
                page.pendingEmail = body.email
                return try await self.page(
                    "signup", title: t("Create your account"), nav: .signup, page, request: request, context: context,
                    status: .accepted)
            }
        } catch let error as PlazaError {
            page.error = error.message
            page.username = body.username
            page.email = body.email
            page.displayName = form.displayName ?? ""
            page.invite = form.invite ?? ""
            page.reason = form.reason ?? ""
            return try await self.page(
                "signup", title: t("Create your account"), nav: .signup, page, request: request, context: context,
                status: error.status)
        }
    }

    /// Where a sign-in goes: `next` when the sign-in page was given one, else the space the
    /// person viewed last (a student lands in their course), else home.
    func afterSignIn(_ next: String, _ auth: AuthResponse) async -> String {
        guard next == "/", let viewer = Int64(auth.user.user.id) else { return next }
        return await lastSpacePath(auth.user.preferences, viewer: viewer) ?? next
    }

    /// `/s/{slug}` of the space in the `lastSpace` preference, when it is one the person may
    /// still open (not deleted, nor private and left).
    func lastSpacePath(_ preferences: JSONValue, viewer: Int64) async -> String? {
        guard case .object(let prefs) = preferences, case .string(let slug)? = prefs["lastSpace"], !slug.isEmpty,
            slug.utf8.count <= 64, slug.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }),
            (try? await stores.spaces.key(slug: slug, viewer: viewer)) != nil
        else { return nil }
        return PublicLinks.paths.space(slug)
    }

    /// The browser's new session, and on to `next`. Signing in again from a browser that still
    /// had a session replaces it.
    func signedIn(_ auth: AuthResponse, context: PlazaContext, next: String) async throws -> Response {
        if let old = context.identity {
            _ = try await stores.accounts.deleteSession(id: old.sessionID, userID: old.userID)
        }
        var response = Self.redirect(to: next)
        response.setCookie(
            WebSession.sessionCookie(token: auth.token, maxAgeDays: sessionDays, secure: context.isHTTPS))
        // Marks this browser as a device that signed in to the account (see `DeviceTokens`).
        if let device = auth.deviceToken { response.setCookie(DeviceTokens.cookie(device, secure: context.isHTTPS)) }
        return response
    }

    @Sendable func logout(_ request: Request, context: PlazaContext) async throws -> Response {
        let form = try await form(LogoutForm.self, request, context: context)
        try checkCSRF(form._csrf, request, context: context)
        if let me = context.identity {
            _ = try await stores.accounts.deleteSession(id: me.sessionID, userID: me.userID)
        }
        var response = Self.redirect(to: "/login")
        response.setCookie(WebSession.expiredSessionCookie(secure: context.isHTTPS))
        return response
    }
}

/// Chooses the web page's language and time zone: the signed-in person's preferences
/// (`language`, `timeZone`), else the browser's `Accept-Language` (and UTC, which scripts turn
/// into the browser's own time where they show times).
struct WebLocaleMiddleware: RouterMiddleware {
    typealias Context = PlazaContext
    let accounts: AccountStore

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var context = context
        var chosen: Language?
        if let identity = context.identity {
            let preferences = try await accounts.preferences(userID: identity.userID)
            chosen = preferences["language"]?.stringValue.flatMap(Language.init(tag:))
            context.timeZone = preferences["timeZone"]?.stringValue.flatMap(TimeZone.init(identifier:))
        }
        context.language = chosen ?? Language.preferred(acceptLanguage: request.headers[.acceptLanguage])
        return try await next(request, context)
    }
}
