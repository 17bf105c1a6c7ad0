import Foundation

/// Mutates valid inputs the way a hostile client or a broken page would: flipped bits, bytes
/// that end lines or strings (CR, LF, NUL, quotes), bytes of 0x80 and more, pieces of the
/// format's own syntax (`dictionary`), repeated and deleted runs, truncation.
struct Mutator {
    var random: SeededGenerator
    let dictionary: [[UInt8]]

    static let interesting: [UInt8] = [
        0x00, 0x0A, 0x0D, 0x09, 0x20, 0x22, 0x27, 0x2D, 0x2F, 0x3A, 0x3B, 0x3D, 0x5C, 0x7F, 0x80, 0xC0, 0xC3, 0xE2,
        0xF0, 0xFF, 0x25, 0x26, 0x2B, 0x3C, 0x3E,
    ]

    init(seed: UInt64, dictionary: [String] = []) {
        random = SeededGenerator(seed: seed)
        self.dictionary =
            dictionary.map { Array($0.utf8) } + [
                [0x0D, 0x0A], [0x0A], [0xC3, 0xA9], [0xF0, 0x9F, 0x98, 0x80], [0xED, 0xA0, 0x80],
            ]
    }

    mutating func int(_ range: Range<Int>) -> Int { Int.random(in: range, using: &random) }

    mutating func mutate(_ input: [UInt8]) -> [UInt8] {
        var bytes = input
        for _ in 0..<int(1..<5) {
            let at = int(0..<(bytes.count + 1))
            switch int(0..<10) {
            case 0 where !bytes.isEmpty:
                let i = int(0..<bytes.count)
                bytes[i] ^= UInt8(1 << int(0..<8))
            case 1:
                bytes.insert(UInt8.random(in: 0...255, using: &random), at: at)
            case 2:
                bytes.insert(Self.interesting[int(0..<Self.interesting.count)], at: at)
            case 3 where !bytes.isEmpty:
                let i = int(0..<bytes.count)
                bytes.removeSubrange(i..<min(bytes.count, i + int(1..<17)))
            case 4 where !bytes.isEmpty:
                let i = int(0..<bytes.count)
                let run = bytes[i..<min(bytes.count, i + int(1..<33))]
                bytes.insert(contentsOf: Array(run), at: int(0..<(bytes.count + 1)))
            case 5:
                bytes.insert(contentsOf: dictionary[int(0..<dictionary.count)], at: at)
            case 6:
                bytes.removeSubrange(at...)
            case 7 where !bytes.isEmpty:
                bytes[int(0..<bytes.count)] = Self.interesting[int(0..<Self.interesting.count)]
            case 8:
                // A long run: lengths, counters and buffers at their limits.
                let count = int(0..<8) == 0 ? int(256..<4096) : int(1..<64)
                bytes.insert(
                    contentsOf: [UInt8](repeating: Self.interesting[int(0..<Self.interesting.count)], count: count),
                    at: at)
            default:
                let digits = Array(String(Int64.random(in: .min ... .max, using: &random)).utf8)
                bytes.insert(contentsOf: digits, at: at)
            }
        }
        return bytes
    }
}

enum Fuzz {
    /// Cases per parser: `PLAZA_FUZZ_CASES` (`make fuzz` sets a million), else 30,000. The seed is
    /// fixed, so `make test` replays the same cases each run: a guard against regressions, where
    /// `make fuzz` explores (run it after changing a parser).
    static let cases = ProcessInfo.processInfo.environment["PLAZA_FUZZ_CASES"].flatMap(Int.init) ?? 30_000
    /// The seed: `PLAZA_FUZZ_SEED` to replay a run, else a fixed one so the suite is repeatable.
    static let seed = ProcessInfo.processInfo.environment["PLAZA_FUZZ_SEED"].flatMap(UInt64.init) ?? 0x504C_415A_41

    /// A bound on one parser's run, in seconds (`PLAZA_FUZZ_SECONDS`), so that a slow machine
    /// still finishes: the default is far above what 100,000 cases take on a debug build here.
    static let seconds = ProcessInfo.processInfo.environment["PLAZA_FUZZ_SECONDS"].flatMap(Int.init) ?? 600

    /// Runs `body` on `count` mutations of the seeds (and the seeds themselves), or as many as
    /// fit in `seconds`, and prints how many ran. What a case checks is up to `body`; a trap
    /// anywhere stops the whole test process, which fails the run.
    static func run(
        _ name: String, seeds: [[UInt8]], dictionary: [String] = [], count: Int = cases,
        _ body: (_ input: [UInt8], _ random: inout SeededGenerator) throws -> Void
    ) rethrows {
        var mutator = Mutator(seed: seed ^ UInt64(truncatingIfNeeded: name.hashValueStable), dictionary: dictionary)
        for seedInput in seeds { try body(seedInput, &mutator.random) }
        let deadline = ContinuousClock.now + .seconds(Self.seconds)
        var ran = 0
        defer {
            print(
                "fuzz \(name): \(ran) cases, seed \(seed)\(ran < count ? " (stopped at the \(Self.seconds) s bound)" : "")"
            )
        }
        for _ in 0..<count {
            if ran % 1024 == 0, ContinuousClock.now > deadline { return }
            ran += 1
            var input = seeds[mutator.int(0..<seeds.count)]
            // Mutations stack: a quarter of the cases mutate an already mutated input again.
            input = mutator.mutate(input)
            if mutator.int(0..<4) == 0 { input = mutator.mutate(input) }
            try body(input, &mutator.random)
        }
    }

    static func seeds(_ texts: String...) -> [[UInt8]] { texts.map { Array($0.utf8) } }
}

extension String {
    /// FNV-1a: unlike `hashValue`, the same in every process.
    var hashValueStable: UInt64 {
        utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }
}
