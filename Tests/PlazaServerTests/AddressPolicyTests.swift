import Foundation
import Testing

@testable import PlazaServer

@Suite("Links: which addresses previews may fetch")
struct AddressPolicyTests {
    @Test(arguments: [
        ("0.0.0.0", "unspecified"), ("0.1.2.3", "unspecified"),
        ("10.0.0.1", "private"), ("172.16.0.1", "private"), ("172.31.255.255", "private"), ("192.168.1.1", "private"),
        ("127.0.0.1", "loopback"), ("127.255.255.254", "loopback"),
        ("169.254.169.254", "cloud metadata"), ("169.254.0.1", "link-local"), ("169.254.170.2", "link-local"),
        ("100.64.0.1", "carrier-grade NAT"), ("100.127.255.255", "carrier-grade NAT"),
        ("192.0.0.8", "reserved"), ("192.0.2.1", "documentation"), ("198.51.100.7", "documentation"),
        ("203.0.113.9", "documentation"),
        ("198.18.0.1", "reserved"), ("198.19.255.255", "reserved"),
        ("224.0.0.1", "multicast"), ("239.255.255.250", "multicast"),
        ("240.0.0.1", "reserved"), ("255.255.255.255", "reserved"),
        ("::", "unspecified"), ("::1", "loopback"), ("[::1]", "loopback"),
        ("fc00::1", "private"), ("fd12:3456:789a::1", "private"), ("fd00:ec2::254", "cloud metadata"),
        ("fe80::1", "link-local"), ("fe80::1%eth0", "link-local"), ("[fe80::1%25en0]", "link-local"),
        ("febf::1", "link-local"),
        ("fec0::1", "private"), ("ff02::1", "multicast"), ("2001:db8::1", "documentation"),
        ("3fff::1", "documentation"),
        ("::ffff:127.0.0.1", "loopback"), ("::ffff:7f00:1", "loopback"), ("::ffff:169.254.169.254", "cloud metadata"),
        ("::ffff:10.1.2.3", "private"), ("::ffff:0:192.168.0.1", "private"), ("::127.0.0.1", "loopback"),
        ("::10.0.0.1", "private"),
        ("64:ff9b::10.0.0.1", "private"), ("64:ff9b::a9fe:a9fe", "cloud metadata"), ("64:ff9b:1::1", "private"),
        ("2002:7f00:1::", "loopback"), ("2002:c0a8:101::1", "private"),
        ("100::1", "reserved"), ("4000::1", "reserved"), ("::2:0:0:1", "reserved"),
    ])
    func refusesNonPublicAddresses(text: String, reason: String) throws {
        let address = try #require(IPAddress(text))
        #expect(AddressPolicy().refusal(for: address) == reason)
    }

    @Test(arguments: [
        "8.8.8.8", "1.1.1.1", "100.63.255.255", "100.128.0.0", "172.15.255.255", "172.32.0.0", "192.0.1.1",
        "198.17.255.255",
        "198.20.0.0", "223.255.255.255", "169.253.255.255", "2606:4700::1111", "2001:4860:4860::8888", "::ffff:8.8.8.8",
        "64:ff9b::808:808", "2002:808:808::1", "::1.1.1.1",
    ])
    func allowsPublicAddresses(text: String) throws {
        #expect(AddressPolicy().refusal(for: try #require(IPAddress(text))) == nil)
    }

