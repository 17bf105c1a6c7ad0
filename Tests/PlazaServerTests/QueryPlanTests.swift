import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// The hot queries must be answered from indexes: EXPLAIN must show no full scan of a table.
/// (On PostgreSQL sequential scans are disabled for the check, since on a small table the
/// planner would rightly prefer one; what matters is that an index can serve the query.)
@Suite("Query plans")
struct QueryPlanTests {
    static let viewer: Int64 = 7
    static let cursor = Cursor(time: 1_800_000_000_000, id: 99)

    static let queries: [(String, SQL)] =
        [
            ("push queue", PushOutbox.dueSQL(now: 1_000, limit: 16)),
            ("an Idempotency-Key's answer", IdempotencyStore.lookupSQL(user: viewer, key: "k")),
            ("Idempotency-Keys past their day", IdempotencyStore.pruneSQL(now: 1_800_000_000_000)),
            (
                "a list's feed",
                PostStore.feedSQL(
                    .init(source: .list(owner: viewer, id: 9), page: PageRequest(limit: 20, cursor: cursor)),
                    viewer: viewer)
            ),
            (
                "a home feed with an exclusive list",
                PostStore.feedSQL(
                    .init(source: .home(viewer), page: PageRequest(limit: 20, cursor: cursor)), viewer: viewer,
                    home: .init(spaces: [5], exclusive: true))
            ),
            ("a list's accounts", ListStore.accountsSQL(of: 9, maxID: 100, sinceID: nil, limit: 41)),
            ("the authors a followed tag's backfill brings", TagStore.backfillAuthorsSQL(tag: "noodles")),
            ("the pulled accounts of a list", HomeTimeline.pulledSQL(of: viewer, list: 9)),
            ("video queue", VideoStore.queueSQL(now: 1_000)),
            ("ended polls to announce", PollStore.dueSQL(now: 1_000, limit: 20)),
            (
                "a person's activities of one type",
                PostStore.feedSQL(
                    .init(source: .author(3), activityType: "Running", page: PageRequest(limit: 20)), viewer: viewer)
            ),
            (
                "everyone's activities of one type, done",
                PostStore.feedSQL(
                    .init(source: .global, activityType: "Running", progress: .done, page: PageRequest(limit: 20)),
                    viewer: viewer)
            ),
            (
                "a person's unfinished activities",
                PostStore.feedSQL(
                    .init(source: .author(3), progress: .ongoing, page: PageRequest(limit: 20)), viewer: viewer)
            ),
            (
                "people to follow",
                SuggestionStore.peopleSQL(for: viewer, .init(followees: [3, 4], spaces: [5, 6]))
            ),
            ("spaces to join", SuggestionStore.spacesSQL(for: viewer, .init(followees: [3, 4], spaces: [5]))),
            ("a person's push devices", PushDeviceStore.listSQL(user: viewer)),
            ("a person's keyword filters", KeywordFilterStore.listSQL(user: viewer)),
            ("a reader's active keyword filters", KeywordFilterStore.activeSQL(of: viewer, now: 1_000)),
            ("global feed", PostStore.feedSQL(.init(source: .global, page: PageRequest(limit: 20)), viewer: nil)),
            (
                "global feed, signed in, deep page",
                PostStore.feedSQL(.init(source: .global, page: PageRequest(limit: 20, cursor: cursor)), viewer: viewer)
            ),
            (
                "global feed by kind",
                PostStore.feedSQL(
                    .init(source: .global, kind: .activity, page: PageRequest(limit: 20, cursor: cursor)),
                    viewer: viewer)
            ),
            (
                "global feed date range",
                PostStore.feedSQL(
                    .init(
                        source: .global, since: Timestamp(milliseconds: 1), until: Timestamp(milliseconds: 2),
                        page: PageRequest(limit: 20)), viewer: nil)
            ),
            (
                "home feed",
                PostStore.feedSQL(
                    .init(source: .home(viewer), page: PageRequest(limit: 20, cursor: cursor)), viewer: viewer)
            ),
            (
                "home feed by kind",
                PostStore.feedSQL(
                    .init(source: .home(viewer), kind: .text, page: PageRequest(limit: 20)), viewer: viewer)
            ),
            (
                "user's posts",
                PostStore.feedSQL(
                    .init(source: .author(3), page: PageRequest(limit: 20, cursor: cursor)), viewer: viewer)
            ),
            ("profile by username", PeopleStore.userIDSQL(usernameKey: "ana")),
            (
                "followers",
                PeopleStore.followsSQL(.followers, of: 3, page: PageRequest(limit: 20, cursor: cursor), viewer: viewer)
            ),
            (
                "following",
                PeopleStore.followsSQL(.following, of: 3, page: PageRequest(limit: 20, cursor: cursor), viewer: viewer)
            ),
            (
                "friends",
                PeopleStore.followsSQL(.friends, of: 3, page: PageRequest(limit: 20, cursor: cursor), viewer: viewer)
            ),
            (
                "follow requests",
                PeopleStore.followRequestsSQL(to: viewer, page: PageRequest(limit: 20, cursor: cursor))
            ),
            (
                "comments of a post",
                CommentStore.listSQL(post: 5, page: PageRequest(limit: 20, cursor: cursor), viewer: viewer)
            ),
            (
                "likers of a post",
                LikeStore.likersSQL(post: 5, page: PageRequest(limit: 20, cursor: cursor), viewer: viewer)
            ),
            (
                "home feed with joined spaces",
                PostStore.feedSQL(
                    .init(source: .home(viewer), page: PageRequest(limit: 20, cursor: cursor)), viewer: viewer,
                    home: .init(pulled: [21, 22], spaces: [11, 12]))
            ),
            (
                "home feed following more pulled accounts than it merges one by one",
                PostStore.feedSQL(
                    .init(source: .home(viewer), page: PageRequest(limit: 20)), viewer: viewer,
                    home: .init(pulled: Array(1...Int64(HomeTimeline.maxPulledBranches + 1))))
            ),
            (
                "home feed with posts waiting to be entered",
                PostStore.feedSQL(
                    .init(source: .home(viewer), page: PageRequest(limit: 20, cursor: cursor)), viewer: viewer,
                    home: .init(exclusive: true, pending: true))
            ),
            (
                "list feed with posts waiting to be entered",
                PostStore.feedSQL(
                    .init(source: .list(owner: viewer, id: 7), page: PageRequest(limit: 20, cursor: cursor)),
                    viewer: viewer, home: .init(list: 7, pending: true))
            ),
            ("home timeline: a post queued", HomeTimeline.queueSQL(post: 5, author: 3, createdAt: 1)),
            ("home timeline: undone boosts taken out", HomeTimeline.undoneBoostsSQL([5, 6])),
            ("home timeline: waiting boosts entered", HomeTimeline.enterBoostsSQL([5, 6])),
            ("home timeline: a boost's entries taken out with its post", BoostStore.removeFromTimelinesSQL(post: 5)),
            ("home timeline: an unfollow's boosts", BoostStore.unfollowedSQL(follower: viewer, followee: 3)),
            ("home timeline: boosts of posts a follow brought", BoostStore.redundantSQL(of: viewer)),
            (
                "home timeline: an exclusive list, and what waits for a home feed",
                HomeTimeline.flagsSQL(of: viewer, list: nil)
            ),
            ("home timeline: what waits for a list's feed", HomeTimeline.flagsSQL(of: viewer, list: 7)),
            ("home timeline: a post taken out", HomeTimeline.removeSQL(post: 5, author: 3)),
            ("home timeline: a follow's backfill", HomeTimeline.backfillSQL(follower: viewer, followee: 3)),
            ("home timeline: an unfollow", HomeTimeline.unfollowedSQL(follower: viewer, followee: 3)),
            ("home timeline: pulled accounts followed", HomeTimeline.pulledSQL(of: viewer)),
            (
                "space feed",
                PostStore.feedSQL(
                    .init(source: .space(11), page: PageRequest(limit: 20, cursor: cursor)), viewer: viewer)
            ),
            (
                "space feed by kind and date",
                PostStore.feedSQL(
                    .init(
                        source: .space(11), kind: .text, since: Timestamp(milliseconds: 1), page: PageRequest(limit: 20)
                    ),
                    viewer: nil)
            ),
            ("spaces", SpaceStore.listSQL(.init(page: PageRequest(limit: 20, cursor: cursor)), viewer: viewer)),
            ("spaces matching text", SpaceStore.listSQL(.init(text: "cs", page: PageRequest(limit: 20)), viewer: nil)),
            (
                "spaces I joined",
                SpaceStore.listSQL(
                    .init(memberOf: viewer, page: PageRequest(limit: 20, cursor: cursor)), viewer: viewer)
            ),
            (
                "space members",
                SpaceMembersStore.membersSQL(space: 11, viewer: viewer, page: PageRequest(limit: 20, cursor: cursor))
            ),
            (
                "join requests",
                SpaceMembersStore.requestsSQL(space: 11, viewer: viewer, page: PageRequest(limit: 20, cursor: cursor))
            ),
            ("my collections", CollectionStore.listSQL(owner: viewer, page: PageRequest(limit: 20, cursor: cursor))),
            (
                "items of a collection",
                CollectionStore.itemsSQL(collection: 4, page: PageRequest(limit: 20, cursor: cursor))
            ),
            ("activity heatmap", PeopleStore.activitySQL(userID: 3, from: 1_700_000_000_000, viewer: 5)),
            ("activity heatmap, anonymous", PeopleStore.activitySQL(userID: 3, from: 1_700_000_000_000, viewer: nil)),
            (
                "notifications",
                NotificationStore.listSQL(
                    recipient: viewer, unreadOnly: false, page: PageRequest(limit: 20, cursor: cursor))
            ),
            (
                "unread notifications",
                NotificationStore.listSQL(recipient: viewer, unreadOnly: true, page: PageRequest(limit: 20))
            ),
            ("stream replay", EventFeed.entriesSQL(after: 100, through: 5_100, recipient: viewer)),
            ("stream hub read", EventFeed.entriesSQL(after: 100, through: 600)),
            (
                "report queue (admin)",
                ModerationStore.queueSQL(
                    state: .open, page: PageRequest(limit: 20, cursor: cursor), viewer: viewer, scope: .instance)
            ),
            (
                "report queue (a space's moderator)",
                ModerationStore.queueSQL(
                    state: .open, page: PageRequest(limit: 20, cursor: cursor), viewer: viewer, scope: .spaces)
            ),
            ("audit log", AuditLog.listSQL(page: PageRequest(limit: 20, cursor: cursor))),
        ] + personalLists

