import CVips
import Foundation
import Logging
import NIOCore
import NIOPosix

/// Turns an uploaded file into the three variants Plaza serves, with libvips: auto-oriented,
/// converted to sRGB, every bit of metadata (EXIF, GPS, XMP, ICC) dropped, re-encoded.
///
/// Work runs on NIO's blocking thread pool, at most `concurrency` images at a time (one
/// libvips thread each), so uploads cannot take the cores away from requests.
struct ImagePipeline: Sendable {
    struct Limits: Sendable {
        /// Largest width × height of one frame, checked from the header before any decoding.
        var maxPixels = 40_000_000
        /// Largest width × height × frames of an animation.
        var maxAnimationPixels = 200_000_000
    }

    enum Variant: String, Sendable, CaseIterable {
        case thumbnail, medium, original
    }

    struct Output: Sendable {
        var bytes: [UInt8]
        var contentType: String
    }

    struct Result: Sendable {
        var width: Int
        var height: Int
        var blurhash: String?
        /// The original's type; thumbnail and medium share `variantType`.
        var contentType: String
        var variantType: String
        var variants: [Variant: Output]
    }

    let limits: Limits
    private let permits: ResourcePool<Int>
    private let threadPool: NIOThreadPool

    init(limits: Limits = Limits(), concurrency: Int = System.coreCount, threadPool: NIOThreadPool = .singleton) {
        self.limits = limits
        permits = ResourcePool(Array(0..<max(1, concurrency)))
        self.threadPool = threadPool
    }

    /// libvips is loaded and started once per process, at the first image (a server that never
    /// sees an upload does not map it and its codecs), with one worker thread per image.
    /// Why it could not be, or nil when it was; the log says so too.
    private static let libvipsProblem: String? = {
        guard plaza_vips_start(1) != 0 else { return nil }
        let problem = takeError()
        Logger(label: "PlazaServer.media").error("Images cannot be processed: \(problem)")
        return problem
    }()

    /// Why images cannot be processed here (`plaza check`), starting libvips if it was not; nil when they can.
    static var unavailable: String? { libvipsProblem }

    private static func startLibvips() throws {
        guard libvipsProblem != nil else { return }
        throw PlazaError(.serviceUnavailable, "images_unavailable", "This server cannot process images at the moment.")
    }

    /// Processes the image in the file at `path`; `format` is what its first bytes said.
    func process(path: String, format: ImageFormat) async throws -> Result {
        try await permits.withResource { _ in
            try await threadPool.runIfActive { try Self.process(path: path, format: format, limits: limits) }
        }
    }

    private static func process(path: String, format: ImageFormat, limits: Limits) throws -> Result {
        try startLibvips()
        var header = plaza_image_header()
        guard plaza_vips_header(path, &header) == 0, let loader = header.loader.map({ String(cString: $0) }),
            format.isRead(by: loader)
        else {
            throw unreadable()
        }
        let width = Int(header.width)
        let height = Int(header.height)
        let pages = max(1, Int(header.pages))
        guard width > 0, height > 0, width * height <= limits.maxPixels else {
            throw PlazaError(
                .unprocessableContent, "image_too_large",
                "The image is \(width)×\(height) pixels; at most \(limits.maxPixels / 1_000_000) megapixels are accepted.",
                field: "file")
        }
        let animated = (format == .gif || format == .webp) && pages > 1
        guard !animated || width * height * pages <= limits.maxAnimationPixels else {
            throw PlazaError(
                .unprocessableContent, "image_too_large", "The animation has too many frames for its size.",
                field: "file")
        }
        let hasAlpha = header.has_alpha != 0
        // Browsers show JPEG, PNG and WebP; HEIC becomes JPEG, animations animated WebP.
        let originalFormat: (plaza_format, String) =
            switch format {
            case .jpeg, .heif: (PLAZA_FORMAT_JPEG, "image/jpeg")
            case .png: (PLAZA_FORMAT_PNG, "image/png")
            case .webp: (PLAZA_FORMAT_WEBP, "image/webp")
            case .gif: animated ? (PLAZA_FORMAT_WEBP, "image/webp") : (PLAZA_FORMAT_PNG, "image/png")
            }
        let variantFormat: (plaza_format, String) =
            hasAlpha || animated ? (PLAZA_FORMAT_WEBP, "image/webp") : (PLAZA_FORMAT_JPEG, "image/jpeg")
        if animated {
            // Frames are streamed, never held together: each variant decodes the file again.
            let allFrames = "\(path)[n=-1]"
            let original = try render(allFrames, box: 4096, crop: false, format: originalFormat, quality: 88)
            let medium = try render(allFrames, box: 1080, crop: false, format: variantFormat, quality: 82)
            let thumbnail = try render(path, box: 320, crop: true, format: variantFormat, quality: 80)
            return Result(
                width: original.width, height: original.height, blurhash: blurhash(path),
                contentType: originalFormat.1, variantType: variantFormat.1,
                variants: [.original: original.output, .medium: medium.output, .thumbnail: thumbnail.output])
        }
        return try renderStill(path, original: originalFormat, variants: variantFormat)
    }

