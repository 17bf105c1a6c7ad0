import Foundation
import PlazaKitAsyncHTTPClient
import Testing

@testable import PlazaKit
@testable import PlazaKitCore

@Suite("PlazaKit against a running plaza serve")
struct PlazaKitTests {
    @Test func signUpPostAndReadWithTypedErrors() async throws {
        try await withServer { server in
            let ana = try await signedUp("ana", on: server)
            let me = try await ana.me()
            #expect(me.user.username == "ana")
            let post = try await ana.createPost(CreatePostRequest(kind: .text, title: "Hello", body: "From PlazaKit"))
            #expect(try await ana.post(post.id).body == "From PlazaKit")
            #expect(try await ana.feed(.global).items.map(\.id) == [post.id])
            let comment = try await ana.comment(on: post.id, "first")
            #expect(try await ana.comments(on: post.id).items.map(\.id) == [comment.id])
            #expect(try await ana.like(post.id) == LikeState(liked: true, likes: 1))

            // The server's error code, message and field come through as a typed error.
            let anonymous = PlazaClient(baseURL: server.url)
            await #expect(throws: PlazaClientError.self) { try await anonymous.me() }
            do {
                _ = try await anonymous.register(
                    username: "ana", email: "other@example.com", password: "correct horse battery")
                Issue.record("a taken username must fail")
            } catch let error as PlazaClientError {
                #expect(error.status == 409 && error.code == "username_taken")
            }
            do {
                _ = try await ana.createPost(CreatePostRequest(kind: .activity, title: "x"))
                Issue.record("an activity post without its activity must fail")
            } catch let error as PlazaClientError {
                #expect(error.status == 422 && error.field == "activity" && !error.message.isEmpty)
            }
            // Signing out forgets the token and revokes the session.
            try await ana.logout()
            #expect(await ana.tokens.token() == nil)
        }
    }

    /// Two-factor sign-in through the SDK: set up with a code from the "app", then a sign-in
    /// stops at the password with a challenge and completes with the next code.
    /// Step 22 through the SDK: tags, a tag's feed, following it, boosts, warnings and history.
    @Test func hashtagsBoostsWarningsAndHistory() async throws {
        try await withServer { server in
            let ana = try await signedUp("ana", on: server)
            let bob = try await signedUp("bob", on: server)
            let post = try await ana.createPost(
                CreatePostRequest(kind: .text, body: "Slurp #Ramen", contentWarning: "food", sensitive: false))
            #expect(post.tags == ["ramen"] && post.contentWarning == "food")
            #expect(try await bob.feed(.tag("RAMEN")).items.map(\.id) == [post.id])
            #expect(try await bob.suggestHashtags("ra").map(\.name) == ["Ramen"])
            try await bob.followHashtag("ramen")
            #expect(try await bob.hashtag("ramen").following)
            #expect(try await bob.followedHashtags().map(\.key) == ["ramen"])
            #expect(try await bob.feed(.home).items.map(\.id) == [post.id])
            let boosted = try await bob.boost(post.id)
            #expect(boosted.viewer.boosted && boosted.counts.boosts == 1)
            #expect(try await ana.boosters(of: post.id).items.map(\.username) == ["bob"])
            #expect(try await bob.unboost(post.id).counts.boosts == 0)
            _ = try await ana.updatePost(post.id, UpdatePostRequest(body: .set("Slurp #udon")))
            #expect(try await bob.history(of: post.id).map(\.body) == ["Slurp #udon", "Slurp #Ramen"])
            try await bob.unfollowHashtag("ramen")
            #expect(try await bob.followedHashtags().isEmpty)
            // A poll: made, voted in once, its results after the vote.
            let asked = try await ana.createPost(
                CreatePostRequest(
                    kind: .text, body: "Lunch?",
                    poll: PollInput(options: ["ramen", "udon"], multiple: false, expiresInSeconds: 600)))
            #expect(try await bob.post(asked.id).poll?.options.map(\.votes) == [nil, nil])
            let poll = try await bob.vote(in: asked.id, choices: [0])
            #expect(poll.options.map(\.votes) == [1, 0] && poll.viewer.choices == [0])
            await #expect(throws: PlazaClientError.self) { try await bob.vote(in: asked.id, choices: [1]) }
        }
    }