    /// A person's lists as Mastodon pages them (`PersonalListStore`), older and newer than a key.
    static var personalLists: [(String, SQL)] {
        let lists: [(String, PersonalListStore.List)] = [
            ("followers", .followers(3)), ("following", .following(3)), ("follow requests", .followRequests(viewer)),
            ("blocks", .blocks(viewer)), ("mutes", .mutes(viewer)), ("favourites", .likes(viewer)),
            ("bookmarks", .saves(collection: 4)),
        ]
        return lists.flatMap { name, list in
            [
                (
                    "Mastodon's \(name)",
                    PersonalListStore.rowsSQL(list, window: .init(limit: 40, before: cursor), viewer: viewer)
                ),
                (
                    "Mastodon's \(name), newer",
                    PersonalListStore.rowsSQL(list, window: .init(limit: 40, after: cursor), viewer: viewer)
                ),
            ]
        }
    }

    @Test func hotQueriesUseIndexes() async throws {
        try await withDatabase { db, _ in
            let dialect = db.dialect
            let words = SearchText("linear alg")!
            let search = SearchStore.PostQuery(text: words, page: PageRequest(limit: 20))
            let dialectQueries: [(String, SQL)] = [
                ("post search", SearchStore.windowSQL(words, search, dialect: dialect)),
                (
                    "history by last view",
                    HistoryStore.historySQL(
                        of: Self.viewer, .init(page: PageRequest(limit: 20, cursor: Self.cursor)), dialect: dialect)
                ),
                (
                    "history by posting time",
                    HistoryStore.historySQL(
                        of: Self.viewer, .init(sort: .postedAt, page: PageRequest(limit: 20)), dialect: dialect)
                ),
                (
                    "history by views, searched",
                    HistoryStore.historySQL(
                        of: Self.viewer, .init(sort: .views, text: SearchText("garden"), page: PageRequest(limit: 20)),
                        dialect: dialect)
                ),
                (
                    "account search",
                    SearchStore.usersSQL(
                        SearchText("ana")!.asPrefixes, page: PageRequest(limit: 20), viewer: Self.viewer,
                        dialect: dialect)
                ),
                (
                    "saved items search",
                    SearchStore.savedSQL(
                        SearchText("soup")!, owner: Self.viewer, page: PageRequest(limit: 20, cursor: Self.cursor))
                ),
                (
                    "posts near a place",
                    SearchStore.nearbySQL(
                        .init(
                            near: .init(latitude: 38.7, longitude: -9.1, radiusKm: 10),
                            page: PageRequest(limit: 20, cursor: Cursor(time: 0, id: 2, score: 1.5))),
                        viewer: Self.viewer, dialect: dialect)
                ),
                (
                    "posts near a place, with words",
                    SearchStore.windowSQL(
                        SearchText("pastries")!,
                        .init(near: .init(latitude: 38.7, longitude: -9.1, radiusKm: 10), page: PageRequest(limit: 20)),
                        dialect: dialect)
                ),
                (
                    "post search in a space, by kind",
                    SearchStore.windowSQL(
                        SearchText("vector")!,
                        .init(field: .title, space: 3, kind: .text, page: PageRequest(limit: 20)), dialect: dialect)
                ),
            ]
            for (name, query) in Self.queries + dialectQueries {
                let plan = try await Self.explain(query, on: db, without: "enable_seqscan")
                let fullScans = plan.filter { Self.isFullScan($0, kind: db.kind) }
                #expect(fullScans.isEmpty, "\(name) scans a whole table:\n\(plan.joined(separator: "\n"))")
            }
        }
    }

