import Foundation
import PlazaAPI

/// The demo world's pictures and its video, made by Plaza itself when it seeds (libvips
/// gradients, discs and text; ffmpeg's own test sources), so no image file of unknown licence
/// ships with it.
enum DemoPictures {
    struct Picture: Sendable {
        var from: String
        var to: String
        var caption: String?
        var width = 1080
        var height = 1080
        var seed = 0
        /// The caption's size in points (at 72 dpi, pixels): a fourteenth of the width unless set.
        var fontSize: Int?

        /// Its alt text: what someone who cannot see it is told it shows.
        var description: String {
            let words = caption.map {
                " with the words “\($0.replacingOccurrences(of: "\n", with: " "))” in bold white"
            }
            return "A colour gradient with soft circles\(words ?? "")."
        }

        func jpeg() throws -> [UInt8] {
            try ImagePipeline.poster(
                width: width, height: height, from: DemoPictures.rgb(from), to: DemoPictures.rgb(to), seed: seed,
                caption: caption, font: "sans bold \(fontSize ?? max(24, width / 14))")
        }
    }

    /// `#rrggbb` as three 0–255 values (grey for anything else).
    static func rgb(_ hex: String) -> [Double] {
        let digits = hex.hasPrefix("#") ? hex.dropFirst() : Substring(hex)
        guard digits.count == 6, let value = Int(digits, radix: 16) else { return [128, 128, 128] }
        return [Double((value >> 16) & 0xFF), Double((value >> 8) & 0xFF), Double(value & 0xFF)]
    }

    /// A short clip with sound (ffmpeg's moving gradients and a tone), as an MP4; nil when
    /// ffmpeg cannot make one here.
    static func clip(ffmpeg: String, workDirectory: String) async -> [UInt8]? {
        try? FileManager.default.createDirectory(atPath: workDirectory, withIntermediateDirectories: true)
        let path = "\(workDirectory)/demo-clip-\(UUID().uuidString).mp4"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let sources = [
            "gradients=s=640x360:c0=0xff7a59:c1=0x4f7cff:c2=0x2bb673:n=3:speed=0.03:d=5:r=24",
            "testsrc2=s=640x360:d=5:r=24",
        ]
        for video in sources {
            let command = [
                ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i", video, "-f",
                "lavfi", "-i", "sine=frequency=330:duration=5", "-shortest", "-c:v", "libx264", "-pix_fmt", "yuv420p",
                "-c:a", "aac", "-movflags", "+faststart", path,
            ]
            let outcome = try? await ChildProcess.run(
                command, timeout: .seconds(120), errorLog: path + ".log")
            try? FileManager.default.removeItem(atPath: path + ".log")
            if outcome?.status == 0, let data = FileManager.default.contents(atPath: path) { return [UInt8](data) }
        }
        return nil
    }
}
