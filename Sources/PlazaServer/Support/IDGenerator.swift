import NIOConcurrencyHelpers
import PlazaAPI

/// Time-ordered 64-bit IDs: 41 bits of milliseconds since 2024-01-01, 10 bits of node,
/// 12 bits of sequence. Newer IDs compare greater; several app servers use distinct nodes.
public final class IDGenerator: Sendable {
    package static let epoch: Int64 = 1_704_067_200_000
    private let node: Int64
    private let state = NIOLockedValueBox((millis: Int64(0), sequence: Int64(0)))

    public init(node: Int) {
        self.node = Int64(node & 0x3FF)
    }

    public func next(at time: Timestamp = .now) -> Int64 {
        state.withLockedValue { state in
            var millis = max(time.milliseconds, state.millis)
            var sequence: Int64 = 0
            if millis == state.millis {
                sequence = state.sequence + 1
                if sequence > 0xFFF {  // 4096 IDs in one millisecond: borrow the next one.
                    millis += 1
                    sequence = 0
                }
            }
            state = (millis, sequence)
            return ((millis - Self.epoch) << 22) | (node << 12) | sequence
        }
    }
}

/// IDs travel as decimal strings, exactly as the server renders them (no sign, no leading
/// zero); anything else is simply not found.
func parseID(_ text: String) -> Int64? {
    let digits = text.utf8
    guard (1...19).contains(digits.count), digits.first != UInt8(ascii: "0"),
        digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }), let value = Int64(text)
    else { return nil }
    return value
}
