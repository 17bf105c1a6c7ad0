import Foundation

/// Encodes a BlurHash (https://blurha.sh): a short string apps decode into a blurred placeholder
/// while the image loads. `pixels` are 8-bit sRGB, 3 bytes per pixel, row by row.
enum Blurhash {
    static func encode(pixels: [UInt8], width: Int, height: Int, componentsX: Int = 4, componentsY: Int = 3) -> String?
    {
        guard width > 0, height > 0, pixels.count >= width * height * 3,
            (1...9).contains(componentsX), (1...9).contains(componentsY)
        else { return nil }
        let linear = (0...255).map { sRGBToLinear(Double($0)) }
        var factors: [(Double, Double, Double)] = []
        for j in 0..<componentsY {
            for i in 0..<componentsX {
                let normalisation = (i == 0 && j == 0) ? 1.0 : 2.0
                var r = 0.0
                var g = 0.0
                var b = 0.0
                for y in 0..<height {
                    let cosY = cos(Double.pi * Double(j) * Double(y) / Double(height))
                    for x in 0..<width {
                        let basis = cos(Double.pi * Double(i) * Double(x) / Double(width)) * cosY
                        let offset = (y * width + x) * 3
                        r += basis * linear[Int(pixels[offset])]
                        g += basis * linear[Int(pixels[offset + 1])]
                        b += basis * linear[Int(pixels[offset + 2])]
                    }
                }
                let scale = normalisation / Double(width * height)
                factors.append((r * scale, g * scale, b * scale))
            }
        }
        var hash = ""
        encode83((componentsX - 1) + (componentsY - 1) * 9, length: 1, into: &hash)
        let ac = factors.dropFirst()
        var maximum = 1.0
        if ac.isEmpty {
            encode83(0, length: 1, into: &hash)
        } else {
            let actual = ac.map { max(abs($0.0), abs($0.1), abs($0.2)) }.max() ?? 0
            let quantised = Int(max(0, min(82, (actual * 166 - 0.5).rounded(.down))))
            maximum = Double(quantised + 1) / 166
            encode83(quantised, length: 1, into: &hash)
        }
        let dc = factors[0]
        encode83((linearToSRGB(dc.0) << 16) + (linearToSRGB(dc.1) << 8) + linearToSRGB(dc.2), length: 4, into: &hash)
        for factor in ac {
            func quantise(_ value: Double) -> Int {
                Int(max(0, min(18, (signedPow(value / maximum, 0.5) * 9 + 9.5).rounded(.down))))
            }
            encode83(
                quantise(factor.0) * 19 * 19 + quantise(factor.1) * 19 + quantise(factor.2), length: 2, into: &hash)
        }
        return hash
    }

    private static let digits = Array(
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~")

    private static func encode83(_ value: Int, length: Int, into hash: inout String) {
        var divisor = 1
        for _ in 1..<max(1, length) { divisor *= 83 }
        for _ in 0..<length {
            hash.append(digits[(value / divisor) % 83])
            divisor /= 83
        }
    }

    static func sRGBToLinear(_ value: Double) -> Double {
        let v = value / 255
        return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
    }

    static func linearToSRGB(_ value: Double) -> Int {
        let v = max(0, min(1, value))
        return v <= 0.0031308 ? Int(v * 12.92 * 255 + 0.5) : Int((1.055 * pow(v, 1 / 2.4) - 0.055) * 255 + 0.5)
    }

    private static func signedPow(_ value: Double, _ exponent: Double) -> Double {
        (value < 0 ? -1 : 1) * pow(abs(value), exponent)
    }
}