    @Test func twoFactorSignIn() async throws {
        try await withServer { server in
            let ana = try await signedUp("ana", on: server)
            let setup = try await ana.beginTwoFactor(currentPassword: "correct horse battery")
            let secret = try #require(base32Decode(setup.secret))
            let codes = try await ana.confirmTwoFactor(code: authenticatorCode(secret, offset: 0))
            #expect(codes.count == 10)
            #expect(try await ana.twoFactorStatus() == TwoFactorStatus(enabled: true, recoveryCodesLeft: 10))

            let phone = PlazaClient(baseURL: server.url)
            do {
                try await phone.login("ana", password: "correct horse battery")
                Issue.record("the password alone must not sign in")
            } catch let error as PlazaClientError {
                #expect(error.status == 401 && error.code == "second_factor_required")
                let challenge = try #require(error.challenge)
                let me = try await phone.completeLogin(challenge: challenge, code: authenticatorCode(secret, offset: 1))
                #expect(me.user.username == "ana")
                #expect(try await phone.me().user.username == "ana")
            }
        }
    }

    /// Seed 000's closed course, through the SDK: a teacher makes it, a student asks and is
    /// approved, posts a question only classmates read; an invite brings in a second student.
    @Test func aClosedCourseThroughTheSDK() async throws {
        try await withServer { server in
            let teacher = try await signedUp("teacher", on: server)
            let student = try await signedUp("student", on: server)
            let other = try await signedUp("other", on: server)
            let course = try await teacher.createSpace(
                CreateSpaceRequest(slug: "cs101", name: "CS 101", visibility: .closed))
            #expect(course.visibility == .closed && course.viewer.role == .owner)
            try await student.requestToJoin(space: "cs101")
            #expect(try await teacher.joinRequests(of: "cs101").items.map(\.user.username) == ["student"])
            try await teacher.answerJoinRequest(of: "student", to: "cs101", approve: true)
            let question = try await student.createPost(
                CreatePostRequest(kind: .text, body: "How do loops work?", spaces: ["cs101"]))
            #expect(question.audience == .members)
            #expect(try await teacher.post(question.id).id == question.id)
            do {
                _ = try await other.post(question.id)
                Issue.record("a non-member must not read a members-only post")
            } catch let error as PlazaClientError {
                #expect(error.status == 404)
            }
            let invite = try await teacher.createInvite(to: "cs101", CreateInviteRequest(maxUses: 1))
            #expect(try await other.join(inviteCode: invite.code).viewer.member)
            #expect(try await other.post(question.id).id == question.id)
            let members = try await teacher.members(of: "cs101").items
            #expect(members.map(\.user.username) == ["teacher", "student", "other"])
            #expect(try await teacher.setRole(.moderator, of: "student", in: "cs101").role == .moderator)
        }
    }

    /// Seed 001's friends: a locked person approves a request; friends are mutual follows; a mute
    /// hides someone from my feed.
    @Test func followRequestsFriendsAndMutes() async throws {
        try await withServer { server in
            let ana = try await signedUp("ana", on: server)
            let ben = try await signedUp("ben", on: server)
            #expect(try await ana.setLocked(true).user.locked)
            #expect(try await ben.follow("ana").viewer?.requested == true)
            #expect(try await ana.followRequests().items.map(\.user.username) == ["ben"])
            try await ana.approveFollowRequest(from: "ben")
            #expect(try await ben.follow("ana").viewer?.following == true)
            do {
                try await ana.denyFollowRequest(from: "ben")
                Issue.record("an answered request is gone")
            } catch let error as PlazaClientError {
                #expect(error.status == 404)
            }
            _ = try await ana.follow("ben")
            #expect(try await ben.friends(of: "ana").items.map(\.username) == ["ben"])

            let post = try await ana.createPost(CreatePostRequest(kind: .text, body: "hello friends"))
            try await ben.mute("ana")
            #expect(try await ben.feed(.home).items.isEmpty)
            try await ben.unmute("ana")
            #expect(try await ben.feed(.home).items.map(\.id) == [post.id])
        }
    }

