import Crypto
import Foundation
import PlazaAPI

/// Time-based one-time passwords (RFC 6238) as authenticator apps make them: HMAC-SHA1 over the
/// count of 30-second steps since 1970, truncated to 6 digits (RFC 4226), from a 160-bit secret
/// shown to the person in base32 (RFC 4648, no padding).
enum TOTP {
    static let period: Int64 = 30
    static let digits = 6
    /// Steps either side of now that are still accepted: a phone's clock a little off, or a code
    /// typed just as it changed.
    static let window: Int64 = 1

    static func makeSecret() -> [UInt8] { ByteText.randomBytes(20) }

    static func step(at time: Timestamp) -> Int64 { time.milliseconds / 1000 / period }

    /// The code for `step` (RFC 4226 section 5.3: dynamic truncation).
    static func code(secret: [UInt8], step: Int64, digits: Int = digits) -> String {
        var counter = UInt64(bitPattern: step).bigEndian
        let message = withUnsafeBytes(of: &counter) { Data($0) }
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: SymmetricKey(data: secret)))
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let binary =
            (UInt32(mac[offset] & 0x7f) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8)
            | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let value = String(binary % modulus)
        return String(repeating: "0", count: max(0, digits - value.count)) + value
    }

    /// The step whose code `input` is, within `window` of `time`; nil when it is none of them or
    /// is not exactly six digits (spaces, as apps show "123 456", are ignored).
    static func matchingStep(_ input: String, secret: [UInt8], at time: Timestamp) -> Int64? {
        let typed = input.utf8.filter { $0 != UInt8(ascii: " ") }
        guard typed.count == digits, typed.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        let now = step(at: time)
        var found: Int64?
        // Every candidate is computed and compared in full, so the time taken tells nothing.
        for candidate in (now - window)...(now + window) {
            let expected = Array(code(secret: secret, step: candidate).utf8)
            var difference: UInt8 = 0
            for (a, b) in zip(expected, typed) { difference |= a ^ b }
            if difference == 0, found == nil { found = candidate }
        }
        return found
    }

    /// The `otpauth://` URL authenticator apps read from a QR code or a link.
    static func url(secret: [UInt8], account: String, issuer: String) -> String {
        var components = URLComponents()
        components.scheme = "otpauth"
        components.host = "totp"
        components.path = "/\(issuer):\(account)"
        components.queryItems = [
            URLQueryItem(name: "secret", value: Base32.encode(secret)),
            URLQueryItem(name: "issuer", value: issuer),
            URLQueryItem(name: "algorithm", value: "SHA1"),
            URLQueryItem(name: "digits", value: String(digits)),
            URLQueryItem(name: "period", value: String(period)),
        ]
        return components.string ?? ""
    }
}

/// RFC 4648 base32 (A–Z, 2–7), without padding, as authenticator apps take secrets.
enum Base32 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                out.append(alphabet[Int((buffer >> UInt32(bits - 5)) & 31)])
                bits -= 5
            }
        }
        if bits > 0 { out.append(alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// nil for anything but base32 letters (either case; spaces and `=` padding are ignored).
    static func decode(_ text: String) -> [UInt8]? {
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for char in text.utf8 where char != UInt8(ascii: " ") && char != UInt8(ascii: "=") {
            let value: UInt8
            switch char {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = char - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = char - UInt8(ascii: "a")
            case UInt8(ascii: "2")...UInt8(ascii: "7"): value = char - UInt8(ascii: "2") + 26
            default: return nil
            }
            buffer = ((buffer << 5) | UInt32(value)) & 0xffff
            bits += 5
            if bits >= 8 {
                out.append(UInt8((buffer >> UInt32(bits - 8)) & 0xff))
                bits -= 8
            }
        }
        return out
    }
}
