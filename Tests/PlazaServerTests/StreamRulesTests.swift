import Foundation
import Testing

@testable import PlazaAPI
@testable import PlazaMastodon
@testable import PlazaServer

/// Who may see an event is decided when it is delivered, from the reader's blocks, mutes,
/// follows, memberships and suspension as they are then: a change made while streams are open
/// applies to every open stream of both formats at once. Each test opens one reader's five
/// streams (Plaza's, Mastodon's user and public over Server-Sent Events, both over one
/// WebSocket), makes a change, and checks what still arrives before a later sentinel post:
/// events arrive in log order, so what has not come before it will not come.
@Suite("Stream rules")
struct StreamRulesTests {
    enum Change: String, CaseIterable, Sendable {
        case block, blockedBy, mute
    }

    /// Ana, and Ben who follows her and the people named in `follows` (each registered).
    static func people(_ api: TestAPI, bensFollows follows: [String]) async throws -> (ana: Account, ben: Account) {
        let (ana, ben) = try await api.register("ana", "ben")
        for name in follows where name != "ana" { _ = try await api.register(name) }
        for name in follows { try await api.follow(ben, name) }
        return (ana, ben)
    }

    @Test(arguments: Change.allCases)
    func aBlockOrAMuteAppliesToOpenStreamsAtOnce(_ change: Change) async throws {
        try await withLiveApp { api, port async throws in
            let (ana, ben) = try await Self.people(api, bensFollows: ["ana", "zed"])
            let zed = try await api.login("zed")
            let streams = try await OpenStreams.open(api, port: port, ben)
            defer { streams.close() }
            let before = try await api.textPost(ana, "before")
            await streams.waitForAll(before.id)
            #expect(streams.missing(before.id).isEmpty, "every stream tells a followed person's public post")
            // MUT
            let (path, actor) =
                switch change {
                case .block: ("/users/ana/block", ben)
                case .blockedBy: ("/users/ben/block", ana)
                case .mute: ("/users/ana/mute", ben)
                }
            #expect(try await api.call(.put, path, as: actor).status.code < 300)
            let after = try await api.textPost(ana, "after")
            let sentinel = try await api.textPost(zed, "sentinel")
            await streams.waitForAll(sentinel.id)
            // validate
            #expect(streams.missing(sentinel.id).isEmpty)
            #expect(streams.telling(after.id).isEmpty, "\(change) applies to the streams already open")
        }
    }

    @Test func anUnfollowOrARemovalFromASpaceAppliesToOpenStreamsAtOnce() async throws {
        try await withLiveApp { api, port async throws in
            let (ana, ben) = try await Self.people(api, bensFollows: ["ana", "zed"])
            let zed = try await api.login("zed")
            let created = try await api.call(
                .post, "/spaces", as: ana, json: CreateSpaceRequest(slug: "club", name: "Club"))
            #expect(created.status == .created)
            #expect(try await api.call(.put, "/spaces/club/membership", as: ben).status == .ok)
            let streams = try await OpenStreams.open(api, port: port, ben)
            defer { streams.close() }
            @Sendable func restricted() async throws -> [String] {
                [
                    try await api.post(ana, CreatePostRequest(kind: .text, body: "followers", audience: .followers)).id,
                    try await api.post(
                        ana, CreatePostRequest(kind: .text, body: "members", spaces: ["club"], audience: .members)
                    ).id,
                ]
            }
            let before = try await restricted()
            let first = try await api.textPost(zed, "first sentinel")
            await streams.waitForAll(first.id)
            for id in before {
                #expect(streams.telling(id) == OpenStreams.own, "only the reader's own streams tell a restricted post")
            }
            // MUT
            #expect(try await api.call(.delete, "/users/ana/follow", as: ben).status.code < 300)
            #expect(try await api.call(.delete, "/spaces/club/members/ben", as: ana).status.code < 300)
            let after = try await restricted()
            let second = try await api.textPost(zed, "second sentinel")
            await streams.waitForAll(second.id)
            // validate
            #expect(streams.missing(second.id).isEmpty)
            for id in after {
                #expect(streams.telling(id).isEmpty, "an unfollow and a removal apply to the streams already open")
            }
        }
    }

