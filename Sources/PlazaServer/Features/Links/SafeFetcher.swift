import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Fetches a URL from the open web on behalf of a user without letting the URL reach inside
/// the server's network: http and https only, every hop's host resolved and checked against
/// the `AddressPolicy` before connecting (and the connection pinned to the checked address, so
/// a second DNS answer cannot differ), a bounded number of redirects, an overall deadline, and
/// a cap on the bytes read.
struct SafeFetcher: Sendable {
    var policy: AddressPolicy
    /// False limits fetching to the allow list and looks up no host name but `localhost`
    /// (closed networks, and test runs that must stay on loopback).
    var publicAddresses = true
    var timeout: Duration = .seconds(5)
    var maxRedirects = 3
    /// True (push endpoints): plain http only to allow-listed addresses, https elsewhere.
    var plainHTTPOnlyToAllowed = false
    /// Long-lived clients, one per host and checked address, whose connections are kept for
    /// the next request (push services take many requests); nil: a client per request.
    var clients: PinnedClients? = nil

    struct Fetched: Sendable {
        /// Where the last hop was fetched from.
        var url: URL
        var status: Int
        var contentType: String?
        /// A redirect's target, as sent.
        var location: String? = nil
        /// The `Retry-After` header, as sent.
        var retryAfter: String? = nil
        var body: [UInt8]
        /// True when the body was cut off at the cap.
        var truncated: Bool
    }

    enum Failure: Error, CustomStringConvertible, Equatable {
        case badURL(String)
        /// The address is not one the policy lets the server reach.
        case refused(String)
        case tooManyRedirects
        case timedOut
        case status(Int)
        case network(String)

        var description: String {
            switch self {
            case .badURL(let url): "not an http(s) URL: \(url)"
            case .refused(let reason): "refused: \(reason)"
            case .tooManyRedirects: "too many redirects"
            case .timedOut: "timed out"
            case .status(let code): "HTTP \(code)"
            case .network(let message): "network error: \(message)"
            }
        }

        /// Failures that another attempt later might not meet.
        var mayPass: Bool {
            switch self {
            case .timedOut, .network: true
            case .status(let code): code >= 500 || code == 429 || code == 408
            case .badURL, .refused, .tooManyRedirects: false
            }
        }
    }

    /// Fetches `url`, following redirects, reading at most `maxBytes` of the final body.
    func fetch(_ url: String, maxBytes: Int, accept: String) async throws -> Fetched {
        try await withDeadline { try await self.follow(url, maxBytes: maxBytes, accept: accept) }
    }

    /// POSTs `body` to `url` (Web Push): one request, no redirect followed, the same address
    /// checks; plain http only to an allow-listed address when `plainHTTPOnlyToAllowed`.
    func post(_ url: String, headers: [(String, String)], body: [UInt8], maxBytes: Int) async throws -> Fetched {
        try await withDeadline {
            guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(),
                scheme == "http" || scheme == "https", let host = parsed.host, !host.isEmpty
            else { throw Failure.badURL(url) }
            let address = try await self.checkedAddress(host: host)
            if scheme == "http", self.plainHTTPOnlyToAllowed,
                !self.policy.allowed.contains(where: { $0.contains(address) })
            {
                throw Failure.refused("\(host) is not allow-listed for plain http")
            }
            return try await self.send(
                parsed, pinnedTo: address, method: .POST, headers: headers, body: body, maxBytes: maxBytes)
        }
    }

