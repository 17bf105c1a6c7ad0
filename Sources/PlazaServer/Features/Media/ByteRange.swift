import Foundation

/// One span of a `Range: bytes=…` request header (RFC 9110, 14.1.2): `first-last`, `first-`
/// or `-suffix`. Players ask for spans of a video to start and seek without loading it all.
enum ByteRange: Sendable, Equatable {
    case from(Int, through: Int?)
    case suffix(Int)

    /// The span asked for, or nil when the header is not one span of `bytes`: malformed, another
    /// unit, several spans. The whole file is then served, as RFC 9110 lets a server do.
    static func parse(_ header: String) -> ByteRange? {
        let text = header.trimmingCharacters(in: .whitespaces)
        guard text.utf8.count <= 100, text.lowercased().hasPrefix("bytes=") else { return nil }
        let spec = text.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        guard let dash = spec.firstIndex(of: "-") else { return nil }
        let first = spec[..<dash]
        let last = spec[spec.index(after: dash)...]
        func number(_ digits: Substring) -> Int? {
            guard !digits.isEmpty, digits.utf8.count <= 18, digits.utf8.allSatisfy({ (48...57).contains($0) }) else {
                return nil
            }
            return Int(digits)
        }
        if first.isEmpty {
            return number(last).map(ByteRange.suffix)
        }
        guard let start = number(first) else { return nil }
        if last.isEmpty { return .from(start, through: nil) }
        guard let end = number(last), end >= start else { return nil }
        return .from(start, through: end)
    }

    /// The bytes of a file of `length` bytes this span covers, or nil when none (416).
    func resolve(length: Int) -> ClosedRange<Int>? {
        guard length > 0 else { return nil }
        switch self {
        case .from(let start, let end):
            guard start < length else { return nil }
            return start...min(end ?? length - 1, length - 1)
        case .suffix(let count):
            guard count > 0 else { return nil }
            return max(0, length - count)...(length - 1)
        }
    }

    /// The header value that asks for this span.
    var header: String {
        switch self {
        case .from(let start, let end): "bytes=\(start)-\(end.map(String.init) ?? "")"
        case .suffix(let count): "bytes=-\(count)"
        }
    }
}
