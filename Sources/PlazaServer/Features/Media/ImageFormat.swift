/// The image types Plaza accepts, recognised by their first bytes (never by name or declared type).
enum ImageFormat: String, Sendable, CaseIterable {
    case jpeg, png, gif, webp, heif

    /// How many leading bytes `sniff` needs.
    static let signatureLength = 32

    static func sniff(_ bytes: [UInt8]) -> ImageFormat? {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count && Array(bytes[offset..<offset + prefix.count]) == prefix
        }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return .webp }
        // ISO base media: a box of type `ftyp` whose major brand names a HEIF image.
        if starts(Array("ftyp".utf8), at: 4), bytes.count >= 12,
            let brand = String(bytes: bytes[8..<12], encoding: .ascii), heifBrands.contains(brand)
        {
            return .heif
        }
        return nil
    }

    /// HEIF brands of still images and sequences as iPhones and cameras write them (not AVIF).
    static let heifBrands: Set<String> = [
        "heic", "heix", "heim", "heis", "hevc", "hevx", "hevm", "hevs", "mif1", "msf1",
    ]

    /// Whether `loader`, the libvips loader class that would read a file, reads this format
    /// (e.g. `VipsForeignLoadJpegFile`; GIFs are read by `VipsForeignLoadNsgifFile`).
    func isRead(by loader: String) -> Bool {
        switch self {
        case .jpeg: loader.hasPrefix("VipsForeignLoadJpeg")
        case .png: loader.hasPrefix("VipsForeignLoadPng") || loader.hasPrefix("VipsForeignLoadSpng")
        case .gif: loader.hasPrefix("VipsForeignLoadGif") || loader.hasPrefix("VipsForeignLoadNsgif")
        case .webp: loader.hasPrefix("VipsForeignLoadWebp")
        case .heif: loader.hasPrefix("VipsForeignLoadHeif")
        }
    }
}