    /// What a query may walk whole in SQLite: a FROM subquery's rows, each bounded by a LIMIT of
    /// the page (`h`, `k`, `r`, `q`, `t`, `x`, and the home feed's `by_source`), or by a window
    /// of the event log (`i`, the recipients of its events), and a constant row. Any other `SCAN` names a table (or a table's alias, whatever it is),
    /// so a new alias cannot slip past the check.
    static let smallSources: Set<String> = [
        "h", "k", "r", "q", "t", "x", "i", "by_source", "CONSTANT",
        // A merged home feed's sources, each a page long.
        "merged",
        // The suggestions' candidates (branches each cut by a LIMIT from an index walk) and their sums.
        "candidates", "scored",
    ]

    /// SQLite: `SCAN t` of a table without an index (a `SCAN t USING INDEX` walk in index order
    /// reads only the rows the page needs; a virtual table's scan with constraints after its
    /// index number is its own index at work: FTS5 `MATCH`, R*Tree bounds). PostgreSQL: any
    /// `Seq Scan`.
    static func isFullScan(_ line: String, kind: DatabaseKind) -> Bool {
        switch kind {
        case .sqlite:
            guard line.hasPrefix("SCAN "), !smallSources.contains(String(line.split(separator: " ")[1])),
                !line.hasPrefix("SCAN (subquery")
            else { return false }
            if let index = line.range(of: "VIRTUAL TABLE INDEX ") {
                return line[index.upperBound...].split(separator: ":").count < 2
            }
            return !line.contains("USING INDEX") && !line.contains("USING COVERING INDEX")
                && !line.contains("USING INTEGER PRIMARY KEY")
        case .postgres: return line.contains("Seq Scan")
        }
    }

