import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import NIOCore
import NIOHTTP1

/// Where `S3MediaStorage` keeps media.
public struct S3MediaSettings: Sendable {
    /// e.g. `https://s3.eu-west-1.amazonaws.com` or `http://127.0.0.1:9000`.
    public var endpoint: String
    public var bucket: String
    public var region: String
    public var accessKeyID: String
    public var secretAccessKey: String
    /// Prepended to every key, e.g. `media/`.
    public var prefix: String

    public init(
        endpoint: String, bucket: String, region: String = "us-east-1", accessKeyID: String, secretAccessKey: String,
        prefix: String = "media/"
    ) {
        self.endpoint = endpoint
        self.bucket = bucket
        self.region = region
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.prefix = prefix
    }
}

/// Media in an S3-compatible bucket (AWS S3, MinIO, Ceph, moto…), addressed path-style
/// (`<endpoint>/<bucket>/<key>`) and signed with AWS Signature Version 4.
struct S3MediaStorage: MediaStorage {
    struct Failure: Error, CustomStringConvertible {
        let method: String
        let key: String
        let status: UInt
        let body: String
        var description: String { "S3 \(method) \(key) answered \(status): \(body.prefix(300))" }
    }

    var settings: S3MediaSettings
    let client: HTTPClient
    let timeout: TimeAmount = .seconds(30)

    func put(_ key: String, bytes: [UInt8], contentType: String) async throws {
        var request = try signedRequest(.PUT, key: key, body: bytes, headers: ["content-type": contentType])
        request.body = .bytes(ByteBuffer(bytes: bytes))
        let response = try await client.execute(request, timeout: timeout)
        try await expect(response, in: [200], method: "PUT", key: key)
    }

    func get(_ key: String) async throws -> ByteBuffer? {
        let response = try await client.execute(try signedRequest(.GET, key: key), timeout: timeout)
        switch response.status {
        case .ok: return try await response.body.collect(upTo: Self.maxObjectBytes)
        case .notFound: return nil
        default: throw await failure(response, method: "GET", key: key)
        }
    }

    /// A GET whose body is passed on as it arrives. For a span, the object's size comes first
    /// (HEAD), so the span asked of S3 always lies inside it (S3 and its clones differ in how
    /// they answer a span past the end).
    func open(_ key: String, range: ByteRange?, context: some RequestContext) async throws -> StoredObject {
        var span: ClosedRange<Int>?
        if let range {
            let head = try await client.execute(try signedRequest(.HEAD, key: key), timeout: timeout)
            switch head.status {
            case .ok:
                guard let total = head.headers.first(name: "content-length").flatMap(Int.init) else {
                    throw Failure(method: "HEAD", key: key, status: 200, body: "no Content-Length")
                }
                guard let resolved = range.resolve(length: total) else { return .unsatisfiable(total: total) }
                span = resolved
            case .notFound: return .missing
            default: throw Failure(method: "HEAD", key: key, status: head.status.code, body: "")
            }
        }
        let headers = span.map { ["range": "bytes=\($0.lowerBound)-\($0.upperBound)"] } ?? [:]
        let response = try await client.execute(try signedRequest(.GET, key: key, headers: headers), timeout: timeout)
        let length = response.headers.first(name: "content-length").flatMap(Int.init)
        switch response.status {
        case .partialContent:
            guard let (served, total) = response.headers.first(name: "content-range").flatMap(Self.contentRange),
                served == span, length == served.count
            else {
                _ = try? await response.body.collect(upTo: 64 * 1024)
                throw Failure(method: "GET", key: key, status: 206, body: "unexpected Content-Range")
            }
            return .body(ResponseBody(asyncSequence: response.body), span: served, total: total)
        case .ok:
            guard let length else { throw Failure(method: "GET", key: key, status: 200, body: "no Content-Length") }
            guard let span else {
                return .body(ResponseBody(asyncSequence: response.body), span: 0...max(0, length - 1), total: length)
            }
            // The store ignored the range: the span is cut from the whole object.
            let bytes = try await response.body.collect(upTo: Self.maxObjectBytes)
            guard let slice = bytes.getSlice(at: span.lowerBound, length: span.count) else {
                throw Failure(method: "GET", key: key, status: 200, body: "shorter than its HEAD said")
            }
            return .body(ResponseBody(byteBuffer: slice), span: span, total: bytes.readableBytes)
        case .notFound:
            _ = try? await response.body.collect(upTo: 64 * 1024)
            return .missing
        default: throw await failure(response, method: "GET", key: key)
        }
    }

    /// `bytes first-last/total` → (first...last, total).
    static func contentRange(_ value: String) -> (ClosedRange<Int>, Int)? {
        guard value.hasPrefix("bytes ") else { return nil }
        let parts = value.dropFirst("bytes ".count).split(separator: "/")
        guard parts.count == 2, let total = Int(parts[1]) else { return nil }
        let bounds = parts[0].split(separator: "-")
        guard bounds.count == 2, let first = Int(bounds[0]), let last = Int(bounds[1]), first <= last else {
            return nil
        }
        return (first...last, total)
    }

    /// The largest object read into memory (a transcoded video is capped well below).
    static let maxObjectBytes = 512 * 1024 * 1024

    /// S3 takes the file in one PUT (up to 5 GB), read into memory first.
    func put(_ key: String, file path: String, contentType: String) async throws {
        guard let data = FileManager.default.contents(atPath: path) else { throw CocoaError(.fileReadUnknown) }
        try await put(key, bytes: [UInt8](data), contentType: contentType)
    }