    /// Runs `work` within `timeout`.
    private func withDeadline(_ work: @escaping @Sendable () async throws -> Fetched) async throws -> Fetched {
        let deadline = ContinuousClock.now + timeout
        return try await withThrowingTaskGroup(of: Fetched?.self) { group in
            group.addTask { try await work() }
            group.addTask {
                try await Task.sleep(until: deadline)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let fetched = first else { throw Failure.timedOut }
            return fetched
        }
    }

    private func follow(_ start: String, maxBytes: Int, accept: String) async throws -> Fetched {
        var next = start
        for _ in 0...maxRedirects {
            guard let url = URL(string: next), let scheme = url.scheme?.lowercased(),
                scheme == "http" || scheme == "https",
                let host = url.host, !host.isEmpty
            else { throw Failure.badURL(next) }
            let address = try await checkedAddress(host: host)
            let hop = try await send(
                url, pinnedTo: address, method: .GET,
                headers: [("Accept", accept), ("User-Agent", "Plaza link preview (+https://github.com/plaza)")],
                body: nil, maxBytes: maxBytes)
            if [301, 302, 303, 307, 308].contains(hop.status), let location = hop.location {
                guard let target = URL(string: location, relativeTo: url)?.absoluteURL else {
                    throw Failure.badURL(location)
                }
                next = target.absoluteString
                continue
            }
            guard (200..<300).contains(hop.status) else { throw Failure.status(hop.status) }
            return hop
        }
        throw Failure.tooManyRedirects
    }

    /// The address to connect to for `host`: every address it resolves to must be allowed, so
    /// a name with one public and one private answer is refused.
    func checkedAddress(host: String) async throws -> IPAddress {
        let addresses: [IPAddress]
        if let literal = IPAddress(host) {
            addresses = [literal]
        } else if publicAddresses || host.lowercased() == "localhost" {
            addresses = try await Self.resolve(host)
        } else {
            throw Failure.refused("\(host) is a name, and only allow-listed addresses may be fetched")
        }
        guard let first = addresses.first else { throw Failure.network("\(host) does not resolve") }
        for address in addresses {
            if let reason = policy.refusal(for: address) {
                throw Failure.refused("\(host) resolves to \(address) (\(reason))")
            }
            if !publicAddresses, !policy.allowed.contains(where: { $0.contains(address) }) {
                throw Failure.refused("\(host) resolves to \(address), which is not allow-listed")
            }
        }
        return first
    }

    /// One request; a redirect is returned, not followed.
    private func send(
        _ url: URL, pinnedTo address: IPAddress, method: HTTPMethod, headers: [(String, String)], body: [UInt8]?,
        maxBytes: Int
    ) async throws -> Fetched {
        let kept = clients?.client(host: url.host ?? "", address: address)
        let client = kept ?? Self.makeClient(host: url.host ?? "", address: address)
        func finish() async throws { if kept == nil { try await client.shutdown() } }
        do {
            var request = HTTPClientRequest(url: url.absoluteString)
            request.method = method
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            request.headers.add(name: "Accept-Encoding", value: "identity")
            if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
            let response: HTTPClientResponse
            do {
                response = try await client.execute(request, timeout: .seconds(Int64(timeout.components.seconds) + 1))
            } catch let error as HTTPClientError
                where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout
            {
                throw Failure.timedOut
            } catch is CancellationError {
                throw Failure.timedOut
            } catch let failure as Failure {
                throw failure
            } catch {
                throw Failure.network(String(describing: error))
            }
            let status = Int(response.status.code)
            if (300..<400).contains(status) {
                try await finish()
                return Fetched(
                    url: url, status: status, contentType: nil, location: response.headers.first(name: "location"),
                    body: [], truncated: false)
            }
            var body: [UInt8] = []
            var truncated = false
            for try await chunk in response.body {
                let room = maxBytes - body.count
                body += chunk.readableBytesView.prefix(room)
                if chunk.readableBytes > room {
                    truncated = true
                    break
                }
            }
            try await finish()
            return Fetched(
                url: url, status: status, contentType: response.headers.first(name: "content-type"),
                retryAfter: response.headers.first(name: "retry-after"), body: body, truncated: truncated)
        } catch {
            try? await finish()
            if let failure = error as? Failure { throw failure }
            if error is CancellationError { throw Failure.timedOut }
            throw Failure.network(String(describing: error))
        }
    }

    /// A client that connects `host` to `address` (checked already) and nowhere else.
    static func makeClient(host: String, address: IPAddress) -> HTTPClient {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow, timeout: .init(connect: .seconds(5), read: .seconds(5)),
            decompression: .disabled)
        if IPAddress(host) == nil { configuration.dnsOverride = [host: address.description] }
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Lookups in flight: each holds a thread, so a flood of names that never answer is cut off.
    private static let lookups = NIOLockedValueBox(0)
    static let maxLookups = 16

    /// The host's addresses from the system resolver. `getaddrinfo` blocks and cannot be
    /// stopped, so it runs on a thread of its own and a cancelled (timed-out) fetch stops
    /// waiting for it at once instead of holding a thread the server shares.
    static func resolve(_ host: String) async throws -> [IPAddress] {
        guard
            lookups.withLockedValue({ count in
                guard count < maxLookups else { return false }
                count += 1
                return true
            })
        else { throw Failure.network("too many name lookups in flight") }
        let answer = NIOLockedValueBox<CheckedContinuation<[IPAddress], any Error>?>(nil)
        let finish: @Sendable (Result<[IPAddress], any Error>) -> Void = { result in
            answer.withLockedValue { continuation in
                continuation?.resume(with: result)
                continuation = nil
            }
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                answer.withLockedValue { $0 = continuation }
                if Task.isCancelled { return finish(.failure(Failure.timedOut)) }
                Thread.detachNewThread {
                    let result = Result { try lookUp(host) }
                    lookups.withLockedValue { $0 -= 1 }
                    finish(result)
                }
            }
        } onCancel: {
            finish(.failure(Failure.timedOut))
        }
    }