    /// Reads that continue from a position in the event log must seek to it: a walk in index
    /// order from the start would read the whole log on every wake-up of the hub. Each of the
    /// log's tables is sought (SQLite `SEARCH`, PostgreSQL an index or a primary-key range),
    /// none walked whole.
    @Test func logReadsSeekToTheirPosition() async throws {
        try await withDatabase { db, _ in
            for (name, query) in [
                ("stream hub read", EventFeed.entriesSQL(after: 100, through: 600)),
                ("stream replay", EventFeed.entriesSQL(after: 100, through: 5_100, recipient: Self.viewer)),
            ] {
                let plan = try await Self.explain(query, on: db, without: "enable_seqscan")
                let text = plan.joined(separator: "\n")
                if db.kind == .sqlite {
                    for table in ["event_inbox", "pc"] {
                        #expect(
                            plan.contains { $0.hasPrefix("SEARCH \(table) ") }
                                && !plan.contains { $0.hasPrefix("SCAN \(table) ") }, "\(name), \(table):\n\(text)")
                    }
                } else {
                    #expect(
                        text.contains("event_inbox") && text.contains("events") && !text.contains("Seq Scan"),
                        "\(name):\n\(text)")
                }
            }
        }
    }

    /// A home page walks its timeline in order and stops after the page: it sorts nothing (before
    /// timelines it read every post of every person followed and sorted them all to keep 20).
    @Test func aHomePageReadsOnlyItsPage() async throws {
        try await withDatabase { db, _ in
            for cursor in [nil, Self.cursor] {
                let query = PostStore.feedSQL(
                    .init(source: .home(Self.viewer), page: PageRequest(limit: 20, cursor: cursor)), viewer: Self.viewer
                )
                let plan = try await Self.explain(query, on: db, without: "enable_sort")
                let text = plan.joined(separator: "\n")
                if db.kind == .sqlite {
                    #expect(plan.contains { $0.hasPrefix("SEARCH he ") } && !text.contains("TEMP B-TREE"), "\(text)")
                } else {
                    #expect(text.contains("home_entries") && !text.contains("Sort"), "\(text)")
                }
            }
        }
    }

    /// The plan of `query`; on PostgreSQL with the planner's `setting` (e.g. `enable_seqscan`) off,
    /// so that on the tests' small tables it shows whether an index can serve the query.
    static func explain(_ query: SQL, on db: Database, without setting: String) async throws -> [String] {
        try await db.read { sql in
            if db.kind == .postgres { try await sql.exec("SET \(unsafeRaw: setting) = off") }
            let plan = try await db.dialect.explain(query, on: sql)
            if db.kind == .postgres { try await sql.exec("RESET \(unsafeRaw: setting)") }
            return plan
        }
    }

    @Test func theCheckRecognisesAFullScan() async throws {
        try await withDatabase { db, _ in
            let plan = try await db.read { sql in
                try await db.dialect.explain("SELECT * FROM posts WHERE body = \(bind: "x")", on: sql)
            }
            if db.kind == .sqlite {
                #expect(plan.contains { Self.isFullScan($0, kind: .sqlite) }, "\(plan)")
                // Under any alias, and of a virtual table read without a constraint.
                #expect(
                    Self.isFullScan("SCAN zz", kind: .sqlite)
                        && Self.isFullScan("SCAN posts_search VIRTUAL TABLE INDEX 0:", kind: .sqlite))
                #expect(!Self.isFullScan("SCAN posts_search VIRTUAL TABLE INDEX 0:M4", kind: .sqlite))
            } else {
                #expect(plan.contains { Self.isFullScan($0, kind: .postgres) }, "\(plan)")
            }
        }
    }
}
