import Hummingbird
import Logging
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// Polls: put on a post, voted in once (each option once in a multiple-choice poll), results
/// shown after voting or at the end, the author and voters told when it ends, totals kept on
/// write, replaced by edits, and the same through Mastodon apps.
@Suite("Polls")
struct PollsTests {
    static func pollPost(
        _ api: TestAPI, _ author: Account, _ options: [String] = ["ramen", "udon", "soba"], multiple: Bool = false,
        audience: PostAudience? = nil
    ) async throws -> Post {
        try await api.post(
            author,
            CreatePostRequest(
                kind: .text, body: "Lunch?", audience: audience,
                poll: PollInput(options: options, multiple: multiple, expiresInSeconds: 3600)))
    }

    static func vote(_ api: TestAPI, _ post: Post, _ choices: [Int], as account: Account?) async throws
        -> TestResponse
    {
        try await api.call(.post, "/posts/\(post.id)/poll/votes", as: account, json: PollVoteRequest(choices: choices))
    }

    /// Ends post `post`'s poll now, as if its time had come.
    static func end(_ api: TestAPI, _ post: Post) async throws {
        try await api.withDatabase { db in
            try await db.write { c in
                try await c.exec(
                    "UPDATE polls SET expires_at = \(bind: Timestamp.now.milliseconds - 1) WHERE post_id = \(bind: Int64(post.id) ?? 0)"
                )
            }
        }
    }

