/// A QR code (ISO/IEC 18004) of some bytes, drawn by Plaza itself so that a secret such as a
/// two-factor key never leaves the server for a third-party image service. Byte mode, error
/// correction level M (15 % of the code may be damaged), the smallest of the 40 versions that
/// holds the bytes, and the mask with the lowest penalty, as the standard chooses it.
struct QRCode: Sendable {
    /// The width and height in modules (21 for version 1, 4 more each version after).
    let size: Int
    /// Row-major, `true` for a dark module.
    private(set) var modules: [Bool]

    /// Bytes that fit in version 40 at level M: 2,331.
    static let maxBytes = 2331

    func isDark(x: Int, y: Int) -> Bool { modules[y * size + x] }

    /// The code of `bytes`, or nil when they are more than a QR code holds.
    init?(bytes: [UInt8]) {
        guard let version = (1...40).first(where: { Self.fits(bytes.count, version: $0) }) else { return nil }
        var symbol = Symbol(version: version)
        symbol.drawFunctionPatterns()
        symbol.drawCodewords(Self.interleaved(Self.dataCodewords(bytes, version: version), version: version))
        var best: (mask: Int, penalty: Int)?
        for mask in 0..<8 {
            var candidate = symbol
            candidate.apply(mask: mask)
            candidate.drawFormatBits(mask: mask)
            let penalty = candidate.penalty()
            if penalty < best?.penalty ?? .max { best = (mask, penalty) }
        }
        let mask = best?.mask ?? 0
        symbol.apply(mask: mask)
        symbol.drawFormatBits(mask: mask)
        size = symbol.size
        modules = symbol.modules
    }

    init?(_ text: String) { self.init(bytes: Array(text.utf8)) }

    /// The code as an SVG document: dark modules on white, with the four-module quiet zone
    /// readers need, scaling to any size without blur.
    func svg(title: String) -> String {
        let side = size + 8
        var path = ""
        for y in 0..<size {
            var x = 0
            while x < size {
                guard isDark(x: x, y: y) else {
                    x += 1
                    continue
                }
                let start = x
                while x < size, isDark(x: x, y: y) { x += 1 }
                path += "M\(start + 4) \(y + 4)h\(x - start)v1h-\(x - start)z"
            }
        }
        return """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(side) \(side)" shape-rendering="crispEdges">\
            <title>\(HTMLText.escape(title))</title>\
            <rect width="\(side)" height="\(side)" fill="#fff"/><path fill="#000" d="\(path)"/></svg>
            """
    }

    // MARK: the data

    /// Error correction codewords per block, and blocks, of each version at level M.
    private static let eccPerBlock = [
        0, 10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26, 26, 28, 28, 28, 28, 28, 28,
        28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28,
    ]
    private static let blocks = [
        0, 1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16, 17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31,
        33, 35, 37, 38, 40, 43, 45, 47, 49,
    ]

    /// The modules that carry data and error correction (everything but the function patterns).
    static func rawDataModules(version: Int) -> Int {
        var modules = (16 * version + 128) * version + 64
        if version >= 2 {
            let alignments = version / 7 + 2
            modules -= (25 * alignments - 10) * alignments - 55
            if version >= 7 { modules -= 36 }
        }
        return modules
    }

    static func dataCodewords(version: Int) -> Int {
        rawDataModules(version: version) / 8 - eccPerBlock[version] * blocks[version]
    }

    private static func countBits(version: Int) -> Int { version <= 9 ? 8 : 16 }

    static func fits(_ count: Int, version: Int) -> Bool {
        count < 1 << countBits(version: version)
            && 4 + countBits(version: version) + 8 * count <= dataCodewords(version: version) * 8
    }

    /// Mode, length, the bytes, the terminator and the pad codewords.
    private static func dataCodewords(_ bytes: [UInt8], version: Int) -> [UInt8] {
        var bits = BitBuffer()
        bits.append(0b0100, count: 4)
        bits.append(bytes.count, count: countBits(version: version))
        for byte in bytes { bits.append(Int(byte), count: 8) }
        let capacity = dataCodewords(version: version) * 8
        bits.append(0, count: min(4, capacity - bits.count))
        bits.append(0, count: (8 - bits.count % 8) % 8)
        var codewords = bits.bytes
        var pad: UInt8 = 0xEC
        while codewords.count < capacity / 8 {
            codewords.append(pad)
            pad ^= 0xEC ^ 0x11
        }
        return codewords
    }

