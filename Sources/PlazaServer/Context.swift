import Foundation
import Hummingbird
import NIOCore
import NIOFoundationCompat
import PlazaAPI

/// Who is signed in on this request.
public struct Identity: Sendable {
    public let userID: Int64
    public let sessionID: Int64
    public let isAdmin: Bool
    /// A token an app got through OAuth (`/oauth/token`) may do only what its scopes grant; nil
    /// for Plaza's own sessions, which may do everything.
    let scopes: OAuthScopes?

    init(userID: Int64, sessionID: Int64, isAdmin: Bool, scopes: OAuthScopes? = nil) {
        self.userID = userID
        self.sessionID = sessionID
        self.isAdmin = isAdmin
        self.scopes = scopes
    }

    /// True when this identity may do what `scope` names (always, for Plaza's own sessions).
    package func allows(_ scope: String) -> Bool { scopes?.allows(scope) ?? true }
}

/// An app acting on its own (OAuth's `client_credentials`), without a person.
package struct AppCredential: Sendable {
    package let app: OAuthStore.App
    package let scopes: OAuthScopes

    package init(app: OAuthStore.App, scopes: OAuthScopes) {
        self.app = app
        self.scopes = scopes
    }
}

/// The request context: the signed-in identity (if any) and the client address.
public struct PlazaContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var identity: Identity?
    /// An OAuth app acting on its own (`client_credentials` tokens), on Mastodon's routes.
    package var appCredential: AppCredential?
    /// The client's address as text ("local" when unknown): the TCP peer, or behind trusted
    /// proxies the address they forwarded for (`ClientAddressMiddleware`).
    public private(set) var remoteAddress: String
    /// The TCP peer, and the client's address (the peer unless a trusted proxy forwarded another).
    let peerAddress: IPAddress?
    private(set) var clientAddress: IPAddress?
    /// The client reached us over HTTPS: the configured public URL is https, or a trusted proxy
    /// says so (`X-Forwarded-Proto` or `Forwarded: proto=`), set by `ClientAddressMiddleware`.
    var isHTTPS = false
    /// The client's connection.
    let channel: any Channel
    /// Completes when the client's connection closes: endless responses (the event stream) stop then.
    package var connectionClosed: EventLoopFuture<Void> { channel.closeFuture }
    var bodyLimit: Int
    /// The web app's language and time zone for this request (`WebLocaleMiddleware`).
    var language = Language.en
    var timeZone: TimeZone?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        // A dual-stack socket reports IPv4 peers as ::ffff:a.b.c.d; they are IPv4 clients.
        let peer = source.channel.remoteAddress?.ipAddress.flatMap(IPAddress.init)?.unmapped
        self.peerAddress = peer
        self.clientAddress = peer
        self.remoteAddress = peer?.description ?? "local"
        self.channel = source.channel
        self.bodyLimit = 64 * 1024
    }

    public var maxUploadSize: Int { bodyLimit }
    public var requestDecoder: PlazaRequestDecoder { PlazaRequestDecoder() }
    public var responseEncoder: PlazaResponseEncoder { PlazaResponseEncoder() }

    var viewerID: Int64? { identity?.userID }

    /// Who the client is for rate limits and sign-in throttles: an IPv4 address, an IPv6 /64.
    var clientKey: String { clientAddress?.clientKey ?? "local" }

    mutating func setClientAddress(_ address: IPAddress?) {
        clientAddress = address
        remoteAddress = address?.description ?? "local"
    }
}

/// The context of routes for signed-in people only: the request's context with the person
/// known. Routes registered on `RouterGroup.signedIn` get it; anyone else gets 401 before the
/// handler runs.
public struct SignedInContext: ChildRequestContext {
    /// The request's context as the middleware left it (address, connection, body limit).
    public private(set) var base: PlazaContext
    /// Who is signed in.
    public let user: Identity

    public init(context: PlazaContext) throws {
        guard let identity = context.identity else { throw PlazaError.unauthorized }
        self.base = context
        self.user = identity
    }

    public var coreContext: CoreRequestContextStorage {
        get { base.coreContext }
        set { base.coreContext = newValue }
    }

    public var maxUploadSize: Int { base.maxUploadSize }
    public var requestDecoder: PlazaRequestDecoder { base.requestDecoder }
    public var responseEncoder: PlazaResponseEncoder { base.responseEncoder }
}

/// Encodes handler results as compact UTF-8 JSON.
public struct PlazaResponseEncoder: ResponseEncoder {
    public func encode(_ value: some Encodable, from request: Request, context: some RequestContext) throws -> Response
    {
        let body: ByteBuffer
        if let writable = value as? any JSONWritable {
            body = ByteBuffer(bytes: JSONWriter.encode(writable, capacity: 4096))
        } else {
            body = ByteBuffer(data: try JSON.encoder.encode(value))
        }
        return Response(
            status: .ok,
            headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: body)
        )
    }
}
