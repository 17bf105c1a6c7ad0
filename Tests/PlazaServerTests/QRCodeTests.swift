import Foundation
import Testing

@testable import PlazaServer

/// Plaza's own QR codes, read back by a real decoder (zbar's `zbarimg`, installed by
/// scripts/install-deps.sh): every version's largest text at level M, and a two-factor key's
/// `otpauth://` URL.
@Suite struct QRCodeTests {
    /// `code` as a PBM image, four pixels a module, with the four-module quiet zone.
    static func pbm(_ code: QRCode) -> Data {
        let scale = 4
        let side = (code.size + 8) * scale
        var lines = ["P1", "\(side) \(side)"]
        for row in 0..<side {
            let y = row / scale - 4
            var line = ""
            line.reserveCapacity(side * 2)
            for column in 0..<side {
                let x = column / scale - 4
                let dark = (0..<code.size).contains(x) && (0..<code.size).contains(y) && code.isDark(x: x, y: y)
                line += dark ? "1 " : "0 "
            }
            lines.append(line)
        }
        return Data((lines.joined(separator: "\n") + "\n").utf8)
    }

    /// What zbarimg reads from `code`.
    static func decode(_ code: QRCode) throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("plaza-qr-\(UUID().uuidString).pbm")
        try pbm(code).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["zbarimg", "--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", file.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "zbarimg found no code")
        var text = String(decoding: data, as: UTF8.self)
        if text.hasSuffix("\n") { text.removeLast() }
        return text
    }

    /// The most bytes version `version` holds at level M.
    static func capacity(_ version: Int) -> Int {
        (0...QRCode.maxBytes).last { QRCode.fits($0, version: version) } ?? 0
    }

    @Test(arguments: 1...40)
    func everyVersionsFullestCodeReadsBack(version: Int) throws {
        let bytes = Self.capacity(version)
        var random = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 -_.:/?=&")
        let text = String((0..<bytes).map { _ in alphabet.randomElement(using: &random) ?? "A" })
        let code = try #require(QRCode(text))
        #expect(code.size == 17 + 4 * version)
        #expect(try Self.decode(code) == text)
        // One byte more needs the next version.
        if version < 40 {
            #expect(QRCode(text + "x")?.size == 21 + 4 * version)
        }
    }

    @Test func aTwoFactorKeysURLReadsBackAndTheSVGDrawsTheSameModules() throws {
        let url = TOTP.url(secret: Array(0..<20), account: "ana_maría", issuer: "Plaza")
        let code = try #require(QRCode(url))
        #expect(try Self.decode(code) == url)

        // The SVG's path, one rectangle per run of dark modules, covers exactly the dark modules.
        let svg = code.svg(title: "Key for <ana>")
        #expect(svg.contains(#"viewBox="0 0 \#(code.size + 8) \#(code.size + 8)""#))
        #expect(svg.contains("<title>Key for &lt;ana&gt;</title>"))
        let path = try #require(svg.split(separator: #"d=""#).last?.split(separator: "\"").first)
        var drawn = Set<Int>()
        for run in path.split(separator: "z") {
            // M<x> <y>h<width>v1h-<width>
            let numbers = run.dropFirst().split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
            try #require(numbers.count == 5)
            for x in numbers[0]..<(numbers[0] + numbers[2]) { drawn.insert((numbers[1] - 4) * code.size + x - 4) }
        }
        let dark = Set((0..<(code.size * code.size)).filter { code.isDark(x: $0 % code.size, y: $0 / code.size) })
        #expect(drawn == dark)
    }

    @Test func moreThanVersion40HoldsIsRefused() {
        #expect(QRCode(bytes: Array(repeating: 0x41, count: QRCode.maxBytes))?.size == 177)
        #expect(QRCode(bytes: Array(repeating: 0x41, count: QRCode.maxBytes + 1)) == nil)
        #expect(QRCode(bytes: [])?.size == 21)
    }
}
