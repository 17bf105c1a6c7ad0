import Foundation
import HTTPTypes
import NIOCore
import PlazaAPI
import Testing

@testable import PlazaServer

/// Test images, made here: samples from libvips, plus hand-made EXIF, truncation and lying headers.
enum MediaFixtures {
    static func sample(_ format: ImageFormat, width: Int = 64, height: Int = 48, pages: Int = 1) throws -> [UInt8] {
        try ImagePipeline.sample(format, width: width, height: height, pages: pages)
    }

    /// A JPEG whose EXIF names a camera, carries GPS coordinates and, optionally, an orientation.
    static func jpegWithEXIF(width: Int = 40, height: Int = 20, orientation: UInt16? = nil) throws -> [UInt8] {
        let jpeg = try sample(.jpeg, width: width, height: height)
        // TIFF, little-endian: IFD0 with Make, Model, [Orientation], GPS IFD pointer; then the GPS IFD.
        var tiff: [UInt8] = Array("II".utf8) + le16(42) + le32(8)
        let make = Array("PlazaTestCam\0".utf8)
        let model = Array("Model X1000\0".utf8)
        var entries: [(tag: UInt16, type: UInt16, count: UInt32, value: [UInt8])] = [
            (0x010F, 2, UInt32(make.count), make), (0x0110, 2, UInt32(model.count), model),
        ]
        if let orientation { entries.append((0x0112, 3, 1, le16(orientation) + [0, 0])) }
        entries.append((0x8825, 4, 1, []))  // GPS IFD offset, filled below
        let ifd0Size = 2 + entries.count * 12 + 4
        var dataOffset = 8 + ifd0Size
        var data: [UInt8] = []
        var ifd: [UInt8] = le16(UInt16(entries.count))
        var gpsPointerPosition = 0
        for entry in entries {
            ifd += le16(entry.tag) + le16(entry.type) + le32(entry.count)
            if entry.tag == 0x8825 {
                gpsPointerPosition = 8 + ifd.count
                ifd += le32(0)
            } else if entry.value.count <= 4 {
                ifd += entry.value + [UInt8](repeating: 0, count: 4 - entry.value.count)
            } else {
                ifd += le32(UInt32(dataOffset))
                data += entry.value
                dataOffset += entry.value.count
            }
        }
        ifd += le32(0)
        tiff += ifd + data
        let gpsOffset = tiff.count
        tiff.replaceSubrange(gpsPointerPosition..<gpsPointerPosition + 4, with: le32(UInt32(gpsOffset)))
        // GPS IFD: LatitudeRef "N", Latitude 52/1 31/1 0/1, LongitudeRef "E", Longitude 13/1 24/1 0/1.
        let rationalsOffset = gpsOffset + 2 + 4 * 12 + 4
        var gps: [UInt8] = le16(4)
        gps += le16(1) + le16(2) + le32(2) + Array("N\0\0\0".utf8)
        gps += le16(2) + le16(5) + le32(3) + le32(UInt32(rationalsOffset))
        gps += le16(3) + le16(2) + le32(2) + Array("E\0\0\0".utf8)
        gps += le16(4) + le16(5) + le32(3) + le32(UInt32(rationalsOffset + 24))
        gps += le32(0)
        for value in [52, 31, 0, 13, 24, 0] as [UInt32] { gps += le32(value) + le32(1) }
        tiff += gps
        let payload = Array("Exif\0\0".utf8) + tiff
        let segment: [UInt8] = [0xFF, 0xE1] + be16(UInt16(payload.count + 2)) + payload
        return Array(jpeg[0..<2]) + segment + Array(jpeg[2...])
    }

    /// A valid tiny PNG whose header claims `width` × `height` pixels (CRC fixed up).
    static func pngClaiming(width: UInt32, height: UInt32) throws -> [UInt8] {
        var png = try sample(.png, width: 8, height: 8)
        // Signature (8), IHDR length (4), "IHDR" (4), then width and height.
        png.replaceSubrange(16..<20, with: be32(width))
        png.replaceSubrange(20..<24, with: be32(height))
        png.replaceSubrange(29..<33, with: be32(crc32(Array(png[12..<29]))))
        return png
    }

    static let html = Array("<!doctype html><html><body><script>alert(1)</script></body></html>".utf8)
    static let svg = Array(
        #"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script><rect width="10" height="10"/></svg>"#
            .utf8)

    /// multipart/form-data with one `file` part (and an extra text field, as browsers send),
    /// then `fields`' text parts.
    static func multipart(
        _ bytes: [UInt8], filename: String = "photo.jpg", contentType: String = "image/jpeg", field: String = "file",
        fields: [String: String] = [:]
    ) -> (body: ByteBuffer, contentType: String) {
        let boundary = "PlazaBoundary\(UInt32.random(in: 0..<UInt32.max))"
        var body = ByteBuffer()
        body.writeString("--\(boundary)\r\nContent-Disposition: form-data; name=\"caption\"\r\n\r\nhello\r\n")
        body.writeString(
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(field)\"; filename=\"\(filename)\"\r\nContent-Type: \(contentType)\r\n\r\n"
        )
        body.writeBytes(bytes)
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
            body.writeString("\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)")
        }
        body.writeString("\r\n--\(boundary)--\r\n")
        return (body, "multipart/form-data; boundary=\(boundary)")
    }

    static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    static func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8((v >> (8 * $0)) & 0xFF) } }
    static func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
    static func be32(_ v: UInt32) -> [UInt8] { (0..<4).reversed().map { UInt8((v >> (8 * $0)) & 0xFF) } }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    /// True when `bytes` contain `needle`.
    static func contains(_ bytes: [UInt8], _ needle: String) -> Bool {
        let needle = Array(needle.utf8)
        guard bytes.count >= needle.count else { return false }
        return (0...(bytes.count - needle.count)).contains { bytes[$0..<$0 + needle.count].elementsEqual(needle) }
    }
}

extension TestAPI {
    /// Uploads `bytes` as the `file` field of `POST /me/media`.
    func upload(
        _ bytes: [UInt8], as account: Account?, filename: String = "photo.jpg", contentType: String = "image/jpeg",
        fields: [String: String] = [:]
    ) async throws -> TestResponse {
        let form = MediaFixtures.multipart(bytes, filename: filename, contentType: contentType, fields: fields)
        var headers: HTTPFields = [.contentType: form.contentType]
        if let account { headers[.authorization] = "Bearer \(account.token)" }
        let response = try await client.execute(
            uri: "/api/v1/me/media", method: .post, headers: headers, body: form.body)
        return TestResponse(status: response.status, headers: response.headers, body: response.body)
    }

    func uploaded(_ bytes: [UInt8], as account: Account) async throws -> Media {
        let response = try await upload(bytes, as: account)
        #expect(response.status == .created, "upload: \(response.text)")
        return try response.decode(Media.self)
    }

    /// A path outside `/api/v1`, e.g. `/media/1/original?k=…`, as `account` when given.
    func fetch(_ path: String, as account: Account? = nil, headers: HTTPFields = [:], method: HTTPRequest.Method = .get)
        async throws -> TestResponse
    {
        var headers = headers
        if let account { headers[.authorization] = "Bearer \(account.token)" }
        let response = try await client.execute(uri: path, method: method, headers: headers, body: nil)
        return TestResponse(status: response.status, headers: response.headers, body: response.body)
    }
}