    @Test(arguments: [
        ("127.0.0.1", "127.0.0.1"), ("0.0.0.0", "0.0.0.0"), ("255.255.255.255", "255.255.255.255"),
        ("::", "::"), ("::1", "::1"), ("[::1]", "::1"), ("0:0:0:0:0:0:0:1", "::1"),
        ("2001:DB8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),
        ("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"), ("1::", "1::"), ("1:0:0:2:0:0:0:3", "1:0:0:2::3"),
        ("::ffff:127.0.0.1", "::ffff:127.0.0.1"), ("::ffff:7f00:0001", "::ffff:127.0.0.1"), ("fe80::1%eth0", "fe80::1"),
        ("64:ff9b::192.0.2.33", "64:ff9b::c000:221"), ("1:2:3:4:5:6:7::", "1:2:3:4:5:6:7:0"),
    ])
    func parsesAndPrintsAddresses(text: String, canonical: String) {
        #expect(IPAddress(text)?.description == canonical)
    }

    @Test(arguments: [
        "", " 127.0.0.1", "127.0.0.1 ", "0177.0.0.1", "127.000.0.1", "2130706433", "0x7f.0.0.1", "127.1", "127.0.0",
        "127.0.0.1.",
        "1.2.3.4.5", "256.0.0.1", "1..2.3", "-1.0.0.0", "+1.0.0.0", "1.2.3.4%eth0", "[127.0.0.1]", "localhost",
        ":", ":::", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", "1::2::3", ":1::", "1::2:", "12345::", "g::", "::-1", "::+1",
        "1:2:3:4:5:6:7:8::", "::ffff:127.0.0.01", "::1.2.3.4:5", "1.2.3.4::", "[::1", "::1]", "[]", "fe80::1%",
        "[::1]%eth0x]",
    ])
    func rejectsAmbiguousOrMalformedAddresses(text: String) {
        #expect(IPAddress(text) == nil)
    }

    @Test func blocksContainTheirRangeOnly() throws {
        let v4 = try #require(IPBlock("10.1.2.3/8"))
        #expect(v4.description == "10.0.0.0/8" && v4 == IPBlock("10.0.0.0/8"))
        #expect(v4.contains(.v4(0x0AFF_FFFF)) && !v4.contains(.v4(0x0B00_0000)))
        #expect(IPBlock("0.0.0.0/0")?.contains(try #require(IPAddress("203.0.113.1"))) == true)
        #expect(IPBlock("0.0.0.0/0")?.contains(try #require(IPAddress("::1"))) == false)
        let v6 = try #require(IPBlock("fd00:ec2::/32"))
        let inside = try #require(IPAddress("fd00:ec2::254"))
        let outside = try #require(IPAddress("fd00:ec3::1"))
        #expect(v6.contains(inside) && !v6.contains(outside))
        #expect(IPBlock("2001:db8::/65")?.contains(try #require(IPAddress("2001:db8::7fff:ffff:ffff:ffff"))) == true)
        #expect(IPBlock("2001:db8::/65")?.contains(try #require(IPAddress("2001:db8::8000:0:0:0"))) == false)
        #expect(IPBlock("::1")?.description == "::1/128" && IPBlock("127.0.0.1")?.description == "127.0.0.1/32")
        #expect(IPBlock("::/0")?.contains(try #require(IPAddress("ff02::1"))) == true)
        for bad in [
            "", "/8", "10.0.0.0/", "10.0.0.0/33", "::/129", "10.0.0.0/08", "10.0.0.0/-1", "10.0.0.0/8/8", "10.0.0.0/ 8",
            "nonsense/8",
        ] {
            #expect(IPBlock(bad) == nil, "\(bad)")
        }
    }

    @Test func theAllowListOverridesRefusals() throws {
        let policy = try AddressPolicy.parse(allowList: " 127.0.0.0/8, ::1 ,, 10.20.0.0/16,\n")
        #expect(policy.allowed.map(\.description) == ["127.0.0.0/8", "::1/128", "10.20.0.0/16"])
        #expect(policy.refusal(for: try #require(IPAddress("127.0.0.1"))) == nil)
        #expect(policy.refusal(for: try #require(IPAddress("::1"))) == nil)
        // An allowed IPv4 block also covers that address spelled as IPv4-mapped IPv6.
        #expect(policy.refusal(for: try #require(IPAddress("::ffff:127.0.0.1"))) == nil)
        #expect(policy.refusal(for: try #require(IPAddress("10.20.30.40"))) == nil)
        #expect(policy.refusal(for: try #require(IPAddress("10.21.0.1"))) == "private")
        #expect(policy.refusal(for: try #require(IPAddress("169.254.169.254"))) == "cloud metadata")
        #expect(try AddressPolicy.parse(allowList: "").allowed.isEmpty)
        #expect(try AddressPolicy.parse(allowList: " , ").allowed.isEmpty)
    }

    @Test(arguments: ["127.0.0.0/33", "localhost", "127.0.0.1, 0177.0.0.1", "::1/128,fe80::/10,bogus"])
    func badAllowListEntriesAreNamed(list: String) {
        let bad = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.first {
            IPBlock($0) == nil
        }!
        #expect(
            throws: AddressPolicy.ParseError(
                message:
                    "link preview allow-list entry \"\(bad)\" is not an IP address or CIDR block (like 127.0.0.0/8 or ::1/128)"
            )
        ) {
            try AddressPolicy.parse(allowList: list)
        }
    }
}
