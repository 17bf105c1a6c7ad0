import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// The video types Plaza accepts, recognised by their first bytes: the ISO base media family
/// (MP4, MOV, iPhone HEVC) and Matroska (WebM). Each is read by the one ffmpeg demuxer named,
/// never by ffmpeg's guess.
enum VideoFormat: String, Sendable {
    case mov, matroska

    static func sniff(_ bytes: [UInt8]) -> VideoFormat? {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count && Array(bytes[offset..<offset + prefix.count]) == prefix
        }
        if starts([0x1A, 0x45, 0xDF, 0xA3]) { return .matroska }
        if starts(Array("ftyp".utf8), at: 4), bytes.count >= 12,
            let brand = String(bytes: bytes[8..<12], encoding: .ascii),
            !ImageFormat.heifBrands.contains(brand), !["avif", "avis"].contains(brand)
        {
            return .mov
        }
        // QuickTime files from before `ftyp`.
        for atom in ["moov", "mdat", "wide", "free", "skip"] where starts(Array(atom.utf8), at: 4) { return .mov }
        return nil
    }
}

/// What a video file holds, as ffprobe reads it.
struct VideoProbe: Sendable, Equatable {
    /// As shown, after the rotation a phone recorded.
    var width: Int
    var height: Int
    var durationMillis: Int64
    var hasAudio: Bool

    /// The size Plaza makes of it: at most 720 on the short side and 1280 on the long one,
    /// never enlarged, even (H.264 with 4:2:0 chroma needs even sides).
    var outputSize: (width: Int, height: Int) {
        let scale = min(1, 720 / Double(min(width, height)), 1280 / Double(max(width, height)))
        func even(_ side: Int) -> Int { max(2, Int((Double(side) * scale / 2).rounded()) * 2) }
        return (even(width), even(height))
    }

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }()

    /// Reads ffprobe's JSON (`-of json`); nil when it names no video stream with a size, or
    /// no duration.
    static func parse(_ json: Data) throws -> VideoProbe {
        struct Output: Decodable {
            struct Stream: Decodable {
                struct SideData: Decodable { var rotation: Double? }
                var codecType: String?
                var width: Int?
                var height: Int?
                var duration: String?
                var sideDataList: [SideData]?
                var tags: [String: String]?
            }
            struct Format: Decodable { var duration: String? }
            var streams: [Stream]?
            var format: Format?
        }
        guard let output = try? Self.decoder.decode(Output.self, from: json) else { throw VideoPipeline.unreadable }
        let streams = output.streams ?? []
        guard !streams.isEmpty else { throw VideoPipeline.unreadable }
        guard let video = streams.first(where: { $0.codecType == "video" }) else {
            throw PlazaError(.unprocessableContent, "no_video", "The file has no video in it.", field: "file")
        }
        guard let width = video.width, let height = video.height, width > 0, height > 0 else {
            throw VideoPipeline.unreadable
        }
        let seconds = output.format?.duration.flatMap(Double.init) ?? video.duration.flatMap(Double.init)
        guard let seconds, seconds.isFinite, seconds > 0, seconds < 1e7 else { throw VideoPipeline.unreadable }
        let rotation =
            video.sideDataList?.compactMap(\.rotation).first
            ?? video.tags?["rotate"].flatMap(Double.init) ?? 0
        // Any angle a file may claim, folded to quarter turns (no conversion of a huge value to Int).
        let quarterTurns = rotation.isFinite ? Int((rotation / 90).rounded().truncatingRemainder(dividingBy: 4)) & 3 : 0
        let turned = quarterTurns == 1 || quarterTurns == 3
        return VideoProbe(
            width: turned ? height : width, height: turned ? width : height,
            durationMillis: Int64((seconds * 1000).rounded()),
            hasAudio: streams.contains { $0.codecType == "audio" })
    }
}

