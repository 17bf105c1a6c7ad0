import Foundation
import HTTPTypes
import Hummingbird

/// The reverse proxies in front of the server, and which header they write.
///
/// The client address is the TCP peer unless the peer is a trusted proxy; then it is the
/// rightmost address in the forwarding header that is not a trusted proxy (each proxy appends the
/// address it received the request from, so everything left of the last untrusted hop was written
/// by the client and may be forged). Only the header the operator's proxies write is read: a
/// proxy passes the other one through from the client untouched.
///
/// The headers are hostile input: an examined hop that is not an address (a typo, `unknown`, an
/// obfuscated node, an over-long chain) falls back to the peer, never to a guess.
struct TrustedProxies: Sendable {
    enum Header: String, Sendable, CaseIterable {
        case xForwardedFor = "x-forwarded-for"
        case forwarded
    }

    let blocks: [IPBlock]
    let header: Header

    static let none = TrustedProxies(blocks: [], header: .xForwardedFor)
    /// Hops examined from the right before giving up (a chain of proxies is short).
    static let maxHops = 32
    static let maxHeaderBytes = 8192

    struct ParseError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    /// Parses "10.0.0.0/8, ::1" (a bare address is a block of one) and the header's name.
    static func parse(_ list: String, header: String) throws -> TrustedProxies {
        var blocks: [IPBlock] = []
        for entry in list.split(separator: ",") {
            let text = entry.trimmingCharacters(in: .whitespaces)
            if text.isEmpty { continue }
            guard let block = IPBlock(text) else {
                throw ParseError(
                    message:
                        "trusted-proxies entry \"\(text)\" is not an IP address or CIDR block (like 10.0.0.0/8 or fd00::/8)"
                )
            }
            blocks.append(block)
        }
        guard let header = Header(rawValue: header.lowercased()) else {
            throw ParseError(message: "forwarded-header must be x-forwarded-for or forwarded, not \(header)")
        }
        return TrustedProxies(blocks: blocks, header: header)
    }

    func isTrusted(_ address: IPAddress) -> Bool {
        let plain = address.unmapped
        return blocks.contains { $0.contains(plain) }
    }

    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
    static let forwarded = HTTPField.Name("Forwarded")!

    /// The client's address for a request that came from `peer` with `headers`.
    func client(peer: IPAddress?, headers: HTTPFields) -> IPAddress? {
        guard let peer, !blocks.isEmpty, isTrusted(peer) else { return peer }
        let lines = headers[values: header == .forwarded ? Self.forwarded : Self.xForwardedFor]
        guard !lines.isEmpty, lines.reduce(0, { $0 + $1.utf8.count }) <= Self.maxHeaderBytes else { return peer }
        // Several header lines are one list, in order (RFC 9110 §5.3). Commas never occur inside
        // a valid hop, so a plain split keeps a client's stray quote from swallowing the proxy's entry.
        let hops = lines.joined(separator: ",").split(separator: ",", omittingEmptySubsequences: false)
        var examined = 0
        for hop in hops.reversed() {
            examined += 1
            guard examined <= Self.maxHops else { return peer }
            let parsed =
                header == .forwarded ? Self.forwardedFor(hop) : Self.node(hop.trimmingCharacters(in: .whitespaces))
            guard let address = parsed else { return peer }
            if !isTrusted(address) { return address }
        }
        // Every hop is one of ours: the request started inside the trusted network.
        return hops.first.flatMap {
            header == .forwarded ? Self.forwardedFor($0) : Self.node($0.trimmingCharacters(in: .whitespaces))
        } ?? peer
    }

