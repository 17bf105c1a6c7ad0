import Hummingbird
import PlazaAPI

/// The browser's side of signing in with a provider: off to the provider with a fresh state
/// (also kept in a short cookie, so only the browser that left can come back with it), and
/// back to the callback, which signs in (or links, when settings started it) and goes on.
struct WebIdentityPages: FeatureRoutes {
    let web: WebController
    var identity: IdentityController { web.api.identity }
    static let stateCookie = "plaza_signin_state"

    var routes: RouteCollection<PlazaContext> {
        let routes = RouteCollection(context: PlazaContext.self)
        routes.get("api/v1/auth/providers/{id}/start", use: start)
        routes.get("api/v1/auth/providers/{id}/callback", use: callback)
        // Sign in with Apple posts the answer (response_mode=form_post).
        routes.post("api/v1/auth/providers/{id}/callback", use: callback)
        return routes
    }

    /// The cookie that ties the flow to this browser. Apple's answer is a cross-site POST, which
    /// brings a cookie only with SameSite=None, and browsers take that only over HTTPS.
    static func cookie(_ state: String, secure: Bool, maxAge: Int = 600) -> Cookie {
        Cookie(
            name: WebSession.name(stateCookie, secure: secure), value: state, maxAge: maxAge, path: "/",
            secure: secure, httpOnly: true, sameSite: secure ? .none : .lax)
    }

    /// `?next=` a path to go to after; `?link=1&csrf=…` from settings links the provider to the
    /// signed-in account instead (the CSRF token stops other sites from starting that).
    @Sendable func start(_ request: Request, context: PlazaContext) async throws -> Response {
        let next = WebController.safeNext(request.query("next"))
        var linkUserID: Int64?
        if request.query("link") != nil {
            guard let me = context.identity else { return WebController.redirect(to: "/login?next=/settings") }
            guard
                WebSession.verify(
                    request.query("csrf"), secret: WebSession.sessionToken(request, secure: context.isHTTPS),
                    request: request)
            else {
                throw PlazaError(.forbidden, "csrf_failed", "This link has expired. Reload the page and try again.")
            }
            linkUserID = me.userID
        }
        do {
            let (url, state) = try await identity.authorizationURL(
                provider: context.parameters.string("id"), next: linkUserID == nil ? next : "/settings",
                linkUserID: linkUserID, logger: context.logger)
            var response = Response(status: .found, headers: [.location: url])
            response.setCookie(Self.cookie(state, secure: context.isHTTPS))
            return response
        } catch let error as PlazaError where error.status != .notFound {
            return try await failure(error, request: request, context: context)
        }
    }

    struct CallbackForm: Decodable {
        var code: String?
        var state: String?
        var error: String?
    }

    @Sendable func callback(_ request: Request, context: PlazaContext) async throws -> Response {
        var fields = CallbackForm(
            code: request.query("code"), state: request.query("state"), error: request.query("error"))
        if request.method == .post {
            fields = try await web.form(CallbackForm.self, request, context: context)
        }
        let cookieName = WebSession.name(Self.stateCookie, secure: context.isHTTPS)
        do {
            if let error = fields.error {
                let reason =
                    error == "access_denied"
                    ? "You cancelled the sign-in." : "The provider refused: \(error.prefix(100))."
                throw PlazaError(.badRequest, "provider_refused", reason)
            }
            guard let code = fields.code, let state = fields.state, !code.isEmpty, code.utf8.count <= 2048,
                state.utf8.count <= 128
            else { throw PlazaError(.badRequest, "malformed_request", "The provider's answer is incomplete.") }
            guard let cookie = request.cookies[cookieName]?.value, cookie == state else {
                throw PlazaError(
                    .badRequest, "sign_in_expired",
                    "This sign-in was started in another browser or has expired. Try again.")
            }
            var response: Response
            switch try await identity.finish(
                provider: context.parameters.string("id"), code: code, state: state, request: request, context: context)
            {
            case .signedIn(let auth, let next):
                response = try await web.signedIn(auth, context: context, next: await web.afterSignIn(next, auth))
            case .linked(let next):
                response = WebController.redirect(to: next)
            }
            response.setCookie(Self.cookie("", secure: context.isHTTPS, maxAge: 0))
            return response
        } catch let error as PlazaError where error.challenge != nil {
            let t = web.localizer(context)
            let body = LoginPage(error: error.message, next: "/", challenge: error.challenge)
            return try await web.page(
                "login", title: t("Sign in"), nav: .login, body, request: request, context: context)
        } catch let error as PlazaError {
            return try await failure(error, request: request, context: context)
        }
    }

    /// The sign-in page with what went wrong.
    private func failure(_ error: PlazaError, request: Request, context: PlazaContext) async throws -> Response {
        let t = web.localizer(context)
        let body = LoginPage(error: error.message, next: "/")
        return try await web.page(
            "login", title: t("Sign in"), nav: .login, body, request: request, context: context, status: error.status)
    }
}