    func get(_ key: String, into path: String) async throws -> Bool {
        let response = try await client.execute(try signedRequest(.GET, key: key), timeout: timeout)
        switch response.status {
        case .ok:
            let bytes = try await response.body.collect(upTo: Self.maxObjectBytes)
            guard FileManager.default.createFile(atPath: path, contents: Data(buffer: bytes)) else {
                throw CocoaError(.fileWriteUnknown)
            }
            return true
        case .notFound: return false
        default: throw await failure(response, method: "GET", key: key)
        }
    }

    func delete(_ keys: [String]) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for key in keys {
                group.addTask {
                    let response = try await client.execute(try signedRequest(.DELETE, key: key), timeout: timeout)
                    try await expect(response, in: [200, 204, 404], method: "DELETE", key: key)
                }
            }
            try await group.waitForAll()
        }
    }

    /// Creates the bucket (first set-up, tests); an existing bucket of ours is fine.
    func createBucket() async throws {
        var bucketOnly = self
        bucketOnly.settings.prefix = ""
        let request = try bucketOnly.signedRequest(.PUT, key: "")
        let response = try await client.execute(request, timeout: timeout)
        try await expect(response, in: [200, 409], method: "PUT", key: settings.bucket)
    }

    /// Reads the response to its end (so the connection can be reused); throws unless its
    /// status is one of `statuses`.
    private func expect(_ response: HTTPClientResponse, in statuses: Set<UInt>, method: String, key: String)
        async throws
    {
        guard statuses.contains(response.status.code) else { throw await failure(response, method: method, key: key) }
        _ = try? await response.body.collect(upTo: 1024 * 1024)
    }

    private func failure(_ response: HTTPClientResponse, method: String, key: String) async -> Failure {
        let body = (try? await response.body.collect(upTo: 64 * 1024)).map { String(buffer: $0) } ?? ""
        return Failure(method: method, key: key, status: response.status.code, body: body)
    }

    // MARK: Signature Version 4

    func signedRequest(
        _ method: HTTPMethod, key: String, body: [UInt8] = [], headers extra: [String: String] = [:], now: Date = Date()
    ) throws -> HTTPClientRequest {
        guard let endpoint = URL(string: settings.endpoint), let host = endpoint.host else {
            throw Failure(method: method.rawValue, key: key, status: 0, body: "invalid endpoint \(settings.endpoint)")
        }
        let hostHeader = endpoint.port.map { "\(host):\($0)" } ?? host
        let basePath = endpoint.path.hasSuffix("/") ? String(endpoint.path.dropLast()) : endpoint.path
        let path =
            basePath + "/" + Self.encode(settings.bucket) + "/"
            + (settings.prefix + key).split(separator: "/", omittingEmptySubsequences: false).map {
                Self.encode(String($0))
            }.joined(separator: "/")
        let (amzDate, day) = Self.timestamps(now)
        let payloadHash = ByteText.hex(SHA256.hash(data: body))

        var headers = extra.reduce(into: [String: String]()) {
            $0[$1.key.lowercased()] = $1.value.trimmingCharacters(in: .whitespaces)
        }
        headers["host"] = hostHeader
        headers["x-amz-date"] = amzDate
        headers["x-amz-content-sha256"] = payloadHash
        let authorization = Self.authorization(
            method: method.rawValue, path: path, headers: headers, payloadHash: payloadHash, amzDate: amzDate, day: day,
            settings: settings)

        var request = HTTPClientRequest(url: "\(endpoint.scheme ?? "https")://\(hostHeader)\(path)")
        request.method = method
        for (name, value) in headers where name != "host" { request.headers.add(name: name, value: value) }
        request.headers.add(name: "authorization", value: authorization)
        return request
    }

    /// The Authorization header value for a request whose headers (all of them signed) and
    /// payload hash are given; `path` is already percent-encoded.
    static func authorization(
        method: String, path: String, query: String = "", headers: [String: String], payloadHash: String,
        amzDate: String, day: String,
        settings: S3MediaSettings
    ) -> String {
        let names = headers.keys.sorted()
        let canonicalHeaders = names.map { "\($0):\(headers[$0]!)\n" }.joined()
        let signedHeaders = names.joined(separator: ";")
        let canonicalRequest = [method, path, query, canonicalHeaders, signedHeaders, payloadHash].joined(
            separator: "\n")
        let scope = "\(day)/\(settings.region)/s3/aws4_request"
        let stringToSign = [
            "AWS4-HMAC-SHA256", amzDate, scope, ByteText.hex(SHA256.hash(data: Array(canonicalRequest.utf8))),
        ].joined(separator: "\n")
        var signingKey = SymmetricKey(data: Array("AWS4\(settings.secretAccessKey)".utf8))
        for part in [day, settings.region, "s3", "aws4_request"] {
            signingKey = SymmetricKey(
                data: Array(HMAC<SHA256>.authenticationCode(for: Array(part.utf8), using: signingKey)))
        }
        let signature = ByteText.hex(HMAC<SHA256>.authenticationCode(for: Array(stringToSign.utf8), using: signingKey))
        return
            "AWS4-HMAC-SHA256 Credential=\(settings.accessKeyID)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)"
    }

    /// RFC 3986 percent-encoding of one path segment, as SigV4 wants it.
    static func encode(_ segment: String) -> String {
        var out = ""
        for byte in segment.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.append(Character(UnicodeScalar(byte)))
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    static func timestamps(_ date: Date) -> (amzDate: String, day: String) {
        var seconds = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let day = String(format: "%04d%02d%02d", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday)
        return (day + String(format: "T%02d%02d%02dZ", parts.tm_hour, parts.tm_min, parts.tm_sec), day)
    }

}