/// How videos are processed: by `ffmpeg` and `ffprobe` run as child processes, with caps.
public struct VideoSettings: Sendable {
    /// Where the programs are; nil: found on the PATH at start. Without them, videos are refused.
    public var ffmpeg: String?
    public var ffprobe: String?
    /// The longest video accepted.
    public var maxSeconds = 120
    /// The largest upload of a video.
    public var maxBytes = 200 * 1024 * 1024
    /// The largest frame (width × height as shown): 4096 × 2304 takes a 4K phone video.
    public var maxPixels = 4096 * 2304
    /// How long the transcoding of one video may run before it is killed and the video failed.
    public var timeout: Duration = .seconds(900)
    /// Threads one ffmpeg uses (one video is processed at a time per server).
    public var threads = max(1, System.coreCount / 2)
    /// Whether this server transcodes (`PLAZA_VIDEO_WORKER=off`: it takes uploads and leaves them
    /// to the servers that do, on the same database and media storage).
    public var worker = true
    /// How often the queue is checked for videos other servers took in, or whose worker died.
    public var pollInterval: Duration = .seconds(10)
    public init() {}
}

/// Probes, takes the poster frame of, and transcodes uploaded videos with ffmpeg, each run as a
/// child process that may read only local files (`-protocol_whitelist file`, the demuxer fixed
/// by the sniffed type), in a network namespace of its own where `unshare` can make one (so it
/// has no network at all), at low priority, killed at a deadline, its output capped in size.
struct VideoPipeline: Sendable {
    let settings: VideoSettings
    let ffmpeg: String
    let ffprobe: String
    /// The programs that wrap each run: `unshare --net` (when it works here) and `nice`.
    let wrapper: [String]
    /// Uploads probed and given a poster at the same time (each runs ffprobe and ffmpeg); more wait.
    let uploadPermits = ResourcePool(Array(0..<2))

