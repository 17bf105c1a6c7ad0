/// A property that is always encoded, as `null` when it has no value, so a client sees every
/// field of the contract. Decoding accepts the key missing or `null`.
@propertyWrapper
public struct Nullable<Value> {
    public var wrappedValue: Value?
    public init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }
}

extension Nullable: Sendable where Value: Sendable {}
extension Nullable: Equatable where Value: Equatable {}
extension Nullable: Hashable where Value: Hashable {}

extension Nullable: Codable where Value: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(Value.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

extension KeyedDecodingContainer {
    public func decode<V: Codable>(_: Nullable<V>.Type, forKey key: Key) throws -> Nullable<V> {
        Nullable(wrappedValue: try decodeIfPresent(V.self, forKey: key))
    }

    public func decode<V: Codable>(_: FieldUpdate<V>.Type, forKey key: Key) throws -> FieldUpdate<V> {
        guard contains(key) else { return .keep }
        if try decodeNil(forKey: key) { return .clear }
        return .set(try decode(V.self, forKey: key))
    }
}

/// One field of a PATCH body: left out (keep), `null` (clear) or a new value.
public enum FieldUpdate<Value> {
    case keep
    case clear
    case set(Value)

    /// Whether it leaves the value as it is.
    public var isKeep: Bool {
        if case .keep = self { true } else { false }
    }

    /// The value after applying this update to `current`.
    public func applied(to current: Value?) -> Value? {
        switch self {
        case .keep: current
        case .clear: nil
        case .set(let value): value
        }
    }
}

extension FieldUpdate: Sendable where Value: Sendable {}
extension FieldUpdate: Equatable where Value: Equatable {}

extension FieldUpdate: Codable where Value: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        self = container.decodeNil() ? .clear : .set(try container.decode(Value.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .keep, .clear: try container.encodeNil()
        case .set(let value): try container.encode(value)
        }
    }
}

extension KeyedEncodingContainer {
    public mutating func encode<V: Codable>(_ value: FieldUpdate<V>, forKey key: Key) throws {
        switch value {
        case .keep: return
        case .clear: try encodeNil(forKey: key)
        case .set(let v): try encode(v, forKey: key)
        }
    }
}

/// Any JSON value; used for free-form objects such as preferences.
public enum JSONValue: Sendable, Hashable, Codable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let v = try? c.decode(Bool.self) {
            self = .bool(v)
        } else if let v = try? c.decode(Double.self) {
            self = .number(v)
        } else if let v = try? c.decode(String.self) {
            self = .string(v)
        } else if let v = try? c.decode([JSONValue].self) {
            self = .array(v)
        } else {
            self = .object(try c.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let v): try c.encode(v)
        case .number(let v): try c.encode(v)
        case .string(let v): try c.encode(v)
        case .array(let v): try c.encode(v)
        case .object(let v): try c.encode(v)
        }
    }

    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }
}

extension JSONValue {
    public var isBool: Bool {
        if case .bool = self { return true }
        return false
    }

    /// `patch` applied to `target` as a JSON merge patch (RFC 7396).
    public static func mergePatch(_ target: JSONValue, _ patch: JSONValue) -> JSONValue {
        guard case .object(let changes) = patch else { return patch }
        var result: [String: JSONValue] = [:]
        if case .object(let current) = target { result = current }
        for (key, value) in changes {
            if case .null = value {
                result[key] = nil
            } else {
                result[key] = mergePatch(result[key] ?? .null, value)
            }
        }
        return .object(result)
    }
}
