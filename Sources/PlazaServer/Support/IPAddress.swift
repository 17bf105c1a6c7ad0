#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An IPv4 or IPv6 address, parsed strictly so that no unusual spelling of an address slips past a check.
enum IPAddress: Sendable, Hashable, CustomStringConvertible {
    case v4(UInt32)
    /// 128 bits in two halves: UInt128 needs macOS 15 and the package supports macOS 14.
    case v6(high: UInt64, low: UInt64)

    /// Parses a dotted quad (exactly four decimal parts, no leading zeros) or IPv6 text, optionally
    /// in brackets and with a zone, with the C library's `inet_pton`, which takes nothing else.
    init?(_ text: String) {
        // A NUL would end the C string early and let "127.0.0.1\0…" through as 127.0.0.1.
        guard text.utf8.count <= 64, !text.utf8.contains(0) else { return nil }
        var address = Substring(text)
        var ipv6Only = false
        if address.first == "[" {
            guard address.count >= 2, address.last == "]" else { return nil }
            address = address.dropFirst().dropLast()
            ipv6Only = true
        }
        if let percent = address.firstIndex(of: "%") {
            guard address.index(after: percent) < address.endIndex else { return nil }
            address = address[..<percent]
            ipv6Only = true
        }
        // Resolvers accept 0177.0.0.1 and 2130706433 for 127.0.0.1; inet_pton refuses them,
        // which keeps text and policy in agreement.
        var v4 = in_addr()
        var v6 = in6_addr()
        if !ipv6Only, inet_pton(AF_INET, String(address), &v4) == 1 {
            self = .v4(UInt32(bigEndian: v4.s_addr))
        } else if inet_pton(AF_INET6, String(address), &v6) == 1 {
            let (high, low) = withUnsafeBytes(of: &v6) { bytes in
                (
                    bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) },
                    bytes.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                )
            }
            self = .v6(high: high, low: low)
        } else {
            return nil
        }
    }

    /// RFC 5952 text for IPv6, with IPv4-mapped addresses shown dotted.
    var description: String {
        switch self {
        case .v4(let value):
            return (0..<4).map { String(value >> (24 - 8 * $0) & 0xFF) }.joined(separator: ".")
        case .v6(let high, let low):
            if high == 0, low >> 32 == 0xFFFF {
                return "::ffff:" + IPAddress.v4(UInt32(truncatingIfNeeded: low)).description
            }
            let groups = (0..<8).map { UInt16(truncatingIfNeeded: ($0 < 4 ? high : low) >> (48 - 16 * ($0 % 4))) }
            var best = (start: 0, count: 0)
            var run = (start: 0, count: 0)
            for (i, group) in groups.enumerated() {
                run = group == 0 ? (run.count == 0 ? (i, 1) : (run.start, run.count + 1)) : (0, 0)
                if run.count > best.count { best = run }
            }
            let hex = groups.map { String($0, radix: 16) }
            guard best.count >= 2 else { return hex.joined(separator: ":") }
            return hex[..<best.start].joined(separator: ":") + "::"
                + hex[(best.start + best.count)...].joined(separator: ":")
        }
    }
}

/// A CIDR block such as 10.0.0.0/8 or fc00::/7; host bits are cleared, so 127.0.0.1/8 equals 127.0.0.0/8.
struct IPBlock: Sendable, Hashable, CustomStringConvertible {
    /// The first address of the block.
    let network: IPAddress
    let prefixLength: Int

    /// Parses "a.b.c.d/n" or "v6/n"; a bare address is a block of one (/32 or /128).
    init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(String(parts[0])) else { return nil }
        let maximum = if case .v4 = address { 32 } else { 128 }
        var length = maximum
        if parts.count == 2 {
            let digits = parts[1]
            guard (1...3).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }),
                digits == "0" || !digits.hasPrefix("0"), let value = Int(digits), value <= maximum
            else { return nil }
            length = value
        }
        prefixLength = length
        network = Self.masked(address, length)
    }

    var description: String { "\(network)/\(prefixLength)" }

    /// Whether `address` is in this block; an IPv4 address is never in an IPv6 block, nor the reverse.
    func contains(_ address: IPAddress) -> Bool {
        switch (address, network) {
        case (.v4, .v4), (.v6, .v6): Self.masked(address, prefixLength) == network
        default: false
        }
    }

    /// `address` with the bits after the first `length` cleared.
    private static func masked(_ address: IPAddress, _ length: Int) -> IPAddress {
        // Swift's `<<` yields 0 when shifting by the full width, which is the mask a /0 needs.
        switch address {
        case .v4(let value):
            .v4(value & (UInt32.max << (32 - length)))
        case .v6(let high, let low):
            .v6(
                high: high & (UInt64.max << (64 - min(length, 64))),
                low: length <= 64 ? 0 : low & (UInt64.max << (128 - length)))
        }
    }
}

extension IPAddress {
    /// The address as one client for rate limits and sign-in throttles: an IPv4 address in full,
    /// an IPv6 address by its /64 (one subscriber's network: a host can pick any address in it),
    /// an IPv4-mapped IPv6 address as the IPv4 address it carries.
    var clientKey: String {
        switch self {
        case .v4:
            return description
        case .v6(let high, let low):
            if high == 0, low >> 32 == 0xFFFF { return IPAddress.v4(UInt32(truncatingIfNeeded: low)).description }
            return IPAddress.v6(high: high, low: 0).description + "/64"
        }
    }

    /// The same address with an IPv4-mapped IPv6 address turned into its IPv4 address (a
    /// dual-stack socket reports IPv4 peers that way), so IPv4 blocks match it.
    var unmapped: IPAddress {
        if case .v6(let high, let low) = self, high == 0, low >> 32 == 0xFFFF {
            return .v4(UInt32(truncatingIfNeeded: low))
        }
        return self
    }
}