    /// Seed 003's moderation through the SDK: a report about a post in a space reaches that
    /// space's moderator, who takes the post out; a report about a person reaches an admin only,
    /// who suspends them (their client is signed out) and lifts it; the audit log has each step.
    @Test func reportsAndSuspensionsThroughTheSDK() async throws {
        try await withServer { server in
            let admin = try await server.admin("root")
            #expect(try await admin.me().isAdmin)
            let mod = try await signedUp("mod", on: server)
            let troll = try await signedUp("troll", on: server)
            let reader = try await signedUp("reader", on: server)
            _ = try await mod.createSpace(CreateSpaceRequest(slug: "memes", name: "Memes"))
            _ = try await troll.join(space: "memes")
            let post = try await troll.createPost(CreatePostRequest(kind: .text, body: "spam", spaces: ["memes"]))

            let postReport = try await reader.report(.post, id: post.id, reason: .spam, note: "ads")
            #expect(try await mod.reports().items.map(\.id) == [postReport.id])
            let removed = try await mod.resolveReport(postReport.id, action: .remove)
            #expect(removed.state == .resolved && removed.action == .remove)
            #expect(try await reader.feed(.space("memes")).items.isEmpty)
            #expect(try await reader.notifications().items.first?.kind == .reportResolved)

            let trollID = try await troll.me().user.id
            let personReport = try await reader.report(.user, id: trollID, reason: .abuse)
            #expect(try await mod.reports().items.isEmpty, "a report about a person is for admins")
            _ = try await admin.resolveReport(personReport.id, action: .suspend, note: "spam wave")
            do {
                _ = try await troll.me()
                Issue.record("a suspended person's session ends")
            } catch let error as PlazaClientError {
                #expect(error.status == 401 && error.code == "invalid_token")
            }
            #expect(await troll.tokens.token() == nil, "the SDK forgets a token the server refused")
            do {
                _ = try await troll.login("troll", password: "correct horse battery")
                Issue.record("a suspended person cannot sign in")
            } catch let error as PlazaClientError {
                #expect(error.status == 403 && error.code == "account_suspended")
            }
            try await admin.unsuspend("troll")
            #expect(try await troll.login("troll", password: "correct horse battery").user.username == "troll")
            let audit = try await admin.audit().items
            #expect(audit.prefix(2).map(\.action) == ["user.unsuspend", "user.suspend"])
            #expect(audit.contains { $0.action == "post.remove" && $0.space == "memes" })
            #expect(audit.first?.targetUser?.username == "troll")
        }
    }

