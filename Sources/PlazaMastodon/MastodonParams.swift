import Foundation
import Hummingbird
import NIOCore
import PlazaAPI
import PlazaServer

/// A Mastodon request's parameters, as Mastodon (Rails) merges them: the query string and a
/// form (`application/x-www-form-urlencoded`) or JSON body. Arrays come as `key[]=a&key[]=b` in
/// forms and as JSON arrays; nested JSON objects flatten to `outer[inner]`.
struct MastodonParams: Sendable {
    private(set) var values: [String: [String]] = [:]
    private var count = 0

    static let maxPairs = 200

    /// The query and, unless `includeBody` is false (a multipart upload reads its own body), the body.
    static func read(_ request: Request, context: some RequestContext, includeBody: Bool = true) async throws -> Self {
        var params = Self()
        if let query = request.uri.query { try params.addForm(query) }
        // Rails reads a GET's body too, and Mastodon.py sends some GETs' parameters as JSON.
        let hasBody = request.headers[.contentLength].flatMap(Int.init).map { $0 > 0 } ?? false
        guard includeBody, request.method != .head, request.method != .get || hasBody else { return params }
        let body = try await PlazaRequestDecoder.body(of: request, context: context, allowingForms: true)
        try params.add(body: body, contentType: request.headers[.contentType])
        return params
    }

    /// Adds a body's parameters: JSON (an object) or a form.
    mutating func add(body: ByteBuffer, contentType: String?) throws {
        guard body.readableBytes > 0 else { return }
        if contentType?.lowercased().hasPrefix("application/json") == true {
            guard let value = try? JSONDecoder().decode(JSONValue.self, from: body), case .object = value else {
                throw PlazaError.malformed("The body is not a JSON object.")
            }
            try add(json: value, key: nil)
        } else {
            guard let text = String(validating: body.readableBytesView, as: UTF8.self) else {
                throw PlazaError.malformed("The form is not UTF-8.")
            }
            try addForm(text)
        }
    }

    init() {}

    /// Parameters from a form's text alone (tests, and the OAuth endpoints' bodies).
    init(form: String) throws { try addForm(form) }

    /// The query's parameters, to which a multipart form's text fields are then added.
    init(query: String) throws { try addForm(query) }

    /// Adds one parameter (a multipart form's text field).
    mutating func add(_ key: String, _ value: String) throws {
        try append(key.hasSuffix("[]") ? String(key.dropLast(2)) : key, value)
    }

    private mutating func append(_ key: String, _ value: String) throws {
        guard count < Self.maxPairs else { throw PlazaError.malformed("Too many parameters.") }
        count += 1
        values[key, default: []].append(value)
    }

    private mutating func addForm(_ text: String) throws {
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let key = Self.decode(parts[0]), let value = Self.decode(parts.count > 1 ? parts[1] : "") else {
                throw PlazaError.malformed("A parameter is not properly percent-encoded.")
            }
            try append(key.hasSuffix("[]") ? String(key.dropLast(2)) : key, value)
        }
    }

    private static func decode(_ text: Substring) -> String? {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }

    private mutating func add(json: JSONValue, key: String?, depth: Int = 0) throws {
        guard depth < 4 else { throw PlazaError.malformed("The JSON body is nested too deeply.") }
        switch json {
        case .object(let object):
            for (name, value) in object {
                try add(json: value, key: key.map { "\($0)[\(name)]" } ?? name, depth: depth + 1)
            }
        case .array(let items):
            guard let key else { return }
            for item in items { try add(json: item, key: key, depth: depth + 1) }
        case .string(let text): if let key { try append(key, text) }
        case .number(let number):
            if let key {
                try append(
                    key, number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number))
            }
        case .bool(let flag): if let key { try append(key, flag ? "true" : "false") }
        case .null: break
        }
    }

    func string(_ key: String) -> String? { values[key]?.last }

    func strings(_ key: String) -> [String] { values[key] ?? [] }

    /// Rails' booleans: true, 1, "true", "on", "1" (and not false, 0, "false", "off", empty).
    func bool(_ key: String) -> Bool? {
        guard let value = string(key)?.lowercased() else { return nil }
        return ["true", "1", "on", "t"].contains(value)
    }

    /// An id parameter: a positive decimal integer, or 422.
    func id(_ key: String) throws -> Int64? {
        guard let text = string(key), !text.isEmpty else { return nil }
        guard let id = Int64(text), id > 0 else { throw MastodonError.validation("\(key) is not an id") }
        return id
    }

    func limit(default fallback: Int, max: Int) throws -> Int {
        guard let text = string("limit"), !text.isEmpty else { return fallback }
        guard let limit = Int(text) else { throw MastodonError.validation("limit is not a number") }
        return Swift.min(Swift.max(limit, 1), max)
    }
}
