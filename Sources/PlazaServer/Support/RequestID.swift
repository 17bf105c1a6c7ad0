import HTTPTypes
import Hummingbird

/// Gives every request an id, in its log lines (`request_id`) and in the answer's
/// `X-Request-Id`, so that a person's report, a proxy's log and this server's log meet. A
/// trusted proxy's id (nginx's `$request_id`) is kept when it is a plain token; anyone else's
/// is replaced, so a client cannot write into the logs or pose as another request.
struct RequestIDMiddleware: RouterMiddleware {
    typealias Context = PlazaContext
    let proxies: TrustedProxies

    static let header = HTTPField.Name("X-Request-Id")!
    static let maxLength = 128

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var context = context
        let forwarded = context.peerAddress.flatMap { proxies.isTrusted($0) ? request.headers[Self.header] : nil }
        let id = forwarded.flatMap(Self.valid) ?? Self.make()
        context.logger[metadataKey: "request_id"] = .string(id)
        // Errors are answers by now (ErrorMiddleware is inside this one).
        var response = try await next(request, context)
        response.headers[Self.header] = id
        return response
    }

    /// The id when it is 1 to 128 of `A-Z a-z 0-9 - _ . : / + =`.
    static func valid(_ id: String) -> String? {
        let utf8 = id.utf8
        guard (1...maxLength).contains(utf8.count),
            utf8.allSatisfy({ byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
                    UInt8(ascii: ":"), UInt8(ascii: "/"), UInt8(ascii: "+"), UInt8(ascii: "="):
                    true
                default: false
                }
            })
        else { return nil }
        return id
    }

    /// 16 random hex digits.
    static func make() -> String {
        let hex = String(UInt64.random(in: .min ... .max), radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
