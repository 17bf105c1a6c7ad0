import AsyncHTTPClient
import Foundation
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// Against moto's S3 server, which `scripts/with-moto.sh` starts on loopback and names in
/// PLAZA_TEST_S3_URL (make test does); without it these tests are skipped.
enum TestS3 {
    static let endpoint = ProcessInfo.processInfo.environment["PLAZA_TEST_S3_URL"].flatMap { $0.isEmpty ? nil : $0 }
}

@Suite("S3 media storage", .enabled(if: TestS3.endpoint != nil))
struct S3MediaStorageTests {
    static func settings() -> S3MediaSettings {
        S3MediaSettings(
            endpoint: TestS3.endpoint!, bucket: "plaza-\(UUID().uuidString.lowercased().prefix(8))",
            accessKeyID: "testing",
            secretAccessKey: "testing", prefix: "media/")
    }

    @Test func objectsRoundTripAndDelete() async throws {
        let storage = S3MediaStorage(settings: Self.settings(), client: .shared)
        try await storage.createBucket()
        let bytes = [UInt8]((0..<70_000).map { UInt8($0 % 251) })
        try await storage.put("42/original", bytes: bytes, contentType: "image/jpeg")
        try await storage.put("42/odd name+é", bytes: [1, 2, 3], contentType: "image/png")
        #expect(try await storage.get("42/original").map { Array($0.readableBytesView) } == bytes)
        #expect(try await storage.get("42/odd name+é").map { Array($0.readableBytesView) } == [1, 2, 3])
        #expect(try await storage.get("43/original") == nil)
        try await storage.delete(["42/original", "42/odd name+é", "44/never-there"])
        #expect(try await storage.get("42/original") == nil)
    }

    /// A video through the bucket: its upload and its MP4 are objects; spans are asked of S3.
    @Test func aVideoIsProcessedAndServedInSpansThroughTheBucket() async throws {
        let settings = Self.settings()
        try await S3MediaStorage(settings: settings, client: .shared).createBucket()
        let clip = try VideoFixtures.mov(seconds: 1)
        try await withApp({ $0.media.s3 = settings }) { api async throws in
            let ana = try await api.register("ana")
            let uploaded = try await VideoTests.uploadVideo(api, clip, as: ana)
            let ready = try await VideoTests.processed(api, uploaded, as: ana)
            #expect(ready.state == .ready)
            let storage = S3MediaStorage(settings: settings, client: .shared)
            let whole = try #require(try await storage.get("\(ready.id)/original"))
            #expect(try await storage.get("\(ready.id)/source") == nil, "the upload is gone once transcoded")
            let total = whole.readableBytes
            let span = try await api.fetch(ready.url, as: ana, headers: [.range: "bytes=10-19"])
            #expect(span.status == .partialContent)
            #expect(span.headers[.contentRange] == "bytes 10-19/\(total)")
            #expect(Array(span.body.readableBytesView) == Array(whole.readableBytesView.dropFirst(10).prefix(10)))
            let past = try await api.fetch(ready.url, as: ana, headers: [.range: "bytes=\(total)-"])
            #expect(
                past.status == .rangeNotSatisfiable && past.headers[.contentRange] == "bytes */\(total)",
                "\(past.status) \(past.headers) \(past.text.prefix(300))")
            let all = try await api.fetch(ready.url, as: ana)
            #expect(all.status == .ok && all.body.readableBytes == total)
        }
    }

    @Test func uploadsServeAndDeleteThroughTheBucket() async throws {
        let settings = Self.settings()
        try await S3MediaStorage(settings: settings, client: .shared).createBucket()
        try await withApp({ $0.media.s3 = settings }) { api async throws in
            let ana = try await api.register("ana")
            let media = try await api.uploaded(try MediaFixtures.sample(.jpeg, width: 800, height: 600), as: ana)
            // Unused yet, so its owner's alone.
            let original = try await api.fetch(media.variants.original, as: ana)
            #expect(original.status == .ok)
            #expect(original.headers[.contentType] == "image/jpeg")
            // The bytes are in the bucket, not on the local disk.
            let storage = S3MediaStorage(settings: settings, client: .shared)
            #expect(try await storage.get("\(media.id)/thumbnail") != nil)
            let post = try await api.post(ana, CreatePostRequest(kind: .photo, mediaIds: [media.id]))
            #expect(try await api.call(.delete, "/posts/\(post.id)", as: ana).status == .noContent)
            #expect(try await storage.get("\(media.id)/thumbnail") == nil)
            #expect(try await api.fetch(media.variants.original, as: ana).status == .notFound)
        }
    }
}

@Suite("S3 request signing")
struct S3SigningTests {
    /// AWS's worked example for Signature Version 4 ("GET Object", Amazon S3 API reference).
    @Test func matchesAWSWorkedExample() {
        let settings = S3MediaSettings(
            endpoint: "https://examplebucket.s3.amazonaws.com", bucket: "examplebucket",
            accessKeyID: "AKIAIOSFODNN7EXAMPLE",
            secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
        let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        let authorization = S3MediaStorage.authorization(
            method: "GET", path: "/test.txt",
            headers: [
                "host": "examplebucket.s3.amazonaws.com", "range": "bytes=0-9", "x-amz-content-sha256": empty,
                "x-amz-date": "20130524T000000Z",
            ],
            payloadHash: empty, amzDate: "20130524T000000Z", day: "20130524", settings: settings)
        #expect(
            authorization
                == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
                + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
                + "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    }

    @Test func keysArePercentEncodedSegmentBySegment() {
        #expect(S3MediaStorage.encode("odd name+é") == "odd%20name%2B%C3%A9")
        #expect(S3MediaStorage.encode("a-b_c.d~e") == "a-b_c.d~e")
    }
}