    /// The course app's "fetch by date range, cache posts, infinite scroll": 250 posts paged
    /// through while 30 more arrive, then a refresh: every post exactly once, newest first.
    @Test func aFeedPagerPagesWithoutDuplicatesOrGapsWhilePostsArrive() async throws {
        try await withServer { server in
            let author = try await signedUp("author", on: server)
            var created: [String] = []
            for i in 0..<250 {
                created.append(try await author.createPost(CreatePostRequest(kind: .text, body: "post \(i)")).id)
            }
            let cache = FileManager.default.temporaryDirectory.appendingPathComponent(
                "plazakit-cache-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: cache) }
            let reader = try await signedUp("reader", on: server)
            let pager = FeedPager(client: reader, source: .user("author"), pageSize: 20, cacheDirectory: cache)
            #expect(try await pager.reload().count == 20)
            var pages = 1
            var arriving: [String] = []
            while try await !pager.loadMore().isEmpty {
                pages += 1
                // New posts land between page loads: the cursor keeps paging older ones without a gap.
                if pages <= 15 {
                    for _ in 0..<2 {
                        arriving.append(try await author.createPost(CreatePostRequest(kind: .text, body: "late")).id)
                    }
                }
            }
            #expect(await pager.reachedEnd)
            #expect(pages == 13)
            #expect(await pager.posts.map(\.id) == created.reversed())
            let fresh = try await pager.refresh()
            #expect(fresh.map(\.id) == arriving.reversed())
            let all = await pager.posts.map(\.id)
            #expect(all == arriving.reversed() + created.reversed())
            #expect(Set(all).count == all.count)
            #expect(try await pager.refresh().isEmpty)

            // The disk cache opens the feed with no server at all.
            let offline = PlazaClient(baseURL: URL(string: "http://127.0.0.1:1")!)
            let reopened = FeedPager(client: offline, source: .user("author"), pageSize: 20, cacheDirectory: cache)
            #expect(await reopened.restore().map(\.id) == Array(all.prefix(200)))
        }
    }

    /// Events stream across a server restart: the client reconnects by itself with
    /// Last-Event-ID and gets what it missed exactly once, in order.
    @Test(arguments: ["URLSession", "AsyncHTTPClient"])
    func eventsResumeAfterTheServerClosesTheConnection(transport name: String) async throws {
        let transport: any HTTPTransport = name == "URLSession" ? URLSessionTransport() : AsyncHTTPClientTransport()
        try await withServer { server in
            let ana = try await signedUp("ana", on: server, transport: transport)
            let ben = try await signedUp("ben", on: server, transport: transport)
            _ = try await ben.follow("ana")
            let received = Received()
            let listener = Task {
                for try await event in ben.events(reconnect: .init(initial: .milliseconds(100), maximum: .seconds(1))) {
                    await received.add(event)
                }
            }
            defer { listener.cancel() }
            #expect(await received.waitFor { $0.readies == 1 }, "the stream opened")
            var posted: [String] = []
            for i in 0..<3 {
                posted.append(try await ana.createPost(CreatePostRequest(kind: .text, body: "live \(i)")).id)
            }
            #expect(await received.waitFor { $0.posts.count == 3 })

            // MUT: the server stops (closing every stream) and comes back; posts made before
            // the client reconnects are replayed, later ones arrive live.
            server.stop()
            try await server.start()
            for i in 0..<2 {
                posted.append(try await ana.createPost(CreatePostRequest(kind: .text, body: "missed \(i)")).id)
            }
            #expect(await received.waitFor { $0.readies == 2 }, "reconnected")
            posted.append(try await ana.createPost(CreatePostRequest(kind: .text, body: "after")).id)
            #expect(await received.waitFor { $0.posts.count == 6 })
            try await Task.sleep(for: .milliseconds(300))
            #expect(await received.posts == posted, "each post once, in order")
            // The two missed posts came replayed, or live if the client was back first (its
            // backoff may fire as soon as the server is up, before they are made): either way
            // once each, as above. Replay itself is tested in RealtimeTests.
            #expect(await received.replayed.last.map { (0...2).contains($0) } == true)
        }
    }

    @Test func anImageUploadsWithProgressAndItsVariantsAreServed() async throws {
        try await withServer { server in
            let ana = try await signedUp("ana", on: server)
            let progress = Progress()
            let image = png(width: 640, height: 480)
            let media = try await ana.upload(
                image, filename: "red.png", contentType: "image/png", description: "A red square"
            ) { progress.add($0) }
            #expect(media.width == 640 && media.height == 480)
            #expect(media.description == "A red square")
            #expect(try await ana.describeMedia(media.id, as: "A red rectangle").description == "A red rectangle")
            let seen = progress.values
            #expect(seen.last == 1.0)
            #expect(seen == seen.sorted(), "progress only goes up")
            // Posted, the media are public (before, only their owner may fetch them).
            let post = try await ana.createPost(CreatePostRequest(kind: .photo, body: "red", mediaIds: [media.id]))
            #expect(post.media.map(\.id) == [media.id])
            for variant in [Media.Variant.thumbnail, .medium, .original] {
                let url = ana.mediaURL(media.path(variant))
                #expect(
                    url.absoluteString.hasPrefix(
                        server.url.absoluteString + "/media/\(media.id)/\(variant.rawValue)?k="))
                let response = try await ana.transport.send(HTTPRequestData(method: "GET", url: url))
                #expect(
                    response.status == 200 && response.headers["content-type"]?.hasPrefix("image/") == true
                        && !response.body.isEmpty)
            }
            do {
                _ = try await ana.upload(Data("not an image".utf8), filename: "x.txt", contentType: "text/plain")
                Issue.record("a text file is not an image")
            } catch let error as PlazaClientError {
                #expect(error.status == 415 || error.status == 422)
            }
        }
    }
}

