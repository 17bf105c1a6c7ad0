import Foundation

/// Which addresses an outbound fetch (link previews) may connect to.
package struct AddressPolicy: Sendable {
    /// CIDR blocks the operator allows even though they are private (e.g. "127.0.0.0/8", "::1/128").
    var allowed: [IPBlock]

    /// A bad entry in the allow-list configuration.
    struct ParseError: Error, Equatable, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    /// A policy that refuses every non-public address except those in `blocks`.
    init(allowing blocks: [IPBlock] = []) {
        allowed = blocks
    }

    /// Parses "127.0.0.0/8, ::1" (a bare address means /32 or /128); empty entries are skipped.
    static func parse(allowList: String) throws -> AddressPolicy {
        var blocks: [IPBlock] = []
        for entry in allowList.split(separator: ",", omittingEmptySubsequences: false) {
            let text = entry.trimmingCharacters(in: .whitespacesAndNewlines)
            if text.isEmpty { continue }
            guard let block = IPBlock(text) else {
                throw ParseError(
                    message:
                        "link preview allow-list entry \"\(text)\" is not an IP address or CIDR block (like 127.0.0.0/8 or ::1/128)"
                )
            }
            blocks.append(block)
        }
        return AddressPolicy(allowing: blocks)
    }

    /// nil when `address` may be fetched, else the reason it may not (e.g. "loopback", "private", "cloud metadata").
    func refusal(for address: IPAddress) -> String? {
        if allowed.contains(where: { $0.contains(address) }) { return nil }
        switch address {
        case .v4:
            return Self.ipv4Rules.first { $0.block.contains(address) }?.reason
        case .v6(let high, let low):
            if let rule = Self.ipv6Rules.first(where: { $0.block.contains(address) }) { return rule.reason }
            // Translation and tunnel prefixes reach whatever IPv4 address they carry, so that address decides.
            if let embedded = Self.embeddedIPv4(high: high, low: low) { return refusal(for: .v4(embedded)) }
            // Only 2000::/3 is allocated for global unicast; anything else cannot be a public web server.
            return high >> 61 == 1 ? nil : "reserved"
        }
    }

    /// The IPv4 address inside an IPv4-compatible, IPv4-mapped, SIIT, NAT64 or 6to4 address.
    private static func embeddedIPv4(high: UInt64, low: UInt64) -> UInt32? {
        let lowTop = low >> 32
        if high == 0, lowTop == 0 || lowTop == 0xFFFF || lowTop == 0xFFFF_0000 {
            return UInt32(truncatingIfNeeded: low)
        }
        if high == 0x0064_FF9B_0000_0000, lowTop == 0 { return UInt32(truncatingIfNeeded: low) }
        if high >> 48 == 0x2002 { return UInt32(truncatingIfNeeded: high >> 16) }
        return nil
    }

    /// Checked in order, so a specific block (the metadata service) wins over the range containing it.
    private static let ipv4Rules = rules([
        ("169.254.169.254/32", "cloud metadata"), ("0.0.0.0/8", "unspecified"), ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "carrier-grade NAT"), ("127.0.0.0/8", "loopback"), ("169.254.0.0/16", "link-local"),
        ("172.16.0.0/12", "private"), ("192.0.0.0/24", "reserved"), ("192.0.2.0/24", "documentation"),
        ("192.168.0.0/16", "private"), ("198.18.0.0/15", "reserved"), ("198.51.100.0/24", "documentation"),
        ("203.0.113.0/24", "documentation"), ("224.0.0.0/4", "multicast"), ("240.0.0.0/4", "reserved"),
    ])

    /// Checked before the embedded IPv4 address, so that `::` and `::1` keep their own reasons.
    // Local-use NAT64 (64:ff9b:1::/48) and the deprecated site-local fec0::/10 are private in practice;
    // 3fff::/20 is the newer documentation prefix (RFC 9637).
    private static let ipv6Rules = rules([
        ("fd00:ec2::254/128", "cloud metadata"), ("::/128", "unspecified"), ("::1/128", "loopback"),
        ("64:ff9b:1::/48", "private"), ("fc00::/7", "private"), ("fe80::/10", "link-local"),
        ("fec0::/10", "private"), ("ff00::/8", "multicast"), ("2001:db8::/32", "documentation"),
        ("3fff::/20", "documentation"),
    ])

    /// Builds a rule table; the entries are constants, so a parse failure is a typo caught by the tests.
    private static func rules(_ table: [(String, String)]) -> [(block: IPBlock, reason: String)] {
        table.map { (IPBlock($0.0)!, $0.1) }
    }
}
