import Foundation
import Testing

@testable import PlazaAPI

/// The fast writer must produce exactly what the `Codable` form says, for every writable type.
@Suite("JSON writer")
struct JSONWriterTests {
    static let media = Media(
        id: "9", contentType: "image/webp", width: 1080, height: 720, blurhash: nil, url: "/media/9/original",
        variants: .init(thumbnail: "/media/9/thumbnail", medium: "/media/9/medium", original: "/media/9/original"))
    static let status = UserStatus(
        kind: "safe", text: "All \"good\" \\ here\n\u{1}", updatedAt: Timestamp(milliseconds: 1_795_253_400_123))
    static let user = User(
        id: "1", username: "ana", displayName: "Ana 🌿", bio: "Tabs\tand quotes \"", avatar: media, status: status,
        createdAt: Timestamp(milliseconds: 1_700_000_000_000), counts: .init(posts: 3, followers: 2, following: 1),
        viewer: .init(following: true, followedBy: false, blocking: false))
    static let post = Post(
        id: "42", kind: .activity, author: user.summary, title: nil, body: "Ran 5 km </script>",
        spaces: [SpaceSummary(id: "5", slug: "cs101", name: "CS 101")],
        media: [media],
        link: LinkPreview(url: "https://example.com/a?b=c&d=é", title: "T", fetchedAt: Timestamp(milliseconds: 1)),
        location: Location(latitude: 40.7190, longitude: -73.988, name: nil),
        activity: Activity(
            type: "Run", emoji: "🏃", color: "#ff8800", progress: 100, completedAt: Timestamp(milliseconds: 5)),
        price: "$9", createdAt: Timestamp(milliseconds: 1_795_253_400_000), editedAt: nil,
        counts: .init(likes: 1, comments: 0),
        viewer: .init(liked: true, saved: false),
        poll: Poll(
            id: "42", options: [.init(title: "yes \"really\"", votes: 3), .init(title: "no", votes: nil)],
            multiple: true, expiresAt: Timestamp(milliseconds: 9), expired: false, votersCount: 2, votesCount: nil,
            viewer: .init(voted: true, choices: [0])))

    /// Parses both forms into Foundation objects and compares them.
    func expectSame<T: Encodable & JSONWritable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let fast = Data(JSONWriter.encode(value))
        let reference = try JSONEncoder().encode(value)
        let a = try JSONSerialization.jsonObject(with: fast, options: [.fragmentsAllowed]) as? NSObject
        let b = try JSONSerialization.jsonObject(with: reference, options: [.fragmentsAllowed]) as? NSObject
        #expect(
            a == b, "\(String(decoding: fast, as: UTF8.self))\n!=\n\(String(decoding: reference, as: UTF8.self))",
            sourceLocation: sourceLocation)
    }

    @Test func everyResponseTypeMatchesItsCodableForm() throws {
        try expectSame(Self.media)
        try expectSame(Self.status)
        try expectSame(Self.user)
        var anonymous = Self.user
        anonymous.viewer = nil
        anonymous.avatar = nil
        anonymous.status = nil
        try expectSame(anonymous)
        try expectSame(Self.user.summary)
        var warned = Self.post
        warned.filtered = [FilterMatch(id: "7", phrase: "spoiler", action: .warn)]
        try expectSame(warned)
        try expectSame(
            KeywordFilter(
                id: "7", phrase: "spoiler", wholeWord: true, contexts: [.home, .thread], action: .hide,
                expiresAt: Timestamp(milliseconds: 1_795_253_400_000), createdAt: Timestamp(milliseconds: 5)))
        try expectSame(
            KeywordFilter(
                id: "8", phrase: "x", wholeWord: false, contexts: [.profile], action: .warn, expiresAt: nil,
                createdAt: Timestamp(milliseconds: 5)))
        var locked = Self.user
        locked.locked = true
        locked.viewer = .init(following: false, followedBy: true, blocking: false, requested: true, muting: true)
        try expectSame(locked)
        try expectSame(
            Page(
                items: [JoinRequest(user: Self.user.summary, requestedAt: Timestamp(milliseconds: 1_795_253_400_001))],
                nextCursor: "abc"))
        try expectSame(
            Me(
                user: Self.user, email: "ana@example.com",
                preferences: .object([
                    "lastSpace": .string("cs101"), "size": .number(1.5), "on": .bool(true),
                    "list": .array([.null, .number(3)]),
                ]), isAdmin: false))
        try expectSame(Self.post)
        var plain = Self.post
        (plain.link, plain.location, plain.activity, plain.price, plain.spaces, plain.media) = (
            nil, nil, nil, nil, [], []
        )
        try expectSame(plain)
        try expectSame(Page(items: [Self.post, plain], nextCursor: "abc"))
        try expectSame(Page<User>(items: [], nextCursor: nil))
        try expectSame(
            Comment(
                id: "7", postId: "42", author: Self.user.summary, body: "Nice!", createdAt: Timestamp(milliseconds: 9)))
        try expectSame(LikeState(liked: true, likes: 12))
        try expectSame(
            Session(
                id: "3", createdAt: Timestamp(milliseconds: 1), lastUsedAt: Timestamp(milliseconds: 2),
                expiresAt: Timestamp(milliseconds: 3), userAgent: nil, ip: "127.0.0.1", current: true))
        try expectSame(ErrorBody(code: "invalid_field", message: "title is too long", field: "title"))
        try expectSame(ErrorBody(code: "not_found", message: "Post was not found."))
        try expectSame(Health(status: "ok"))
    }

    @Test func writtenPostsDecodeBackToTheSameValue() throws {
        let decoded = try JSONDecoder().decode(Post.self, from: Data(JSONWriter.encode(Self.post)))
        #expect(decoded == Self.post)
    }

    @Test(arguments: [0.5, 40.719, -73.988, 1e-7, 123456789.125, 3.0, -0.0])
    func numbersRoundTrip(value: Double) throws {
        let text = String(decoding: JSONWriter.encode(value), as: UTF8.self)
        #expect(try JSONDecoder().decode(Double.self, from: Data(text.utf8)) == value, "\(text)")
    }
}