extension PlazaKitTests {
    /// A one-second clip made by ffmpeg (a test pattern and a tone, H.264/AAC in a MOV).
    static func clip() throws -> Data {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("plazakit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("clip.mov")
        let log = folder.appendingPathComponent("ffmpeg.log").path
        #expect(FileManager.default.createFile(atPath: log, contents: nil))
        let ffmpeg = try ChildProcess(
            "/usr/bin/env",
            arguments: [
                "ffmpeg", "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-f",
                "lavfi", "-i", "sine", "-t", "1", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
                "-c:a", "aac", "-shortest", output.path,
            ], environment: ProcessInfo.processInfo.environment, output: log)
        ffmpeg.waitUntilExit()
        return try Data(contentsOf: output)
    }

    /// Course Q&A caches comments as well as posts: a thread pages on, takes my comment and a
    /// live one, and opens from disk with no server.
    @Test func aCommentThreadPagesTakesCommentsAndOpensOffline() async throws {
        try await withServer { server in
            let ana = try await signedUp("ana", on: server)
            let ben = try await signedUp("ben", on: server)
            let post = try await ana.createPost(CreatePostRequest(kind: .text, title: "Recursion?", body: "Why?"))
            var written: [String] = []
            for i in 0..<7 { written.append(try await ben.comment(on: post.id, "answer \(i)").id) }
            let cache = FileManager.default.temporaryDirectory.appendingPathComponent(
                "plazakit-comments-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: cache) }
            let thread = CommentThread(client: ana, postID: post.id, pageSize: 3, cacheDirectory: cache)
            #expect(try await thread.reload().map(\.id) == Array(written.prefix(3)))
            #expect(await thread.post?.title == "Recursion?")
            #expect(try await thread.loadMore().map(\.id) == Array(written[3..<6]))
            // A comment written while I read lands after the ones before it, not twice.
            written.append(try await ben.comment(on: post.id, "late").id)
            while try await !thread.loadMore().isEmpty {}
            #expect(await thread.reachedEnd)
            let mine = try await thread.add("Thanks all")
            written.append(mine.id)
            #expect(await thread.comments.map(\.id) == written)
            #expect(await thread.post?.counts.comments == 9)
            // A live comment once the thread is read to its end; a repeat of one shown is ignored.
            let live = try await ben.comment(on: post.id, "one more")
            await thread.apply(.commentCreated(live))
            await thread.apply(.commentCreated(live))
            written.append(live.id)
            await thread.apply(.likeChanged(LikeChange(postId: post.id, userId: "1", liked: true, likes: 4)))
            try await thread.delete(written[0])
            written.removeFirst()
            #expect(await thread.comments.map(\.id) == written)

            let offline = PlazaClient(baseURL: URL(string: "http://127.0.0.1:1")!)
            let reopened = CommentThread(client: offline, postID: post.id, cacheDirectory: cache)
            let restored = try #require(await reopened.restore())
            #expect(restored.comments.map(\.id) == written)
            #expect(restored.post.counts.comments == 9 && restored.post.counts.likes == 4)
            await reopened.apply(.postDeleted(id: post.id))
            #expect(await CommentThread(client: offline, postID: post.id, cacheDirectory: cache).restore() == nil)
        }
    }

    @Test func suggestionsNamePeopleFollowedByMine() async throws {
        try await withServer { server in
            let ana = try await signedUp("ana", on: server)
            let ben = try await signedUp("ben", on: server)
            _ = try await signedUp("cat", on: server)
            _ = try await ana.follow("ben")
            _ = try await ben.follow("cat")
            let suggestions = try await ana.suggestions()
            #expect(suggestions.people.first?.username == "cat")
            #expect(!suggestions.people.contains { $0.username == "ben" || $0.username == "ana" })
        }
    }

    @Test func activitiesAreFilteredByTypeAndProgress() async throws {
        try await withServer { server in
            let ana = try await signedUp("ana", on: server)
            let run = try await ana.createPost(
                CreatePostRequest(kind: .activity, activity: ActivityInput(type: "Running", progress: 100)))
            let read = try await ana.createPost(
                CreatePostRequest(kind: .activity, activity: ActivityInput(type: "Reading", progress: 20)))
            let done = try await ana.feed(.user("ana"), filter: FeedFilter(progress: .done))
            #expect(done.items.map(\.id) == [run.id])
            let reading = try await ana.feed(.user("ana"), filter: FeedFilter(activityType: "Reading"))
            #expect(reading.items.map(\.id) == [read.id])
        }
    }

    @Test func historyIsFilteredByField() async throws {
        try await withServer { server in
            let ana = try await signedUp("ana", on: server)
            let titled = try await ana.createPost(CreatePostRequest(kind: .text, title: "Recursion", body: "base case"))
            let other = try await ana.createPost(
                CreatePostRequest(kind: .text, title: "Loops", body: "recursion is not"))
            for post in [titled, other] { try await ana.recordView(of: post.id) }
            #expect(try await ana.history(text: "recursion").items.count == 2)
            #expect(try await ana.history(text: "recursion", in: .title).items.map(\.post.id) == [titled.id])
            #expect(try await ana.history(text: "recursion", in: .body).items.map(\.post.id) == [other.id])
        }
    }

    @Test func aVideoIsUploadedPostedAndFollowedUntilItPlays() async throws {
        try await withServer { server in
            let ana = try await signedUp("ana", on: server)
            let ben = try await signedUp("ben", on: server)
            let uploaded = try await ana.upload(try Self.clip(), filename: "clip.mov", contentType: "video/quicktime")
            #expect(uploaded.state == .processing && uploaded.isVideo)
            #expect(uploaded.duration.map { $0 > 0.5 } == true)
            let post = try await ana.createPost(
                CreatePostRequest(kind: .photo, body: "a clip", mediaIds: [uploaded.id]))
            let ready = try await ana.waitUntilProcessed(uploaded, every: .milliseconds(100))
            #expect(ready.state == .ready)
            let seen = try await ben.post(post.id)
            #expect(seen.media.first?.state == .ready)
            let response = try await ben.transport.send(
                HTTPRequestData(
                    method: "GET", url: ben.mediaURL(ready.path(.original)), headers: ["Range": "bytes=0-7"]))
            #expect(response.status == 206 && response.headers["content-type"] == "video/mp4")
            #expect(response.body.count == 8)
            do {
                _ = try await ben.media(uploaded.id)
                Issue.record("someone else's upload is not mine to follow")
            } catch let error as PlazaClientError {
                #expect(error.status == 404)
            }
        }
    }
}

/// What a test's event listener has seen.
actor Received {
    var posts: [String] = []
    var readies = 0
    var replayed: [Int] = []

    func add(_ event: PlazaStreamEvent) {
        switch event.event {
        case .postCreated(let post): posts.append(post.id)
        case .ready(let count):
            readies += 1
            replayed.append(count)
        default: break
        }
    }

    struct Seen: Sendable {
        let posts: [String]
        let readies: Int
    }

    /// Waits until `condition` holds; the 60 s of looks are a hang guard, not a deadline for
    /// behaviour (every wait ends as soon as what it waits for has happened), counted in looks so
    /// that a starved test process still looks as often.
    func waitFor(seconds: Int = 60, _ condition: @Sendable (Seen) -> Bool) async -> Bool {
        for _ in 0..<(seconds * 50) {
            if condition(Seen(posts: posts, readies: readies)) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }
}

final class Progress: @unchecked Sendable {
    // @unchecked: `values` is only touched under `lock`.
    private let lock = NSLock()
    private var seen: [Double] = []
    func add(_ value: Double) { lock.withLock { seen.append(value) } }
    var values: [Double] { lock.withLock { seen } }
}