    /// Runs `body` (an upload's probe and poster) when fewer than two others are running.
    func withUploadPermit<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await uploadPermits.withResource { _ in try await body() }
    }

    /// What a transcoded video is served as.
    static let contentType = "video/mp4"

    static let unreadable = PlazaError(
        .unprocessableContent, "unreadable_video", "The video is truncated or corrupt and could not be read.",
        field: "file")

    /// nil when ffmpeg or ffprobe cannot be found: videos are then refused with 415.
    static func make(_ settings: VideoSettings, logger: Logger) -> VideoPipeline? {
        guard let ffmpeg = settings.ffmpeg ?? ChildProcess.which("ffmpeg"),
            let ffprobe = settings.ffprobe ?? ChildProcess.which("ffprobe")
        else {
            logger.warning("ffmpeg or ffprobe not found: video uploads are refused. Install ffmpeg to accept them.")
            return nil
        }
        if !wrapper.contains(where: { $0.hasSuffix("/unshare") }) {
            logger.notice("unshare --net is not available: ffmpeg runs without a network namespace of its own.")
        }
        return VideoPipeline(settings: settings, ffmpeg: ffmpeg, ffprobe: ffprobe, wrapper: wrapper)
    }

    /// `unshare --net` when this process may make a network namespace, and `nice`; found once.
    static let wrapper: [String] = {
        var wrapper: [String] = []
        if let unshare = ChildProcess.which("unshare"), isolatedNetworkWorks(unshare) {
            wrapper += [unshare, "--net", "--"]
        }
        if let nice = ChildProcess.which("nice") { wrapper += [nice, "-n", "10"] }
        return wrapper
    }()

    /// Whether this process may make a network namespace (root, or unprivileged user
    /// namespaces): tried once at start.
    private static func isolatedNetworkWorks(_ unshare: String) -> Bool {
        let outcome = try? ChildProcess.runBlocking(
            [unshare, "--net", "--", "true"], timeout: .seconds(10), errorLog: "/dev/null")
        return outcome?.status == 0 && outcome?.timedOut == false
    }

    /// The options that make ffmpeg or ffprobe read `path` as `format` and nothing else.
    private func input(_ path: String, _ format: VideoFormat) -> [String] {
        ["-protocol_whitelist", "file", "-f", format.rawValue, "-i", "file:" + path]
    }

    /// Reads the file's streams; 422 `no_video`, `unreadable_video`, `video_too_large` or
    /// `video_too_long` when it is not a video Plaza takes.
    func probe(_ path: String, format: VideoFormat, workDirectory: String) async throws -> VideoProbe {
        let json = workDirectory + "/probe.json"
        let command =
            wrapper + [
                ffprobe, "-v", "error", "-probesize", "50000000",
            ] + input(path, format)
            + [
                "-show_entries",
                "format=duration:stream=codec_type,width,height,duration:stream_side_data=rotation:stream_tags=rotate",
                "-of", "json", "-o", json,
            ]
        let outcome = try await ChildProcess.run(
            command, timeout: .seconds(30), errorLog: workDirectory + "/probe.log")
        guard outcome.status == 0, !outcome.timedOut, let data = FileManager.default.contents(atPath: json),
            data.count < 1_000_000
        else { throw Self.unreadable }
        let probe = try VideoProbe.parse(data)
        guard probe.width <= 8192, probe.height <= 8192, probe.width * probe.height <= settings.maxPixels else {
            throw PlazaError(
                .unprocessableContent, "video_too_large",
                "The video is \(probe.width)×\(probe.height) pixels; at most 4K (\(settings.maxPixels / 1_000_000) megapixels) is accepted.",
                field: "file")
        }
        guard probe.durationMillis <= Int64(settings.maxSeconds) * 1000 + 500 else {
            throw PlazaError(
                .unprocessableContent, "video_too_long",
                "The video is \(probe.durationMillis / 1000) seconds long; at most \(settings.maxSeconds) are accepted.",
                field: "file")
        }
        return probe
    }

    /// Writes one frame (a second in, or the middle of a shorter video) as a PNG of the output size.
    func poster(_ path: String, format: VideoFormat, probe: VideoProbe, to png: String, workDirectory: String)
        async throws
    {
        let size = probe.outputSize
        let at = min(1.0, Double(probe.durationMillis) / 3000)
        let command =
            wrapper + [ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "error", "-threads", "1", "-ss", String(at)]
            + input(path, format)
            + [
                "-frames:v", "1", "-an", "-sn", "-dn", "-vf", "scale=\(size.width):\(size.height)", "-f", "image2",
                "-c:v", "png", "-fs", "50000000", "-y", png,
            ]
        let outcome = try await ChildProcess.run(
            command, timeout: .seconds(60), errorLog: workDirectory + "/poster.log")
        guard outcome.status == 0, !outcome.timedOut, FileManager.default.fileExists(atPath: png) else {
            throw Self.unreadable
        }
    }

    /// The most bytes a transcoded video may take: 720p at a generous 8 Mbit/s for the longest video.
    var maxOutputBytes: Int { (settings.maxSeconds + 10) * 1_000_000 }

    /// Transcodes to H.264 (main profile, 4:2:0) and AAC in an MP4 whose index comes first
    /// (playback starts before the download ends), at the output size, with every bit of
    /// metadata (location, device, dates) dropped. `progress` gets the percentage done.
    func transcode(
        _ path: String, format: VideoFormat, probe: VideoProbe, to output: String, workDirectory: String,
        progress: @escaping @Sendable (Int) -> Void
    ) async throws -> ChildProcess.Outcome {
        let size = probe.outputSize
        let total = max(1, probe.durationMillis)
        let command =
            wrapper + [ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "error", "-threads", String(settings.threads)]
            + input(path, format)
            + [
                "-map", "0:v:0", "-map", "0:a:0?", "-sn", "-dn", "-map_metadata", "-1", "-map_chapters", "-1",
                "-t", String(settings.maxSeconds),
                "-vf", "scale=\(size.width):\(size.height),format=yuv420p",
                "-c:v", "libx264", "-preset", "veryfast", "-crf", "23", "-profile:v", "main",
                "-c:a", "aac", "-b:a", "128k", "-ac", "2",
                "-movflags", "+faststart", "-fs", String(maxOutputBytes),
                "-progress", "pipe:1", "-nostats", "-f", "mp4", "-y", output,
            ]
        return try await ChildProcess.run(
            command, timeout: settings.timeout, errorLog: workDirectory + "/transcode.log"
        ) { line in
            // `out_time_us=1234567` (ffmpeg also writes the same figure as `out_time_ms`).
            guard line.hasPrefix("out_time_us="), let micros = Int64(line.dropFirst("out_time_us=".count)) else {
                return
            }
            progress(Int(min(99, max(0, micros / 1000 * 100 / total))))
        }
    }
}
