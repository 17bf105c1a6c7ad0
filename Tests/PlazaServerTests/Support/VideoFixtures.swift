import Foundation
import Testing

@testable import PlazaServer

/// Small videos made by ffmpeg itself (lavfi test sources), for the video tests.
enum VideoFixtures {
    /// Runs ffmpeg with `arguments` writing `name` in a fresh folder; returns the file's bytes.
    static func make(_ name: String, _ arguments: [String]) throws -> [UInt8] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("plaza-video-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent(name).path
        try run(
            try #require(ChildProcess.which("ffmpeg")),
            ["-nostdin", "-hide_banner", "-loglevel", "error"] + arguments + ["-y", output])
        return [UInt8](try #require(FileManager.default.contents(atPath: output)))
    }

    /// `seconds` of a test pattern at `width` × `height` with a tone, H.264 + AAC in a MOV that
    /// carries a location (as phones write it).
    static func mov(width: Int = 640, height: Int = 360, seconds: Double = 2, extra: [String] = []) throws -> [UInt8] {
        try make(
            "clip.mov",
            [
                "-f", "lavfi", "-i", "testsrc=size=\(width)x\(height):rate=25", "-f", "lavfi", "-i",
                "sine=frequency=440",
                "-t", String(seconds), "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac",
                "-metadata", "location=+48.8577+002.2950/", "-metadata", "title=PlazaSecretTitle", "-shortest",
            ] + extra)
    }

    /// A landscape clip whose metadata says to show it turned by 90° (a phone held upright).
    static func turned() throws -> [UInt8] {
        let clip = try mov(width: 640, height: 360, seconds: 1)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("plaza-video-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("in.mov").path
        #expect(FileManager.default.createFile(atPath: input, contents: Data(clip)))
        // ffmpeg 5 writes the rotation only when it copies the streams.
        return try make("turned.mov", ["-i", input, "-c", "copy", "-metadata:s:v:0", "rotate=90"])
    }

    /// HEVC in a MOV tagged `hvc1`, as iPhones record.
    static func hevc() throws -> [UInt8] {
        try make(
            "iphone.mov",
            [
                "-f", "lavfi", "-i", "testsrc=size=480x270:rate=25", "-t", "1", "-c:v", "libx265", "-preset",
                "ultrafast",
                "-x265-params", "log-level=error", "-tag:v", "hvc1", "-pix_fmt", "yuv420p",
            ])
    }

    /// VP9 in WebM.
    static func webm() throws -> [UInt8] {
        try make(
            "clip.webm",
            [
                "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-t", "1", "-c:v", "libvpx-vp9", "-deadline",
                "realtime", "-cpu-used", "8",
            ])
    }

    /// One frame at 8192 × 4320: a file that is (and says it is) far past 4K.
    static func huge() throws -> [UInt8] {
        try make(
            "huge.mp4",
            [
                "-f", "lavfi", "-i", "color=c=red:s=8192x4320:r=1", "-frames:v", "1", "-c:v", "libx264", "-preset",
                "ultrafast",
            ])
    }

    /// Sound and no picture, in an MP4 (`ftyp` like a video).
    static func audioOnly() throws -> [UInt8] {
        try make("sound.mp4", ["-f", "lavfi", "-i", "sine=frequency=440", "-t", "1", "-c:a", "aac"])
    }

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }()

    /// ffprobe's view of `bytes`: the first video stream's codec and size, the duration, the
    /// format's tags.
    static func probe(_ bytes: [UInt8]) throws -> (
        codec: String, width: Int, height: Int, seconds: Double, tags: [String: String]
    ) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("plaza-probe-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("in").path
        let json = folder.appendingPathComponent("out.json").path
        #expect(FileManager.default.createFile(atPath: input, contents: Data(bytes)))
        try run(
            try #require(ChildProcess.which("ffprobe")),
            [
                "-v", "error", "-show_entries",
                "format=duration:format_tags:stream=codec_type,codec_name,width,height:stream_tags",
                "-of", "json", "-o", json, input,
            ])
        struct Output: Decodable {
            struct Stream: Decodable {
                var codecType: String?
                var codecName: String?
                var width: Int?
                var height: Int?
                var tags: [String: String]?
            }
            struct Format: Decodable {
                var duration: String?
                var tags: [String: String]?
            }
            var streams: [Stream]
            var format: Format
        }
        let output = try decoder.decode(
            Output.self, from: try #require(FileManager.default.contents(atPath: json)))
        let video = try #require(output.streams.first { $0.codecType == "video" })
        var tags = output.format.tags ?? [:]
        for stream in output.streams { tags.merge(stream.tags ?? [:]) { a, _ in a } }
        return (
            video.codecName ?? "", video.width ?? 0, video.height ?? 0,
            Double(output.format.duration ?? "") ?? 0, tags
        )
    }

    /// Through the server's own `ChildProcess` (posix_spawn: Foundation's `Process` can crash the test process).
    private static func run(_ executable: String, _ arguments: [String]) throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("plaza-fixture-\(UUID()).log").path
        defer { unlink(log) }
        let outcome = try ChildProcess.runBlocking([executable] + arguments, timeout: .seconds(120), errorLog: log)
        #expect(outcome.status == 0, "\(executable) \(arguments.joined(separator: " ")): \(outcome.errorTail)")
    }
}
