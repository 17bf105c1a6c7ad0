import Foundation
import HTTPTypes
import Hummingbird
import PlazaAPI

/// Errors on the web app's pages become HTML: a sign-in redirect for 401, else an error
/// page with the same message the API would give. Only the web app's routes pass it: the
/// other doors keep their JSON errors.
struct WebErrorMiddleware: RouterMiddleware {
    typealias Context = PlazaContext
    let renderer: WebRenderer
    /// The instance's name as last read, for the title and brand.
    let siteName: InstanceName

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as PlazaError {
            if error.status == .unauthorized, request.method == .get {
                let next = request.uri.path + (request.uri.query.map { "?" + $0 } ?? "")
                return WebController.redirect(
                    to: "/login?next=" + (next.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "/"))
            }
            return page(status: error.status, message: error.message, headers: error.headers, request: request)
        } catch let error as HTTPError {
            return page(
                status: error.status, message: ErrorMiddleware<Context>.describe(error).1, headers: error.headers,
                request: request)
        }
    }

    /// Rendered without the stores: no one shows as signed in, there is no form to protect, and
    /// the language is the browser's (the person's setting is read further in).
    func page(status: HTTPResponse.Status, message: String, headers: HTTPFields, request: Request) -> Response {
        let language = Language.preferred(acceptLanguage: request.headers[.acceptLanguage])
        let catalog = renderer.catalogs[language] ?? .english
        let t = Localizer(catalog: catalog, timeZone: TimeZone(identifier: "UTC") ?? .current)
        var layout = Layout(
            title: Self.title(of: status, t: t), nav: nil, assetVersion: renderer.assetVersion, csrf: "", t: t)
        layout.scriptMessages = renderer.scriptMessages[language] ?? "{}"
        layout.siteName = siteName.current
        let view = WebPage(layout: layout, body: ErrorPage(status: status.code, message: catalog.text(message)))
        var response = renderer.html("error", view, language: language, status: status)
        for field in headers { response.headers.append(field) }
        return response
    }

    /// The error page's heading: the status's reason phrase, in the reader's language for the
    /// statuses pages give.
    static func title(of status: HTTPResponse.Status, t: Localizer) -> String {
        switch status.code {
        case 400: t("Bad Request")
        case 401: t("Unauthorized")
        case 403: t("Forbidden")
        case 404: t("Not Found")
        case 405: t("Method Not Allowed")
        case 409: t("Conflict")
        case 410: t("Gone")
        case 413: t("Content Too Large")
        case 415: t("Unsupported Media Type")
        case 422: t("Unprocessable Content")
        case 429: t("Too Many Requests")
        case 500: t("Internal Server Error")
        case 502: t("Bad Gateway")
        case 503: t("Service Unavailable")
        default: status.reasonPhrase
        }
    }
}
