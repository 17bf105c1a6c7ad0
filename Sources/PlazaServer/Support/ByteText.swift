import Foundation

/// Bytes as text, the one implementation of each: base64url without padding (tokens, keys,
/// cursors, CSRF tokens) and lower-case hex (hashes, signatures, asset versions).
enum ByteText {
    private static let base64urlAlphabet = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// RFC 4648 §5 base64url, without `=` padding.
    static func base64url(_ bytes: some Sequence<UInt8>) -> String {
        let bytes = Array(bytes)
        var text: [UInt8] = []
        text.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var value = UInt32(0)
            for (offset, byte) in chunk.enumerated() { value |= UInt32(byte) << (16 - 8 * offset) }
            for position in 0...chunk.count { text.append(base64urlAlphabet[Int((value >> (18 - 6 * position)) & 63)]) }
            index += 3
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The bytes of canonical unpadded base64url text, or nil: any other character, an
    /// impossible length, or unused low bits that are not zero (so each value has one spelling).
    static func bytes(base64url text: some StringProtocol) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count * 3 / 4)
        var value = UInt32(0)
        var bits = 0
        for character in text.utf8 {
            let sextet: UInt8
            switch character {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): sextet = character - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): sextet = character - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): sextet = character - UInt8(ascii: "0") + 52
            case UInt8(ascii: "-"): sextet = 62
            case UInt8(ascii: "_"): sextet = 63
            default: return nil
            }
            value = (value << 6) | UInt32(sextet)
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8((value >> UInt32(bits)) & 0xFF))
                value &= (1 << UInt32(bits)) - 1
            }
        }
        // 2 or 4 bits left over are padding and must be zero; 6 cannot happen in valid text.
        guard bits < 6, value == 0 else { return nil }
        return bytes
    }

    /// Lower-case hex, two digits a byte.
    /// The bytes of hex text (either case), or nil for any other character or an odd length.
    static func bytes(hex text: some StringProtocol) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        for byte in bytes {
            text.append(hexDigits[Int(byte >> 4)])
            text.append(hexDigits[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// `count` bytes from the system's secure random number generator.
    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }
}
