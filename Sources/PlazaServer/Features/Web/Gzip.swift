import CPlazaZlib
import NIOCore

/// gzip for the web app's text files, compressed once at start-up. Pages are not compressed:
/// they carry the CSRF token beside text from the request, which is what BREACH reads through
/// compression; scripts and styles carry neither.
enum Gzip {
    /// `bytes` as one gzip member at zlib's best level; nil when zlib fails.
    static func compress(_ bytes: [UInt8]) -> [UInt8]? {
        let capacity = plaza_gzip_bound(bytes.count)
        var output = [UInt8](repeating: 0, count: capacity)
        let written = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                plaza_gzip(input.baseAddress, input.count, out.baseAddress, capacity)
            }
        }
        return written == 0 ? nil : Array(output.prefix(written))
    }

    /// Whether an `Accept-Encoding` value takes gzip (RFC 9110, 12.5.3): `gzip` or `*` with a
    /// weight above zero, unless gzip itself is weighted zero.
    static func isAccepted(by acceptEncoding: String?) -> Bool {
        guard let acceptEncoding else { return false }
        var star = false
        for item in acceptEncoding.split(separator: ",") {
            let parts = item.split(separator: ";")
            guard let name = parts.first?.trimmingCharacters(in: .whitespaces).lowercased() else { continue }
            let weight =
                parts.dropFirst().lazy.compactMap { parameter -> Double? in
                    let pair = parameter.split(separator: "=", maxSplits: 1)
                    guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "q" else {
                        return nil
                    }
                    return Double(pair[1].trimmingCharacters(in: .whitespaces))
                }.first ?? 1
            if name == "gzip" || name == "x-gzip" { return weight > 0 }
            if name == "*" { star = weight > 0 }
        }
        return star
    }
}