    /// The data split into blocks, each followed by its Reed–Solomon codewords, interleaved.
    private static func interleaved(_ data: [UInt8], version: Int) -> [UInt8] {
        let count = blocks[version]
        let eccLength = eccPerBlock[version]
        let raw = rawDataModules(version: version) / 8
        let shortBlocks = count - raw % count
        let shortLength = raw / count
        let divisor = ReedSolomon.divisor(degree: eccLength)
        var split: [[UInt8]] = []
        var offset = 0
        for index in 0..<count {
            let length = shortLength - eccLength + (index < shortBlocks ? 0 : 1)
            var block = Array(data[offset..<offset + length])
            offset += length
            let ecc = ReedSolomon.remainder(of: block, divisor: divisor)
            if index < shortBlocks { block.append(0) }
            split.append(block + ecc)
        }
        var result: [UInt8] = []
        result.reserveCapacity(raw)
        for column in 0..<(shortLength + 1) {
            for (index, block) in split.enumerated() where column != shortLength - eccLength || index >= shortBlocks {
                result.append(block[column])
            }
        }
        return result
    }
}

/// The symbol being drawn: its modules, and which of them are function patterns.
private struct Symbol {
    let version: Int
    let size: Int
    var modules: [Bool]
    var isFunction: [Bool]

    init(version: Int) {
        self.version = version
        size = version * 4 + 17
        modules = Array(repeating: false, count: size * size)
        isFunction = modules
    }

    mutating func set(_ x: Int, _ y: Int, _ dark: Bool) {
        modules[y * size + x] = dark
        isFunction[y * size + x] = true
    }

    mutating func drawFunctionPatterns() {
        for i in 0..<size {
            set(6, i, i % 2 == 0)
            set(i, 6, i % 2 == 0)
        }
        for (x, y) in [(3, 3), (size - 4, 3), (3, size - 4)] {
            for dy in -4...4 {
                for dx in -4...4 where (0..<size).contains(x + dx) && (0..<size).contains(y + dy) {
                    let distance = max(abs(dx), abs(dy))
                    set(x + dx, y + dy, distance != 2 && distance != 4)
                }
            }
        }
        let centres = alignmentCentres()
        for (i, x) in centres.enumerated() {
            for (j, y) in centres.enumerated() {
                let last = centres.count - 1
                if (i == 0 && j == 0) || (i == 0 && j == last) || (i == last && j == 0) { continue }
                for dy in -2...2 {
                    for dx in -2...2 { set(x + dx, y + dy, max(abs(dx), abs(dy)) != 1) }
                }
            }
        }
        drawFormatBits(mask: 0)  // reserves the format areas; drawn again with the chosen mask
        drawVersionBits()
    }

    func alignmentCentres() -> [Int] {
        guard version > 1 else { return [] }
        let count = version / 7 + 2
        let step = version == 32 ? 26 : (version * 4 + count * 2 + 1) / (count * 2 - 2) * 2
        var centres = [6]
        for index in 0..<(count - 1) { centres.insert(size - 7 - index * step, at: 1) }
        return centres
    }

    mutating func drawFormatBits(mask: Int) {
        let data = 0 << 3 | mask  // level M's two bits are 00
        var remainder = data
        for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
        let bits = (data << 10 | remainder) ^ 0x5412
        func bit(_ i: Int) -> Bool { (bits >> i) & 1 == 1 }
        for i in 0...5 { set(8, i, bit(i)) }
        set(8, 7, bit(6))
        set(8, 8, bit(7))
        set(7, 8, bit(8))
        for i in 9..<15 { set(14 - i, 8, bit(i)) }
        for i in 0..<8 { set(size - 1 - i, 8, bit(i)) }
        for i in 8..<15 { set(8, size - 15 + i, bit(i)) }
        set(8, size - 8, true)
    }

    mutating func drawVersionBits() {
        guard version >= 7 else { return }
        var remainder = version
        for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
        let bits = version << 12 | remainder
        for i in 0..<18 {
            let dark = (bits >> i) & 1 == 1
            let a = size - 11 + i % 3
            let b = i / 3
            set(a, b, dark)
            set(b, a, dark)
        }
    }

    /// The codewords in the zigzag of two-module columns, right to left, skipping the timing column.
    mutating func drawCodewords(_ codewords: [UInt8]) {
        var index = 0
        var right = size - 1
        while right >= 1 {
            if right == 6 { right = 5 }
            for vertical in 0..<size {
                for j in 0..<2 {
                    let x = right - j
                    let upward = (right + 1) & 2 == 0
                    let y = upward ? size - 1 - vertical : vertical
                    if !isFunction[y * size + x], index < codewords.count * 8 {
                        modules[y * size + x] = (codewords[index >> 3] >> (7 - index & 7)) & 1 == 1
                        index += 1
                    }
                }
            }
            right -= 2
        }
    }

