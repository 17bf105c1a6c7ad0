/// A small, fast JSON writer for the API's own types. Responses are the hot path of the server,
/// and `JSONEncoder` spends most of a feed page's time in generic `Codable` machinery; types
/// that conform to `JSONWritable` write their bytes directly. Their `Codable` conformances stay
/// the reference: a test checks that both produce the same JSON for every writable type.
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8] = []
    private var needsComma = false

    public init(capacity: Int = 1024) { bytes.reserveCapacity(capacity) }

    /// The JSON text of one value.
    public static func encode(_ value: some JSONWritable, capacity: Int = 1024) -> [UInt8] {
        var writer = JSONWriter(capacity: capacity)
        value.writeJSON(to: &writer)
        return writer.bytes
    }

    @inline(__always) private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    /// Writes `{`, the fields `body` writes, and `}`.
    public mutating func object(_ body: (inout JSONWriter) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
        body(&self)
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    public mutating func array<S: Sequence>(_ items: S) where S.Element: JSONWritable {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
        for item in items { item.writeJSON(to: &self) }
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// One `"name": value` member of the current object.
    public mutating func field(_ name: StaticString, _ value: some JSONWritable) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
        value.writeJSON(to: &self)
    }

    /// A member only when the value is there (for fields the contract marks optional, not null).
    public mutating func fieldIfPresent(_ name: StaticString, _ value: (some JSONWritable)?) {
        if let value { field(name, value) }
    }

    /// The `:` after a key written with `string(_:)` (for objects with dynamic keys).
    public mutating func colon() {
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    public mutating func null() {
        separate()
        bytes.append(contentsOf: [110, 117, 108, 108])
        needsComma = true
    }

    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: value ? [116, 114, 117, 101] : [102, 97, 108, 115, 101])
        needsComma = true
    }

    public mutating func integer(_ value: Int64) {
        separate()
        bytes.append(contentsOf: String(value).utf8)
        needsComma = true
    }

    public mutating func number(_ value: Double) {
        separate()
        if value.isFinite {
            if value == value.rounded(), abs(value) < 1e15 {
                bytes.append(contentsOf: String(Int64(value)).utf8)
            } else {
                bytes.append(contentsOf: String(describing: value).utf8)
            }
        } else {
            bytes.append(contentsOf: [110, 117, 108, 108])  // JSON has no NaN or infinity
        }
        needsComma = true
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    public mutating func string(_ value: String) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var start = 0
            for (index, byte) in utf8.enumerated() where byte < 0x20 || byte == 0x22 || byte == 0x5C {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case 0x22: bytes.append(0x22)
                case 0x5C: bytes.append(0x5C)
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                default:
                    bytes.append(contentsOf: [
                        UInt8(ascii: "u"), 48, 48, Self.hex[Int(byte >> 4)], Self.hex[Int(byte & 0xF)],
                    ])
                }
                start = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }
}

/// A value that writes itself as JSON, matching its `Encodable` form.
public protocol JSONWritable {
    func writeJSON(to writer: inout JSONWriter)
}

extension String: JSONWritable {
    public func writeJSON(to writer: inout JSONWriter) { writer.string(self) }
}

extension Int: JSONWritable {
    public func writeJSON(to writer: inout JSONWriter) { writer.integer(Int64(self)) }
}

extension Int64: JSONWritable {
    public func writeJSON(to writer: inout JSONWriter) { writer.integer(self) }
}

extension Double: JSONWritable {
    public func writeJSON(to writer: inout JSONWriter) { writer.number(self) }
}

extension Bool: JSONWritable {
    public func writeJSON(to writer: inout JSONWriter) { writer.bool(self) }
}

extension Optional: JSONWritable where Wrapped: JSONWritable {
    public func writeJSON(to writer: inout JSONWriter) {
        if let self { self.writeJSON(to: &writer) } else { writer.null() }
    }
}

extension Array: JSONWritable where Element: JSONWritable {
    public func writeJSON(to writer: inout JSONWriter) { writer.array(self) }
}

extension Timestamp: JSONWritable {
    public func writeJSON(to writer: inout JSONWriter) { writer.string(description) }
}