    @Test func votingOnceShowsTheResultsAndKeepsTheTotals() async throws {
        try await withApp { api async throws in
            let (ana, bob, cat, dan) = try await api.register("ana", "bob", "cat", "dan")
            let post = try await Self.pollPost(api, ana)
            let made = try #require(post.poll)
            #expect(made.id == post.id && made.options.map(\.title) == ["ramen", "udon", "soba"])
            #expect(made.options.map(\.votes) == [0, 0, 0] && !made.multiple && !made.expired)
            #expect(made.expiresAt.milliseconds - post.createdAt.milliseconds == 3_600_000)
            // Before voting, a reader sees the options and how many voted, not the counts.
            let unseen = try #require(try await api.get("/posts/\(post.id)", as: bob).decode(Post.self).poll)
            #expect(unseen.options.map(\.votes) == [nil, nil, nil] && unseen.votesCount == nil)
            #expect(!unseen.viewer.voted && unseen.viewer.choices.isEmpty)

            #expect(try await Self.vote(api, post, [0], as: nil).status == .unauthorized)
            let voted = try await Self.vote(api, post, [1], as: bob).decode(Poll.self)
            #expect(voted.options.map(\.votes) == [0, 1, 0] && voted.votersCount == 1 && voted.votesCount == 1)
            #expect(voted.viewer == Poll.Viewer(voted: true, choices: [1]))
            let again = try await Self.vote(api, post, [2], as: bob)
            #expect(again.status == .unprocessableContent && again.error?.code == "already_voted")
            let own = try await Self.vote(api, post, [0], as: ana)
            #expect(own.status == .unprocessableContent && own.error?.code == "own_poll")
            for (choices, who) in [([0, 1], cat), ([], cat), ([3], cat), ([-1], cat)] {
                let refused = try await Self.vote(api, post, choices, as: who)
                #expect(refused.status == .unprocessableContent && refused.error?.field == "choices", "\(choices)")
            }
            _ = try await Self.vote(api, post, [1], as: cat)
            // Every door and every list shows the same totals and each reader's own choices.
            let home = try await api.page("/feed/global", as: cat, of: Post.self).items
            #expect(home.first?.poll?.options.map(\.votes) == [0, 2, 0])
            #expect(home.first?.poll?.viewer.choices == [1] && home.first?.poll?.votersCount == 2)
            let authorView = try #require(try await api.get("/posts/\(post.id)", as: ana).decode(Post.self).poll)
            #expect(authorView.options.map(\.votes) == [0, 2, 0] && !authorView.viewer.voted)
            #expect(
                try await api.get("/posts/\(post.id)").decode(Post.self).poll?.options.map(\.votes) == [nil, nil, nil])

            // Once it ended: results for everyone, no more votes.
            try await Self.end(api, post)
            let ended = try #require(try await api.get("/posts/\(post.id)", as: dan).decode(Post.self).poll)
            #expect(ended.expired && ended.options.map(\.votes) == [0, 2, 0])
            let late = try await Self.vote(api, post, [0], as: dan)
            #expect(late.status == .unprocessableContent && late.error?.code == "poll_expired")
        }
    }

    /// One vote, of several options each once: a second vote would be cast knowing the counts.
    @Test func aMultipleChoicePollTakesSeveralOptionsInOneVote() async throws {
        try await withApp { api async throws in
            let (ana, bob, cat) = try await api.register("ana", "bob", "cat")
            let post = try await Self.pollPost(api, ana, ["a", "b", "c", "d"], multiple: true)
            let first = try await Self.vote(api, post, [2, 0], as: bob).decode(Poll.self)
            #expect(first.options.map(\.votes) == [1, 0, 1, 0] && first.viewer.choices == [0, 2])
            let more = try await Self.vote(api, post, [3], as: bob)
            #expect(more.status == .unprocessableContent && more.error?.code == "already_voted")
            #expect(try await Self.vote(api, post, [0, 0], as: cat).status == .unprocessableContent)
            let cats = try await Self.vote(api, post, [0, 1], as: cat).decode(Poll.self)
            #expect(cats.options.map(\.votes) == [2, 1, 1, 0] && cats.votersCount == 2 && cats.votesCount == 4)
            // A deleted account's votes leave the counts.
            #expect(try await AccountDeletionTests.deleteMe(api, cat).status.code / 100 == 2)
            #expect(try await AccountDeletionTests.purgeDue(api) == 1)
            let after = try #require(try await api.get("/posts/\(post.id)", as: ana).decode(Post.self).poll)
            #expect(after.options.map(\.votes) == [1, 0, 1, 0] && after.votersCount == 1)
        }
    }

    @Test func pollsAreReadAndVotedOnlyAsTheirPostsAreRead() async throws {
        try await withApp { api async throws in
            let (ana, bob, cat) = try await api.register("ana", "bob", "cat")
            try await api.follow(bob, "ana")
            let friends = try await Self.pollPost(api, ana, audience: .followers)
            #expect(try await Self.vote(api, friends, [0], as: cat).status == .notFound)
            #expect(try await Self.vote(api, friends, [0], as: bob).status == .ok)
            let plain = try await api.textPost(ana, "no poll here")
            #expect(try await Self.vote(api, plain, [0], as: bob).status == .notFound)
            #expect(try await api.call(.put, "/users/ana/block", as: cat).status == .ok)
            let open = try await Self.pollPost(api, ana)
            #expect(try await Self.vote(api, open, [0], as: cat).status == .notFound)
            // Gone with its post, votes and all.
            #expect(try await api.call(.delete, "/posts/\(friends.id)", as: ana).status == .noContent)
            let left = try await api.withDatabase { db in
                try await db.read { c in
                    try await c.first(
                        "SELECT (SELECT COUNT(*) FROM polls) + (SELECT COUNT(*) FROM poll_votes) AS n"
                    )?.decode(column: "n", as: Int.self)
                }
            }
            #expect(left == 1)
        }
    }

    @Test func badPollsAreRefusedWithTheFieldNamed() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let photo = try await api.uploaded(try MediaFixtures.jpegWithEXIF(), as: ana)
            let bad: [(PollInput, String)] = [
                (PollInput(options: ["one"], expiresInSeconds: 3600), "poll.options"),
                (PollInput(options: (0...10).map { "o\($0)" }, expiresInSeconds: 3600), "poll.options"),
                (PollInput(options: ["Same", "same"], expiresInSeconds: 3600), "poll.options"),
                (PollInput(options: ["a", "  "], expiresInSeconds: 3600), "poll.options"),
                (PollInput(options: ["a", String(repeating: "x", count: 51)], expiresInSeconds: 3600), "poll.options"),
                (PollInput(options: ["a", "b"], expiresInSeconds: 60), "poll.expiresInSeconds"),
                (PollInput(options: ["a", "b"], expiresInSeconds: 40 * 86_400), "poll.expiresInSeconds"),
            ]
            for (poll, field) in bad {
                let response = try await api.call(
                    .post, "/posts", as: ana, json: CreatePostRequest(kind: .text, body: "?", poll: poll))
                #expect(response.status == .unprocessableContent && response.error?.field == field, "\(poll)")
            }
            let withPhoto = try await api.call(
                .post, "/posts", as: ana,
                json: CreatePostRequest(
                    kind: .photo, mediaIds: [photo.id], poll: PollInput(options: ["a", "b"], expiresInSeconds: 600)))
            #expect(withPhoto.status == .unprocessableContent && withPhoto.error?.field == "poll")
            let malformed = try await api.call(
                .post, "/posts", as: ana,
                raw: #"{"kind":"text","body":"?","poll":{"options":"a","expiresInSeconds":600}}"#)
            #expect(malformed.status.code / 100 == 4)
            #expect(try await api.page("/feed/global", of: Post.self).items.isEmpty)
        }
    }

    @Test func theAuthorAndVotersAreToldOnceWhenItEnds() async throws {
        try await withApp { api async throws in
            let (ana, bob, cat, dan) = try await api.register("ana", "bob", "cat", "dan")
            let post = try await Self.pollPost(api, ana)
            _ = try await Self.vote(api, post, [0], as: bob)
            _ = try await Self.vote(api, post, [1], as: cat)
            try await Self.end(api, post)
            for _ in 0..<2 {
                _ = try await api.withDatabase { db in
                    try await AppServices(config: api.config, db: db).polls.announceEnded()
                }
            }
            for person in [ana, bob, cat] {
                let notes = try await api.page("/me/notifications", as: person, of: PlazaAPI.Notification.self).items
                #expect(notes.filter { $0.kind == .poll }.count == 1, "\(person.username)")
                #expect(notes.first { $0.kind == .poll }?.post?.poll?.expired == true)
            }
            #expect(
                try await api.page("/me/notifications", as: dan, of: PlazaAPI.Notification.self).items.isEmpty)
            let remaining = try await api.withDatabase { db in
                try await db.read { c in
                    try await c.first("SELECT COUNT(*) AS n FROM polls WHERE NOT announced")?.decode(
                        column: "n", as: Int.self)
                }
            }
            #expect(remaining == 0)
        }
    }

    @Test func editsKeepVotesForTheSameQuestionAndReplaceThemForAnother() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            let post = try await Self.pollPost(api, ana, ["tea", "coffee"])
            _ = try await Self.vote(api, post, [1], as: bob)
            // Only the end moves: votes stay, no version kept.
            let later = UpdatePostRequest(poll: .set(PollInput(options: ["tea", "coffee"], expiresInSeconds: 7200)))
            let moved = try await api.call(.patch, "/posts/\(post.id)", as: ana, json: later).decode(Post.self)
            #expect(moved.poll?.options.map(\.votes) == [0, 1])
            #expect(try #require(moved.poll).expiresAt > (try #require(post.poll)).expiresAt)
            #expect(try await api.page("/posts/\(post.id)/history", of: PostVersion.self).items.count == 1)
            // Another question: a new poll, the old one in the history, the voter told.
            let other = UpdatePostRequest(
                poll: .set(PollInput(options: ["tea", "juice"], multiple: true, expiresInSeconds: 600)))
            let replaced = try await api.call(.patch, "/posts/\(post.id)", as: ana, json: other).decode(Post.self)
            #expect(replaced.poll?.options.map(\.votes) == [0, 0] && replaced.poll?.votersCount == 0)
            let history = try await api.page("/posts/\(post.id)/history", of: PostVersion.self).items
            #expect(
                history.map(\.poll) == [
                    PollVersion(options: ["tea", "juice"], multiple: true),
                    PollVersion(options: ["tea", "coffee"], multiple: false),
                ])
            let notes = try await api.page("/me/notifications", as: bob, of: PlazaAPI.Notification.self).items
            #expect(notes.first?.kind == .edited)
            #expect(try await Self.vote(api, replaced, [0, 1], as: bob).status == .ok)
            // An ended poll stays ended, with its votes, however an edit asks it again.
            try await Self.end(api, replaced)
            let again = UpdatePostRequest(
                body: .set("Drinks?"),
                poll: .set(PollInput(options: ["tea", "juice"], multiple: true, expiresInSeconds: 600)))
            let kept = try await api.call(.patch, "/posts/\(post.id)", as: ana, json: again).decode(Post.self)
            #expect(kept.poll?.expired == true && kept.poll?.options.map(\.votes) == [1, 1])
            // Taken away.
            let removed = try await api.call(.patch, "/posts/\(post.id)", as: ana, raw: #"{"poll": null}"#)
            #expect(try removed.decode(Post.self).poll == nil)
            let noPoll = try await api.call(
                .patch, "/posts/\(post.id)", as: bob,
                json: UpdatePostRequest(poll: .set(PollInput(options: ["x", "y"], expiresInSeconds: 600))))
            #expect(noPoll.status == .forbidden)
        }
    }

    /// The web app: a form to vote for a reader who may, the results once they voted, to the
    /// author and once it ended; the composer offers a poll.
    @Test func theWebAppShowsAFormToVoteThenTheResults() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            let post = try await Self.pollPost(api, ana, ["ramen", "udon"])
            let form = try await api.page(.get, "/p/\(post.id)", cookie: bob.cookie).text
            #expect(
                form.contains(#"data-poll="\#(post.id)""#) && form.contains(#"type="radio" name="choice" value="1""#))
            #expect(form.contains("0 people voted"))
            let own = try await api.page(.get, "/p/\(post.id)", cookie: ana.cookie).text
            #expect(!own.contains("data-poll=") && own.contains("poll-results"))
            _ = try await Self.vote(api, post, [1], as: bob)
            let results = try await api.page(.get, "/p/\(post.id)", cookie: bob.cookie).text
            #expect(!results.contains("data-poll=") && results.contains(#"<li class="chosen">"#))
            #expect(results.contains(">100%<") && results.contains("1 person voted"))
            let visitor = try await api.page(.get, "/p/\(post.id)").text
            #expect(!visitor.contains("data-poll=") && !visitor.contains("%</span>"))
            let compose = try await api.page(.get, "/compose", cookie: ana.cookie).text
            #expect(
                compose.contains(#"name="pollOption" maxlength="50""#) && compose.contains(#"value="86400" selected"#))
        }
    }

    /// Many people voting at once on one poll: every vote counted once, on both databases.
    @Test func concurrentVotersAreEachCountedOnce() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            var voters: [Account] = []
            for index in 0..<12 { voters.append(try await api.register("voter\(index)")) }
            let post = try await Self.pollPost(api, ana, ["a", "b", "c"])
            let statuses = try await withThrowingTaskGroup(of: [HTTPResponse.Status].self) { group in
                for (index, voter) in voters.enumerated() {
                    group.addTask {
                        [
                            try await Self.vote(api, post, [index % 3], as: voter).status,
                            try await Self.vote(api, post, [(index + 1) % 3], as: voter).status,
                        ]
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(statuses.filter { $0 == .ok }.count == 12)
            #expect(statuses.filter { $0 == .unprocessableContent }.count == 12)
            let poll = try #require(try await api.get("/posts/\(post.id)", as: ana).decode(Post.self).poll)
            #expect(poll.options.map(\.votes) == [4, 4, 4] && poll.votersCount == 12)
        }
    }

    /// Mastodon apps: `poll[...]` on a new status, the poll entity, votes by `choices[]`, the
    /// instance's limits and the `poll` notification.
    @Test func mastodonAppsPostAndVoteInPolls() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            let (anaToken, bobToken) = (try await api.mastodonToken(ana), try await api.mastodonToken(bob))
            let created = try await api.mastodon(
                .post, "/api/v1/statuses", token: anaToken,
                form: [
                    ("status", "Lunch?"), ("poll[options][]", "ramen"), ("poll[options][]", "udon"),
                    ("poll[expires_in]", "3600"), ("poll[multiple]", "false"),
                ]
            ).json()
            let id = try #require(created["id"]?.stringValue)
            #expect(created["poll"]?["id"]?.stringValue == id)
            #expect(created["poll"]?["options"]?.array.map { $0["title"]?.stringValue } == ["ramen", "udon"])
            #expect(created["poll"]?["voted"] == .bool(true) && created["poll"]?["votes_count"] == .number(0))
            let seen = try await api.mastodon(.get, "/api/v1/polls/\(id)", token: bobToken).json()
            #expect(seen["voted"] == .bool(false) && seen["options"]?.array.first?["votes_count"] == .null)
            let voted = try await api.mastodon(
                .post, "/api/v1/polls/\(id)/votes", token: bobToken, form: [("choices[]", "1")]
            ).json()
            #expect(voted["voted"] == .bool(true) && voted["own_votes"] == .array([.number(1)]))
            #expect(voted["options"]?.array.map { $0["votes_count"] } == [.number(0), .number(1)])
            let again = try await api.mastodon(
                .post, "/api/v1/polls/\(id)/votes", token: bobToken, json: #"{"choices": ["0"]}"#)
            #expect(again.status == .unprocessableContent)
            #expect(try again.json()["error"]?.stringValue != nil)
            let reply = try await api.mastodon(
                .post, "/api/v1/statuses", token: bobToken,
                form: [
                    ("status", "?"), ("in_reply_to_id", id), ("poll[options][]", "a"), ("poll[options][]", "b"),
                    ("poll[expires_in]", "600"),
                ])
            #expect(reply.status == .unprocessableContent)
            let bad = try await api.mastodon(
                .post, "/api/v1/statuses", token: anaToken,
                form: [("status", "?"), ("poll[options][]", "only one"), ("poll[expires_in]", "3600")])
            #expect(bad.status == .unprocessableContent)
            let instance = try await api.mastodon(.get, "/api/v2/instance").json()
            #expect(instance["configuration"]?["polls"]?["max_options"] == .number(10))
            let post = try await api.get("/posts/\(id)", as: ana).decode(Post.self)
            try await Self.end(api, post)
            _ = try await api.withDatabase { db in
                try await AppServices(config: api.config, db: db).polls.announceEnded()
            }
            let notes = try await api.mastodon(.get, "/api/v1/notifications", token: bobToken).json().array
            #expect(notes.first?["type"]?.stringValue == "poll")
            #expect(notes.first?["status"]?["poll"]?["expired"] == .bool(true))
        }
    }
}