    mutating func apply(mask: Int) {
        for y in 0..<size {
            for x in 0..<size where !isFunction[y * size + x] {
                let flip: Bool
                switch mask {
                case 0: flip = (x + y) % 2 == 0
                case 1: flip = y % 2 == 0
                case 2: flip = x % 3 == 0
                case 3: flip = (x + y) % 3 == 0
                case 4: flip = (x / 3 + y / 2) % 2 == 0
                case 5: flip = x * y % 2 + x * y % 3 == 0
                case 6: flip = (x * y % 2 + x * y % 3) % 2 == 0
                default: flip = ((x + y) % 2 + x * y % 3) % 2 == 0
                }
                if flip { modules[y * size + x].toggle() }
            }
        }
    }

    /// The standard's four penalty rules: runs of five or more, 2×2 blocks, finder-like
    /// patterns, and a balance of dark and light far from half.
    func penalty() -> Int {
        var score = 0
        func dark(_ x: Int, _ y: Int) -> Bool { modules[y * size + x] }
        for line in 0..<size {
            for horizontal in [true, false] {
                var run = 0
                var previous = false
                var pattern = 0
                for position in 0..<size {
                    let value = horizontal ? dark(position, line) : dark(line, position)
                    if position > 0, value == previous {
                        run += 1
                    } else {
                        if run >= 5 { score += run - 2 }
                        run = 1
                    }
                    previous = value
                    pattern = ((pattern << 1) | (value ? 1 : 0)) & 0x7FF
                    // 1011101 with four light modules before or after it.
                    if position >= 10, pattern == 0b000_0101_1101 || pattern == 0b101_1101_0000 { score += 40 }
                }
                if run >= 5 { score += run - 2 }
            }
        }
        for y in 0..<(size - 1) {
            for x in 0..<(size - 1) {
                let value = dark(x, y)
                if value == dark(x + 1, y), value == dark(x, y + 1), value == dark(x + 1, y + 1) { score += 3 }
            }
        }
        let darkCount = modules.reduce(0) { $0 + ($1 ? 1 : 0) }
        let total = size * size
        score += ((abs(darkCount * 20 - total * 10) + total - 1) / total - 1) * 10
        return score
    }
}

/// Bits appended most significant first.
private struct BitBuffer {
    private(set) var bits: [Bool] = []
    var count: Int { bits.count }

    mutating func append(_ value: Int, count: Int) {
        for shift in stride(from: count - 1, through: 0, by: -1) { bits.append((value >> shift) & 1 == 1) }
    }

    /// Whole bytes (the caller pads to a multiple of 8 first).
    var bytes: [UInt8] {
        stride(from: 0, to: bits.count - bits.count % 8, by: 8).map { start in
            bits[start..<start + 8].reduce(0) { ($0 << 1) | ($1 ? 1 : 0) }
        }
    }
}

/// Reed–Solomon codes over GF(2⁸) with the polynomial x⁸ + x⁴ + x³ + x² + 1, as QR codes use.
private enum ReedSolomon {
    static func multiply(_ x: UInt8, _ y: UInt8) -> UInt8 {
        var z = 0
        for i in stride(from: 7, through: 0, by: -1) {
            z = (z << 1) ^ ((z >> 7) * 0x11D)
            z ^= Int((y >> i) & 1) * Int(x)
        }
        return UInt8(truncatingIfNeeded: z)
    }

    static func divisor(degree: Int) -> [UInt8] {
        var result = Array(repeating: UInt8(0), count: degree)
        result[degree - 1] = 1
        var root: UInt8 = 1
        for _ in 0..<degree {
            for j in 0..<degree {
                result[j] = multiply(result[j], root)
                if j + 1 < degree { result[j] ^= result[j + 1] }
            }
            root = multiply(root, 2)
        }
        return result
    }

    static func remainder(of data: [UInt8], divisor: [UInt8]) -> [UInt8] {
        var result = Array(repeating: UInt8(0), count: divisor.count)
        for byte in data {
            let factor = byte ^ result.removeFirst()
            result.append(0)
            for i in 0..<result.count { result[i] ^= multiply(divisor[i], factor) }
        }
        return result
    }
}