    /// The address in one `Forwarded` element's `for=` parameter (RFC 7239 §4, §6), or nil.
    static func forwardedFor(_ element: Substring) -> IPAddress? {
        var found: IPAddress?
        var seen = false
        for pair in element.split(separator: ";", omittingEmptySubsequences: false) {
            let trimmed = pair.trimmingCharacters(in: .whitespaces)
            guard let equals = trimmed.firstIndex(of: "=") else { return nil }
            let name = trimmed[..<equals]
            guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte) else { return nil }
            guard name.lowercased() == "for" else { continue }
            guard !seen else { return nil }
            seen = true
            var value = trimmed[trimmed.index(after: equals)...]
            if value.first == "\"" {
                guard value.count >= 2, value.last == "\"" else { return nil }
                value = value.dropFirst().dropLast()
                // Escapes and quotes have no place in a node name.
                guard !value.contains("\\"), !value.contains("\"") else { return nil }
            } else {
                // Unquoted, the value is a token: an IPv4 address fits, "[v6]" does not (§6).
                guard !value.isEmpty, value.utf8.allSatisfy(isTokenByte) else { return nil }
            }
            found = node(String(value))
            guard found != nil else { return nil }
        }
        return found
    }

    /// A node as proxies write it: `1.2.3.4`, `1.2.3.4:port`, `2001:db8::1`, `[2001:db8::1]`, `[2001:db8::1]:port`.
    static func node(_ text: String) -> IPAddress? {
        guard !text.isEmpty, text.utf8.count <= 64 else { return nil }
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.first == ":", isPort(rest.dropFirst()) else { return nil }
            }
            // Brackets hold an IPv6 address only; a zone has no meaning for a remote client.
            let inner = text[text.index(after: text.startIndex)..<close]
            guard inner.contains(":"), !inner.contains("%"), let address = IPAddress(String(inner)) else { return nil }
            return address
        }
        let colons = text.utf8.count(where: { $0 == UInt8(ascii: ":") })
        if colons == 1 {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, isPort(parts[1]), let address = IPAddress(String(parts[0])), case .v4 = address
            else { return nil }
            return address
        }
        guard !text.contains("%"), let address = IPAddress(text) else { return nil }
        return address
    }

    private static func isPort(_ text: Substring) -> Bool {
        (1...5).contains(text.utf8.count) && text.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// RFC 9110 `tchar`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"),
            UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"),
            UInt8(ascii: "~"):
            true
        default: false
        }
    }
}

/// Sets the context's client address from the peer and, behind trusted proxies, the forwarding
/// header; runs first, so rate limits, throttles, sessions and the request log all see it.
struct ClientAddressMiddleware: RouterMiddleware {
    typealias Context = PlazaContext
    let proxies: TrustedProxies
    /// The public URL is https: every request counts as HTTPS (the proxy in front terminates it).
    var alwaysHTTPS = false

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var context = context
        if !proxies.blocks.isEmpty {
            context.setClientAddress(proxies.client(peer: context.peerAddress, headers: request.headers))
        }
        context.isHTTPS =
            alwaysHTTPS || request.uri.scheme?.rawValue == "https"
            || (context.peerAddress.map(proxies.isTrusted) == true && Self.forwardedProtoIsHTTPS(request.headers))
        context.logger[metadataKey: "client"] = .string(context.remoteAddress)
        var response = try await next(request, context)
        // HSTS (RFC 6797): browsers go straight to HTTPS for a year. Only ever sent over HTTPS.
        if context.isHTTPS { response.headers[.strictTransportSecurity] = "max-age=31536000" }
        return response
    }

    static let xForwardedProto = HTTPField.Name("X-Forwarded-Proto")!

    /// What a trusted proxy says of the scheme the client used: the last `X-Forwarded-Proto`
    /// value, or the last `Forwarded` element's `proto`.
    static func forwardedProtoIsHTTPS(_ headers: HTTPFields) -> Bool {
        if let proto = headers[values: xForwardedProto].last?.split(separator: ",").last {
            return proto.trimmingCharacters(in: .whitespaces).lowercased() == "https"
        }
        guard let element = headers[values: TrustedProxies.forwarded].last?.split(separator: ",").last else {
            return false
        }
        return element.split(separator: ";").contains { pair in
            pair.trimmingCharacters(in: .whitespaces).lowercased() == "proto=https"
                || pair.trimmingCharacters(in: .whitespaces).lowercased() == "proto=\"https\""
        }
    }
}