    @Test func aSuspensionAppliesToOpenStreamsAtOnce() async throws {
        try await withLiveApp({ $0.streams.heartbeatSeconds = 1 }) { api, port async throws in
            let admin = try await api.admin("adm")
            let (ana, ben) = try await Self.people(api, bensFollows: ["ana"])
            let cat = try await api.register("cat")
            try await api.follow(cat, "ana")
            let streams = try await OpenStreams.open(api, port: port, ben)
            defer { streams.close() }
            let cats = try await EventStreamClient.connect(port: port, token: cat.token)
            defer { cats.close() }
            let ready = try #require(await cats.waitFor(1).first)
            let before = try await api.textPost(ana, "before")
            await streams.waitForAll(before.id)
            #expect(streams.missing(before.id).isEmpty)
            // MUT: the reader is suspended; then the author is.
            #expect(try await api.call(.put, "/admin/users/ben/suspension", as: admin).status == .noContent)
            let after = try await api.textPost(ana, "after")
            // Cat, who was not suspended, is told: the hub has delivered the post to everyone it goes to.
            #expect(await cats.waitForEvent { (try? $0.decode(Post.self).id) == after.id })
            // validate: the suspended reader's streams end (their sessions are gone) without it.
            #expect(await streams.waitForEnd(), "a suspended reader's streams end")
            #expect(streams.telling(after.id).isEmpty, "a suspended reader is told nothing more")
            #expect(try await api.call(.put, "/admin/users/ana/suspension", as: admin).status == .noContent)
            let replay = try await EventStreamClient.connect(port: port, token: cat.token, lastEventID: ready.id)
            defer { replay.close() }
            #expect(
                await replay.waitFor(1).map(\.event) == ["ready"], "a suspended author's posts are not replayed")
        }
    }
}

/// One reader's five streams: Plaza's own, Mastodon's user and public over Server-Sent Events,
/// and Mastodon's user and public over one WebSocket.
struct OpenStreams: Sendable {
    let plaza: EventStreamClient
    let user: EventStreamClient
    let everyone: EventStreamClient
    let socket: MastodonSocketClient

    /// The streams that carry the reader's own events (home feed and notifications).
    static let own: Set<String> = ["plaza", "mastodon user", "websocket user"]
    static let all: Set<String> = own.union(["mastodon public", "websocket public"])

    static func open(_ api: TestAPI, port: Int, _ account: Account) async throws -> OpenStreams {
        let token = try await api.mastodonToken(account)
        let plaza = try await EventStreamClient.connect(port: port, token: account.token)
        #expect(await plaza.waitFor(1).map(\.event) == ["ready"])
        let user = try await EventStreamClient.connect(port: port, token: token, path: "/api/v1/streaming/user")
        let everyone = try await EventStreamClient.connect(port: port, token: token, path: "/api/v1/streaming/public")
        #expect(user.status == 200 && everyone.status == 200)
        let socket = try await MastodonSocketClient.connect(port: port, token: token, streams: ["user", "public"])
        return OpenStreams(plaza: plaza, user: user, everyone: everyone, socket: socket)
    }

    /// The posts each stream told as new or changed, by stream.
    var seen: [String: [String]] {
        func mastodon(_ client: EventStreamClient) -> [String] {
            client.events.filter { ["update", "status.update"].contains($0.event) }.compactMap {
                try? $0.decode(JSONValue.self)["id"]?.stringValue
            }
        }
        return [
            "plaza": plaza.events.filter { ["post.created", "post.updated"].contains($0.event) }.compactMap {
                try? $0.decode(Post.self).id
            },
            "mastodon user": mastodon(user), "mastodon public": mastodon(everyone),
            "websocket user": socket.statuses(on: "user"), "websocket public": socket.statuses(on: "public"),
        ]
    }

    /// The streams that told `post`.
    func telling(_ post: String) -> Set<String> { Set(seen.filter { $0.value.contains(post) }.keys) }

    func missing(_ post: String) -> Set<String> { Self.all.subtracting(telling(post)) }

    /// Waits until every stream has told `post` (or the hang guard).
    func waitForAll(_ post: String) async {
        let looks = Int(EventStreamClient.hangGuard / .milliseconds(10))
        for _ in 0..<looks {
            if missing(post).isEmpty { return }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits until the server has ended every stream.
    func waitForEnd() async -> Bool {
        for client in [plaza, user, everyone] { _ = await client.waitForEnd() }
        await socket.waitUntil { $0.ended }
        return plaza.ended && user.ended && everyone.ended && socket.ended
    }

    func close() {
        for client in [plaza, user, everyone] { client.close() }
        socket.close()
    }
}