    /// A still image is decoded once; medium, thumbnail and blurhash come from those pixels.
    private static func renderStill(
        _ path: String, original: (plaza_format, String), variants variantFormat: (plaza_format, String)
    ) throws -> Result {
        var variants = [
            plaza_variant(
                box: 4096, crop: 0, format: original.0, quality: 88, bytes: nil, length: 0, width: 0, height: 0),
            plaza_variant(
                box: 1080, crop: 0, format: variantFormat.0, quality: 82, bytes: nil, length: 0, width: 0, height: 0),
            plaza_variant(
                box: 320, crop: 1, format: variantFormat.0, quality: 80, bytes: nil, length: 0, width: 0, height: 0),
        ]
        var pixels: UnsafeMutableRawPointer?
        var pixelsLength = 0
        var pixelsWidth: Int32 = 0
        var pixelsHeight: Int32 = 0
        guard
            plaza_vips_render_still(
                path, &variants, Int32(variants.count), 32, &pixels, &pixelsLength, &pixelsWidth, &pixelsHeight) == 0
        else {
            throw unreadable()
        }
        defer {
            for variant in variants { plaza_vips_free(variant.bytes) }
            plaza_vips_free(pixels)
        }
        func output(_ variant: plaza_variant, _ type: String) -> Output {
            Output(
                bytes: [UInt8](UnsafeRawBufferPointer(start: variant.bytes, count: variant.length)), contentType: type)
        }
        let hash = pixels.flatMap { pointer in
            Blurhash.encode(
                pixels: [UInt8](UnsafeRawBufferPointer(start: pointer, count: pixelsLength)), width: Int(pixelsWidth),
                height: Int(pixelsHeight))
        }
        return Result(
            width: Int(variants[0].width), height: Int(variants[0].height), blurhash: hash,
            contentType: original.1, variantType: variantFormat.1,
            variants: [
                .original: output(variants[0], original.1), .medium: output(variants[1], variantFormat.1),
                .thumbnail: output(variants[2], variantFormat.1),
            ])
    }

    private static func render(
        _ path: String, box: Int32, crop: Bool, format: (plaza_format, String), quality: Int32
    ) throws -> (output: Output, width: Int, height: Int) {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        var width: Int32 = 0
        var height: Int32 = 0
        guard
            plaza_vips_render(path, box, box, crop ? 1 : 0, format.0, quality, &buffer, &length, &width, &height) == 0,
            let buffer
        else {
            throw unreadable()
        }
        defer { plaza_vips_free(buffer) }
        let bytes = [UInt8](UnsafeRawBufferPointer(start: buffer, count: length))
        return (Output(bytes: bytes, contentType: format.1), Int(width), Int(height))
    }

    private static func blurhash(_ path: String) -> String? {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        var width: Int32 = 0
        var height: Int32 = 0
        guard plaza_vips_pixels(path, 32, &buffer, &length, &width, &height) == 0, let buffer else {
            _ = takeError()
            return nil
        }
        defer { plaza_vips_free(buffer) }
        let pixels = [UInt8](UnsafeRawBufferPointer(start: buffer, count: length))
        return Blurhash.encode(pixels: pixels, width: Int(width), height: Int(height))
    }

    static func takeError() -> String {
        guard let message = plaza_vips_error() else { return "unknown libvips error" }
        defer { free(message) }
        return String(cString: message).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// libvips could not read the image; its message (cleared here) names library internals.
    private static func unreadable() -> PlazaError {
        _ = takeError()
        return PlazaError(
            .unprocessableContent, "unreadable_image", "The image is truncated or corrupt and could not be read.",
            field: "file")
    }

    /// A picture made from nothing, as a JPEG: a diagonal gradient from `from` to `to` (sRGB,
    /// 0–255 each), three discs that `seed` moves, and `caption` centred in `font` (left out
    /// where libvips has no text rendering).
    static func poster(
        width: Int, height: Int, from: [Double], to: [Double], seed: Int, caption: String?,
        font: String = "sans bold 40"
    ) throws -> [UInt8] {
        try startLibvips()
        guard from.count == 3, to.count == 3, width > 8, height > 8 else {
            throw PlazaError(.internalServerError, "poster_failed", "A poster needs two sRGB colours and a size.")
        }
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let status = (caption ?? "").withCString { caption in
            font.withCString { font in
                var poster = plaza_poster(
                    width: Int32(width), height: Int32(height), from: (from[0], from[1], from[2]),
                    to: (to[0], to[1], to[2]), seed: Int32(truncatingIfNeeded: seed), caption: caption, font: font)
                return plaza_vips_poster(&poster, &buffer, &length)
            }
        }
        guard status == 0, let buffer else {
            throw PlazaError(.internalServerError, "poster_failed", "libvips could not make a poster: \(takeError())")
        }
        defer { plaza_vips_free(buffer) }
        return [UInt8](UnsafeRawBufferPointer(start: buffer, count: length))
    }

    /// A synthetic picture for the tests (a colour gradient; `pages` frames).
    static func sample(_ format: ImageFormat, width: Int, height: Int, pages: Int = 1) throws -> [UInt8] {
        try startLibvips()
        let code: plaza_format =
            switch format {
            case .jpeg: PLAZA_FORMAT_JPEG
            case .png: PLAZA_FORMAT_PNG
            case .gif: PLAZA_FORMAT_GIF
            case .webp: PLAZA_FORMAT_WEBP
            case .heif: PLAZA_FORMAT_HEIF
            }
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        guard plaza_vips_sample(code, Int32(width), Int32(height), Int32(pages), &buffer, &length) == 0, let buffer
        else {
            throw PlazaError(
                .internalServerError, "sample_failed", "libvips could not make a \(format) sample: \(takeError())")
        }
        defer { plaza_vips_free(buffer) }
        return [UInt8](UnsafeRawBufferPointer(start: buffer, count: length))
    }
}
