import Hummingbird
import PlazaAPI

/// Parsing of query-string parameters; bad values are 422s naming the parameter.
extension Request {
    /// A query parameter's value; an empty one (what an HTML form sends for a blank field) counts as absent.
    func query(_ name: String) -> String? {
        guard let value = uri.queryParameters.get(name), !value.isEmpty else { return nil }
        return value
    }

    func pageRequest() throws -> PageRequest {
        var limit = PageRequest.defaultLimit
        if let text = uri.queryParameters["limit"] {
            guard let value = Int(text), value >= 1, value <= PageRequest.maxLimit else {
                throw PlazaError.invalid("limit", "limit must be an integer from 1 to \(PageRequest.maxLimit).")
            }
            limit = value
        }
        var cursor: Cursor?
        if let text = uri.queryParameters["cursor"], !text.isEmpty {
            guard let value = Cursor(encoded: String(text)) else {
                throw PlazaError(
                    .badRequest, "invalid_cursor", "The cursor is not one this server gave out.", field: "cursor")
            }
            cursor = value
        }
        return PageRequest(limit: limit, cursor: cursor)
    }

    func timestampParameter(_ name: String) throws -> Timestamp? {
        guard let text = query(name) else { return nil }
        guard let value = Timestamp(rfc3339: String(text)) else {
            throw PlazaError.invalid(name, "\(name) must be an RFC 3339 timestamp such as 2026-11-21T09:30:00.000Z.")
        }
        return value
    }

    /// `true` or `false`; absent is false.
    func boolParameter(_ name: String) throws -> Bool {
        switch uri.queryParameters.get(name) {
        case nil, "false": return false
        case "true": return true
        default: throw PlazaError.invalid(name, "\(name) must be true or false.")
        }
    }

    func enumParameter<T: RawRepresentable & CaseIterable>(_ name: String, as: T.Type) throws -> T?
    where T.RawValue == String {
        guard let text = query(name) else { return nil }
        guard let value = T(rawValue: String(text)) else {
            let allowed = T.allCases.map(\.rawValue).joined(separator: ", ")
            throw PlazaError.invalid(name, "\(name) must be one of: \(allowed).")
        }
        return value
    }
}

extension Parameters {
    /// A path ID; one that cannot exist is reported as not found.
    func id(_ name: String, _ what: String) throws -> Int64 {
        guard let text = self.get(name), let id = parseID(text) else { throw PlazaError.notFound(what) }
        return id
    }

    func string(_ name: String) -> String { self.get(name) ?? "" }
}
