import Hummingbird
import PlazaAPI

/// The pages mailed links open: choosing a new password and confirming an address, and the
/// form that asks for a reset link. Each calls the API's handler, as the other pages do.
struct WebEmailPages: FeatureRoutes {
    let web: WebController
    var accounts: AccountsController { web.api.accounts }

    var routes: RouteCollection<PlazaContext> {
        let routes = RouteCollection(context: PlazaContext.self)
        routes.get("forgot-password", use: forgotPage)
        routes.post("forgot-password", use: forgot)
        routes.get("reset-password", use: resetPage)
        routes.post("reset-password", use: reset)
        routes.get("verify-email", use: verifyPage)
        routes.post("verify-email", use: verify)
        return routes
    }

    struct EmailForm: Decodable {
        var email: String?
        var _csrf: String?
    }

    struct TokenForm: Decodable {
        var token: String?
        var newPassword: String?
        var _csrf: String?
    }

    @Sendable func forgotPage(_ request: Request, context: PlazaContext) async throws -> Response {
        let t = web.localizer(context)
        return try await web.page(
            "forgot-password", title: t("Forgot your password?"), nav: .login, ForgotPasswordPage(), request: request,
            context: context)
    }

    @Sendable func forgot(_ request: Request, context: PlazaContext) async throws -> Response {
        let form = try await web.form(EmailForm.self, request, context: context)
        try web.checkCSRF(form._csrf, request, context: context)
        var body = ForgotPasswordPage(email: form.email ?? "")
        var status = HTTPResponse.Status.ok
        do {
            try await accounts.requestReset(email: body.email)
            body.sent = true
        } catch let error as PlazaError {
            (body.error, status) = (error.message, error.status)
        }
        let t = web.localizer(context)
        return try await web.page(
            "forgot-password", title: t("Forgot your password?"), nav: .login, body, request: request,
            context: context, status: status)
    }

    @Sendable func resetPage(_ request: Request, context: PlazaContext) async throws -> Response {
        let t = web.localizer(context)
        return try await web.page(
            "reset-password", title: t("Choose a new password"),
            ResetPasswordPage(token: request.query("token") ?? ""), request: request, context: context)
    }

    @Sendable func reset(_ request: Request, context: PlazaContext) async throws -> Response {
        let form = try await web.form(TokenForm.self, request, context: context)
        try web.checkCSRF(form._csrf, request, context: context)
        let token = form.token ?? ""
        let t = web.localizer(context)
        do {
            let auth = try await accounts.reset(
                ResetPasswordRequest(token: token, newPassword: form.newPassword ?? ""), request: request,
                context: context)
            return try await web.signedIn(auth, context: context, next: await web.afterSignIn("/", auth))
        } catch let error as PlazaError where error.challenge != nil {
            // Two-factor sign-in is on: the password is changed, and the code form finishes signing in.
            let body = LoginPage(error: error.message, next: "/", challenge: error.challenge)
            return try await web.page(
                "login", title: t("Sign in"), nav: .login, body, request: request, context: context)
        } catch let error as PlazaError {
            return try await web.page(
                "reset-password", title: t("Choose a new password"),
                ResetPasswordPage(error: error.message, token: token), request: request, context: context,
                status: error.status)
        }
    }

    @Sendable func verifyPage(_ request: Request, context: PlazaContext) async throws -> Response {
        let t = web.localizer(context)
        return try await web.page(
            "verify-email", title: t("Confirm your email address"),
            VerifyEmailPage(token: request.query("token") ?? ""), request: request, context: context)
    }

    @Sendable func verify(_ request: Request, context: PlazaContext) async throws -> Response {
        let form = try await web.form(TokenForm.self, request, context: context)
        try web.checkCSRF(form._csrf, request, context: context)
        let token = form.token ?? ""
        var body = VerifyEmailPage(token: token)
        var status = HTTPResponse.Status.ok
        do {
            try await accounts.verify(token: token)
            body.verified = true
        } catch let error as PlazaError {
            (body.error, status) = (error.message, error.status)
        }
        let t = web.localizer(context)
        return try await web.page(
            "verify-email", title: t("Confirm your email address"), body, request: request, context: context,
            status: status)
    }
}