    private static func lookUp(_ host: String) throws -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let list else {
            throw Failure.network("\(host) does not resolve")
        }
        defer { freeaddrinfo(list) }
        var addresses: [IPAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = list
        while let entry = cursor {
            var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            if entry.pointee.ai_family == AF_INET {
                entry.pointee.ai_addr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    var a = $0.pointee.sin_addr
                    _ = inet_ntop(AF_INET, &a, &buffer, socklen_t(buffer.count))
                }
            } else if entry.pointee.ai_family == AF_INET6 {
                entry.pointee.ai_addr.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    var a = $0.pointee.sin6_addr
                    _ = inet_ntop(AF_INET6, &a, &buffer, socklen_t(buffer.count))
                }
            }
            if let address = IPAddress(
                String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)),
                !addresses.contains(address)
            {
                addresses.append(address)
            }
            cursor = entry.pointee.ai_next
        }
        return addresses
    }
}

/// `SafeFetcher`'s long-lived clients, keyed by host and checked address: a name that resolves
/// elsewhere later gets a client of its own, pinned to that address. At most `limit` are kept;
/// the oldest is shut down to make room. `shutdown()` ends them all (the owner's last act).
final class PinnedClients: Sendable {
    private let clients = NIOLockedValueBox([(key: String, client: HTTPClient)]())
    let limit: Int

    init(limit: Int = 64) { self.limit = limit }

    func client(host: String, address: IPAddress) -> HTTPClient {
        let key = "\(host.lowercased())|\(address)"
        let (client, evicted) = clients.withLockedValue { clients -> (HTTPClient, HTTPClient?) in
            if let found = clients.first(where: { $0.key == key }) { return (found.client, nil) }
            let made = SafeFetcher.makeClient(host: host, address: address)
            clients.append((key, made))
            return (made, clients.count > limit ? clients.removeFirst().client : nil)
        }
        if let evicted { Task { try? await evicted.shutdown() } }
        return client
    }

    func shutdown() async {
        let all = clients.withLockedValue { clients in
            defer { clients = [] }
            return clients
        }
        for entry in all { try? await entry.client.shutdown() }
    }
}
