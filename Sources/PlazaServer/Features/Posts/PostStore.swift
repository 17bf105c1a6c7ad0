import PlazaAPI

/// Posts and the feeds made of them. Every read applies the viewer's blocks, so no route can
/// show a post to someone who may not see it.
package struct PostStore: Sendable {
    let db: Database
    let ids: IDGenerator
    let events: EventLog
    /// Cleared after every write that can change what a search finds.
    let searchWindows: SearchWindowCache
    /// New link previews one person may ask for a day (0: no cap).
    var linkPreviewsPerDay = Quotas().linkPreviewsPerDay
    /// Wakes `HomeFanOutService` when a post waits to be entered in home timelines.
    var homeQueue = WorkSignal()

    /// The public posts the most people liked or boosted lately (`Trends`), as `viewer` may see them.
    package func trending(limit: Int, viewer: Int64?) async throws -> [Post] {
        let ids = try await Trends(db: db).postIDs(limit: limit)
        let found = try await posts(ids: ids, viewer: viewer)
        return ids.compactMap { found[$0] }.filter { $0.audience == .public }
    }

    /// The posts' edit histories.
    package var history: PostHistory { PostHistory(db: db) }

    /// A validated new post.
    package struct Draft: Sendable {
        var kind: PostKind
        var title: String?
        var body: String?
        var linkURL: String?
        var location: Location?
        var activity: Activity?
        var price: String?
        /// Uploads to show, in order; claimed by the post.
        var mediaIDs: [Int64] = []
        /// Slugs (lower-cased) of the spaces the post goes in.
        var spaces: [String] = []
        var audience: PostAudience = .public
        var contentWarning: String?
        var sensitive = false
        var poll: PollRules.Draft?
    }

    /// The tags a post with this title and text is indexed under (`PostRules` refuses more).
    static func tags(title: String?, body: String?) -> [Hashtag] {
        Array(Hashtag.tags(in: title, body).prefix(Hashtag.maxPerPost))
    }

    /// Stores a new post and returns it as its author sees it, without reading it back. `time`
    /// is when it was written: now, but for the demo world's history.
    func create(author: Int64, _ draft: Draft, at time: Timestamp = .now) async throws -> Post {
        let id = ids.next(at: time)
        let now = time.milliseconds
        let mentioned = Mentions.usernames(in: draft.title, draft.body)
        let tags = Self.tags(title: draft.title, body: draft.body)
        let ids = ids
        let (authorRow, media, spaces, preview, audience) = try await events.write { db in
            // The author's row (posts_count) and the mentioned people's (unread counts), in one order.
            let mentionedIDs = try await NotificationStore.users(named: mentioned, on: db)
            try await PeopleStore.lockInOrder([author] + mentionedIDs, on: db)
            let placement = try await SpaceStore.resolveForPosting(draft.spaces, by: author, on: db)
            let spaces = placement.spaces
            let audience = try placement.audience(draft.audience)
            let media = try await MediaStore.claim(draft.mediaIDs, owner: author, post: id, on: db)
            var preview: LinkPreviewStore.Preview?
            if let url = draft.linkURL {
                preview = try await LinkPreviewStore.request(url, by: author, now: now, cap: linkPreviewsPerDay, on: db)
            }
            let row = try await db.first(
                Self.insertSQL(
                    id: id, author: author, draft, at: now, media: media, audience: audience, preview: preview))
            if let poll = draft.poll { try await PollStore.create(post: id, poll, now: now, on: db) }
            try await HomeTimeline.queue(post: id, author: author, createdAt: now, on: db)
            try await TagStore.index(post: id, createdAt: now, tags: tags, on: db)
            if audience == .public {
                try await TagStore.fanOut(post: id, createdAt: now, tags: tags, on: db)
                try await Trends.record(.tag, tags.map(\.key), by: author, at: now, on: db)
                if let url = draft.linkURL { try await Trends.record(.link, [url], by: author, at: now, on: db) }
            }
            if !spaces.isEmpty {
                try await SpaceStore.place(post: id, createdAt: now, in: spaces, replacing: false, on: db)
            }
            // A post with a video still processing is its author's alone until the video is ready.
            if !Self.isProcessing(media) {
                try await Self.announce(post: id, author: author, mentioned: mentionedIDs, ids: ids, on: db)
            }
            return (row, media, spaces, preview, audience)
        }
        searchWindows.clear()
        homeQueue.wake()
        guard let authorRow else { throw PlazaError.unauthorized }
        return Post(
            id: String(id), kind: draft.kind, author: try UserSummary(authorIn: authorRow, id: author),
            title: draft.title, body: draft.body,
            spaces: spaces, media: media.map(\.media), link: draft.linkURL.map { Self.link($0, preview) },
            location: draft.location,
            activity: draft.activity, price: draft.price, createdAt: Timestamp(milliseconds: now), editedAt: nil,
            counts: Post.Counts(likes: 0, comments: 0), viewer: Post.Viewer(liked: false, saved: false),
            audience: audience, tags: tags.map(\.key), contentWarning: draft.contentWarning, sensitive: draft.sensitive,
            poll: draft.poll.map { poll in
                PollStore.Stored(
                    options: poll.options, tallies: poll.options.map { _ in 0 }, multiple: poll.multiple,
                    expiresAt: now + Int64(poll.expiresInSeconds) * 1000, voters: 0
                ).poll(id: id, choices: [], resultsShown: true, now: now)
            })
    }

    /// The statement that stores post `id`; `preview`: the link's preview when one is known (a
    /// pending one has no fields yet).
    private static func insertSQL(
        id: Int64, author: Int64, _ draft: Draft, at now: Int64, media: [MediaRecord], audience: PostAudience,
        preview: LinkPreviewStore.Preview?
    ) -> SQL {
        """
        INSERT INTO posts (id, author_id, kind, title, body, link_url, link_title, link_description, link_image_url, link_site_name,
            link_fetched_at, latitude, longitude, location_name,
            activity_type, activity_emoji, activity_color, activity_progress, activity_completed_at, price, media, created_at,
            audience, processing, content_warning, sensitive)
        VALUES (\(bind: id), \(bind: author), \(bind: draft.kind.rawValue), \(bind: draft.title), \(bind: draft.body),
            \(bind: draft.linkURL), \(bind: preview?.title), \(bind: preview?.description), \(bind: preview?.imageURL),
            \(bind: preview?.siteName), \(bind: preview?.fetchedAt), \(bind: draft.location?.latitude), \(bind: draft.location?.longitude),
            \(bind: draft.location?.name), \(bind: draft.activity?.type), \(bind: draft.activity?.emoji),
            \(bind: draft.activity?.color), \(bind: draft.activity?.progress),
            \(bind: draft.activity?.completedAt?.milliseconds), \(bind: draft.price), \(bind: MediaRecord.text(media)), \(bind: now),
            \(bind: audience.rawValue), \(bind: isProcessing(media)), \(bind: draft.contentWarning),
            \(bind: draft.sensitive))
        RETURNING \(authorColumns)
        """
    }

    /// Whether a post showing `media` waits for a video: it is then `processing`.
    static func isProcessing(_ media: [MediaRecord]) -> Bool { media.contains { $0.state != .ready } }

    /// What makes a new post known: its mentions' notifications and the event that shows it in
    /// streams. At its creation, or, for a post with videos, when the last of them is ready
    /// (`VideoStore.finish`). `mentioned` are locked already, in order with the author.
    static func announce(post id: Int64, author: Int64, mentioned: [Int64], ids: IDGenerator, on db: Connection)
        async throws
    {
        try await NotificationStore.notify(
            mentioned.map { .mention(of: $0, by: author, post: id, comment: nil) }, ids: ids, on: db)
        try await EventLog.append(.init(kind: .postCreated, actor: author, post: id), to: .foundWhenRead, on: db)
    }

    private static func link(_ url: String, _ preview: LinkPreviewStore.Preview?) -> LinkPreview {
        LinkPreview(
            url: url, title: preview?.title, description: preview?.description, imageURL: preview?.imageURL,
            siteName: preview?.siteName,
            fetchedAt: preview?.fetchedAt.map(Timestamp.init(milliseconds:)))
    }

    /// One post as `viewer` may see it, or 404.
    func post(id: Int64, viewer: Int64?) async throws -> Post {
        guard let record = try await record(id: id, viewer: viewer) else { throw PlazaError.notFound("Post") }
        return record.post
    }

    /// One post on its own page, as `viewer` may see it, or 404: it names the viewer's keyword
    /// filters for threads that match it in `filtered` (see `KeywordFilters.marked`).
    package func shown(id: Int64, viewer: Int64?) async throws -> Post {
        let (row, filters) = try await db.read { db in
            let row = try await db.first(
                """
                SELECT \(PostRecord.columns(viewer: viewer)) FROM posts p JOIN users u ON u.id = p.author_id
                WHERE p.id = \(bind: id) AND \(Visibility.post("p", readableBy: viewer))
                """)
            return (row, try await KeywordFilterStore.matcher(for: viewer, in: .thread, on: db))
        }
        guard let row else { throw PlazaError.notFound("Post") }
        return filters.marked(try PostRecord(row: row).post)
    }

    package func record(id: Int64, viewer: Int64?) async throws -> PostRecord? {
        let row = try await db.read { db in
            try await db.first(
                """
                SELECT \(PostRecord.columns(viewer: viewer)) FROM posts p JOIN users u ON u.id = p.author_id
                WHERE p.id = \(bind: id) AND \(Visibility.post("p", readableBy: viewer))
                """)
        }
        return try row.map(PostRecord.init(row:))
    }

    /// The posts among `ids` that `viewer` may see, by id, in one query.
    package func posts(ids: [Int64], viewer: Int64?) async throws -> [Int64: Post] {
        try await posts(ids: ids, viewer: viewer, where: Visibility.post("p", readableBy: viewer))
    }

    /// The posts among `ids` with no viewer's relation and no visibility rule: for the event
    /// feed, whose query applied the rule for each recipient.
    func postsForEvents(ids: [Int64]) async throws -> [Int64: Post] {
        try await posts(ids: ids, viewer: nil, where: "TRUE")
    }

    private func posts(ids: [Int64], viewer: Int64?, where condition: SQL) async throws -> [Int64: Post] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await db.read { db in
            try await db.rows(
                """
                SELECT \(PostRecord.columns(viewer: viewer)) FROM posts p JOIN users u ON u.id = p.author_id
                WHERE p.id IN (\(binds: ids)) AND \(condition)
                """)
        }
        return Dictionary(
            try rows.map {
                let record = try PostRecord(row: $0)
                return (record.id, record.post)
            }, uniquingKeysWith: { a, _ in a })
    }

    /// The author's changes; `activity` is the whole new activity value (already merged).
    package struct Changes: Sendable {
        var title: FieldUpdate<String> = .keep
        var body: FieldUpdate<String> = .keep
        var location: FieldUpdate<Location> = .keep
        var price: FieldUpdate<String> = .keep
        var activity: Activity?
        /// Slugs (lower-cased) of the spaces the post is in from now on.
        var spaces: [String]?
        var audience: PostAudience?
        var contentWarning: FieldUpdate<String> = .keep
        var sensitive: Bool?
        var poll: FieldUpdate<PollRules.Draft> = .keep
    }

    /// The columns an edit sets, `edited_at` first.
    static func assignments(_ changes: Changes) -> SQL {
        var sets: [SQL] = ["edited_at = \(bind: Timestamp.now.milliseconds)"]
        func set<V: SQLBindable>(_ column: String, _ update: FieldUpdate<V>) {
            switch update {
            case .keep: break
            case .clear: sets.append("\(unsafeRaw: column) = NULL")
            case .set(let value): sets.append("\(unsafeRaw: column) = \(bind: value)")
            }
        }
        set("title", changes.title)
        set("body", changes.body)
        set("price", changes.price)
        set("content_warning", changes.contentWarning)
        if let sensitive = changes.sensitive { sets.append("sensitive = \(bind: sensitive)") }
        switch changes.location {
        case .keep: break
        case .clear: sets.append("latitude = NULL, longitude = NULL, location_name = NULL")
        case .set(let l):
            sets.append(
                "latitude = \(bind: l.latitude), longitude = \(bind: l.longitude), location_name = \(bind: l.name)")
        }
        if let a = changes.activity {
            sets.append(
                """
                activity_type = \(bind: a.type), activity_emoji = \(bind: a.emoji), activity_color = \(bind: a.color), \
                activity_progress = \(bind: a.progress), activity_completed_at = \(bind: a.completedAt?.milliseconds)
                """)
        }
        return sets.joined(separator: ", ")
    }

    func update(_ record: PostRecord, _ changes: Changes) async throws {
        let id = record.id
        let assignments = Self.assignments(changes)
        let before = Set(Mentions.usernames(in: record.post.title, record.post.body))
        let mentioned = Mentions.usernames(
            in: changes.title.applied(to: record.post.title), changes.body.applied(to: record.post.body)
        )
        .filter { !before.contains($0) }
        // The tags again when the text changed (an edit does not bring the post to a new tag's followers).
        let tags: [Hashtag]? =
            changes.title.isKeep && changes.body.isKeep
            ? nil
            : Self.tags(
                title: changes.title.applied(to: record.post.title), body: changes.body.applied(to: record.post.body))
        let ids = ids
        let current = record.post
        try await events.write { db in
            // The post, then its poll, before any person an edit notifies (the order votes keep).
            if let lock = db.dialect.rowLock(.noKeyUpdate) {
                try await db.exec("SELECT id FROM posts WHERE id = \(bind: id)\(lock)")
            }
            let poll = changes.poll.isKeep ? nil : try await PollStore.locked(post: id, on: db)
            // The spaces it will be in decide the audience it may have.
            let slugs = changes.spaces ?? current.spaces.map { $0.slug.lowercased() }
            let placement = try await SpaceStore.resolveForPosting(
                slugs, by: record.authorID, keeping: Set(current.spaces.map(\.id)), on: db)
            let audience = try placement.audience(changes.audience ?? current.audience)
            if Self.changesContent(changes, of: current) {
                try await PostHistory.keepVersion(of: id, on: db)
                try await PostHistory.notifyReaders(of: id, author: record.authorID, ids: ids, on: db)
            }
            try await PollStore.replace(
                post: id, current: poll, with: changes.poll, now: Timestamp.now.milliseconds, on: db)
            try await db.exec(
                "UPDATE posts SET \(assignments), audience = \(bind: audience.rawValue) WHERE id = \(bind: id)")
            if changes.spaces != nil {
                try await SpaceStore.place(
                    post: id, createdAt: current.createdAt.milliseconds, in: placement.spaces, replacing: true, on: db)
            }
            if let tags {
                try await TagStore.reindex(post: id, createdAt: current.createdAt.milliseconds, tags: tags, on: db)
            }
            try await Self.notifyMentions(mentioned, by: record.authorID, post: id, ids: ids, on: db)
            let readers = EventLog.Audience.postReaders(post: id, author: record.authorID)
            if audience != current.audience || changes.spaces != nil {
                // Those who can no longer read it drop it: its readers before and after the change
                // (the members of a space it left too); the event feed sends this only to those
                // who may not read it now.
                let spaces = Set((current.spaces + placement.spaces).compactMap { Int64($0.id) })
                try await EventLog.append(
                    .init(kind: .postDeleted, actor: record.authorID, post: id),
                    to: .readers(author: record.authorID, spaces: spaces.sorted()), on: db)
            }
            try await EventLog.append(.init(kind: .postUpdated, actor: record.authorID, post: id), to: readers, on: db)
        }
        searchWindows.clear()
    }

    /// Whether the changes rewrite what the post says or shows (its history keeps the version
    /// before), not only its progress, place, price, spaces or audience.
    static func changesContent(_ changes: Changes, of post: Post) -> Bool {
        changes.title.applied(to: post.title) != post.title || changes.body.applied(to: post.body) != post.body
            || changes.contentWarning.applied(to: post.contentWarning) != post.contentWarning
            || (changes.sensitive.map { $0 != post.sensitive } ?? false) || changesPoll(changes.poll, of: post)
    }

    /// Whether an edit asks another poll, or takes the poll away (not when it only moves its end).
    private static func changesPoll(_ update: FieldUpdate<PollRules.Draft>, of post: Post) -> Bool {
        switch update {
        case .keep: false
        case .clear: post.poll != nil
        case .set(let draft): post.poll.map { !draft.asks($0.options.map(\.title), multiple: $0.multiple) } ?? true
        }
    }

    /// Deletes the author's post with its comments, likes, saved items (a trigger) and media
    /// rows; returns the ids of the media whose files should go too.
    func delete(id: Int64, author: Int64) async throws -> [Int64] {
        let media = try await events.write { db in try await Self.delete(id: id, author: author, on: db) }
        searchWindows.clear()
        return media
    }

    /// Deletes the author's post in the caller's `EventLog.write` transaction and returns its
    /// media (whose files the caller deletes after the commit); nothing when it is gone. Locks
    /// the post, then the people whose counters change together with `alsoLocking` (people the
    /// caller notifies next), in one ordered step.
    static func delete(id: Int64, author: Int64, alsoLocking others: [Int64] = [], on db: Connection) async throws
        -> [Int64]
    {
        guard try await db.first(lockOwn(post: id, author: author, on: db)) != nil else { return [] }
        // The cascade changes the author's counters and the unread counts of those notified about it.
        let notified = try await db.rows(
            "SELECT DISTINCT recipient_id FROM notifications WHERE post_id = \(bind: id)")
        try await PeopleStore.lockInOrder(
            [author] + others + notified.map { try $0.decode(column: "recipient_id", as: Int64.self) }, on: db)
        // Its readers are found through its spaces, which go with it.
        try await EventLog.append(
            .init(kind: .postDeleted, actor: author, post: id), to: .postReaders(post: id, author: author), on: db)
        try await HomeTimeline.remove(post: id, author: author, on: db)
        try await BoostStore.removeFromTimelines(post: id, on: db)
        try await db.exec("DELETE FROM posts WHERE id = \(bind: id)")
        return try await MediaStore.deleteRows(ofPost: id, on: db)
    }

    /// The author's post, locked for deleting on PostgreSQL before any person's row (the lock order).
    static func lockOwn(post: Int64, author: Int64, on db: Connection) -> SQL {
        "SELECT id FROM posts WHERE id = \(bind: post) AND author_id = \(bind: author)\(db.dialect.rowLock(.update) ?? "")"
    }

    /// Notifies the people named in `usernames` that `author` mentioned them in a post.
    static func notifyMentions(
        _ usernames: [String], by author: Int64, post: Int64, ids: IDGenerator, on db: Connection
    ) async throws {
        let users = try await NotificationStore.users(named: usernames, on: db)
        try await NotificationStore.notify(
            users.map { .mention(of: $0, by: author, post: post, comment: nil) }, ids: ids, on: db)
    }

    /// Sends post `post` to the people named `usernames`, as `sender`. Each must follow the
    /// sender with no block between them (what the sender can see for themselves); otherwise
    /// nobody is sent anything and their names come back. Of those, the ones who may not read the
    /// post are passed over without a word, so the answer says nothing of their blocks or spaces.
    /// Nil when the sender may not read the post.
    func recommend(post: Int64, by sender: Int64, to usernames: [String]) async throws -> [String]? {
        let keys = Array(Set(usernames.map { $0.lowercased() }))
        let ids = ids
        return try await events.write { db -> [String]? in
            guard
                try await db.first(
                    "SELECT 1 AS ok WHERE \(Visibility.post(id: post, readableBy: sender, on: db.dialect))") != nil
            else { return nil }
            let followers = try await db.rows(
                """
                SELECT u.id, u.username_key,
                    EXISTS (SELECT 1 FROM posts p WHERE p.id = \(bind: post) AND \(Visibility.post("p", readableBy: "u.id"))) AS reads
                FROM users u
                WHERE u.username_key IN (\(binds: keys)) AND u.id <> \(bind: sender)
                AND EXISTS (SELECT 1 FROM follows f WHERE f.follower_id = u.id AND f.followee_id = \(bind: sender))
                AND \(Visibility.person("u.id", seenBy: sender))
                """)
            let reached = Set(try followers.map { try $0.decode(column: "username_key", as: String.self) })
            let refused = keys.filter { !reached.contains($0) }.sorted()
            guard refused.isEmpty else { return refused }
            let readers = try followers.filter { try $0.decode(column: "reads", as: Bool.self) }
            try await NotificationStore.notify(
                try readers.map {
                    .recommendation(of: post, to: try $0.decode(column: "id", as: Int64.self), by: sender)
                }, ids: ids, on: db)
            return []
        }
    }

    /// The author's summary columns of a row that has `author_id`, for a RETURNING clause.
    static let authorColumns = SQL(
        UserSummary.Columns.all.map {
            "(SELECT \($0.unqualified) FROM users WHERE users.id = author_id) AS \($0.name)"
        }.joined(separator: ", "))

    // MARK: feeds

    package enum ActivityProgressFilter: String, Sendable, CaseIterable {
        case done, ongoing
    }

    /// The activity types `author` used, in order (at most 30; `posts_author_activity_type`).
    func activityTypes(of author: Int64) async throws -> [String] {
        try await db.read { db in
            try await db.rows(
                """
                SELECT DISTINCT activity_type FROM posts
                WHERE author_id = \(bind: author) AND kind = 'activity' AND activity_type IS NOT NULL
                ORDER BY activity_type LIMIT 30
                """)
        }.map { try $0.decode(column: "activity_type", as: String.self) }
    }

    package struct FeedQuery: Sendable {
        package enum Source: Sendable {
            case global
            /// Posts by the user and the people they follow, and posts in the spaces they joined.
            case home(Int64)
            case author(Int64)
            case space(Int64)
            /// Public posts with the tag of this key.
            case tag(String)
            /// The owner's home timeline less what did not come from an account of their list `id`
            /// (its posts, its boosts).
            case list(owner: Int64, id: Int64)

            /// Where a person's keyword filters see this feed.
            var filterContext: FilterContext {
                switch self {
                case .home, .list: .home
                case .global, .space, .tag: .public
                case .author: .profile
                }
            }
        }
        var source: Source
        var kind: PostKind?
        /// Activities of this type alone (`activity=`, as written).
        var activityType: String?
        /// Activities done (100%) or still going (`progress=done|ongoing`).
        var progress: ActivityProgressFilter?
        package var since: Timestamp?
        var until: Timestamp?
        var page: PageRequest

        package init(
            source: Source, kind: PostKind? = nil, activityType: String? = nil, progress: ActivityProgressFilter? = nil,
            since: Timestamp? = nil, until: Timestamp? = nil, page: PageRequest
        ) {
            self.source = source
            self.kind = kind
            self.activityType = activityType
            self.progress = progress
            self.since = since
            self.until = until
            self.page = page
        }
    }

    /// One page of a feed, newest first: a single keyset query (after a look-up of what else
    /// than the timeline a person's home feed merges).
    /// The viewer's keyword filters for the feed's context are applied (with the same read):
    /// hidden posts leave the page, warned ones carry `filtered`; the cursor is the unfiltered
    /// page's.
    package func feed(_ query: FeedQuery, viewer: Int64?) async throws -> Page<Post> {
        let (rows, filters) = try await db.read { db in
            var sources = HomeTimeline.Sources()
            switch query.source {
            case .home(let user): sources = try await HomeTimeline.sources(of: user, on: db)
            case .list(let owner, let list): sources = try await HomeTimeline.sources(of: owner, list: list, on: db)
            case .global, .author, .space, .tag: break
            }
            let rows = try await db.rows(Self.feedSQL(query, viewer: viewer, home: sources))
            return (rows, try await KeywordFilterStore.matcher(for: viewer, in: query.source.filterContext, on: db))
        }
        let (pageRecords, next) = query.page.split(try rows.map(PostRecord.init(row:))) { $0.cursor }
        let boosters = try await BoostStore.boosters(of: Array(pageRecords), on: db)
        let posts = pageRecords.map { record in
            var post = record.post
            if let booster = record.boostedBy, let boost = boosters[BoostStore.Key(user: booster, post: record.id)] {
                post.boost = boost
            }
            return post
        }
        return filters.apply(to: Page(items: posts, nextCursor: next))
    }

    static func feedSQL(_ query: FeedQuery, viewer: Int64?, home: HomeTimeline.Sources = .init()) -> SQL {
        let limit = query.page.fetchLimit
        // A mute hides its person from my feeds, not from their own profile.
        let hidesMuted: Bool = if case .author = query.source { false } else { true }
        let postFilters = filters(query, viewer: viewer, time: "p.created_at", id: "p.id", hidesMuted: hidesMuted)
        let spaceFilters = filters(
            query, viewer: viewer, time: "ps.created_at", id: "ps.post_id", hidesMuted: hidesMuted)
        let entryFilters = filters(
            query, viewer: viewer, time: "he.created_at", id: "he.post_id", hidesMuted: hidesMuted)
        let tagFilters = filters(query, viewer: viewer, time: "pt.created_at", id: "pt.post_id", hidesMuted: hidesMuted)
        var pinnedIn: Int64?
        if case .space(let id) = query.source { pinnedIn = id }
        var sql: SQL = "SELECT \(PostRecord.columns(viewer: viewer, pinnedIn: pinnedIn)) FROM "
        var order: SQL = "p.created_at DESC, p.id DESC"
        switch query.source {
        case .global: sql += "posts p JOIN users u ON u.id = p.author_id WHERE TRUE\(postFilters)"
        case .author(let id):
            sql += "posts p JOIN users u ON u.id = p.author_id WHERE p.author_id = \(bind: id)\(postFilters)"
        case .space(let id):
            sql +=
                "post_spaces ps JOIN posts p ON p.id = ps.post_id JOIN users u ON u.id = p.author_id WHERE ps.space_id = \(bind: id)\(spaceFilters)"
            order = "ps.created_at DESC, ps.post_id DESC"
        case .tag(let key):
            sql += """
                post_tags pt JOIN posts p ON p.id = pt.post_id JOIN users u ON u.id = p.author_id \
                WHERE pt.tag = \(bind: key) AND p.audience = 'public'\(tagFilters)
                """
            order = "pt.created_at DESC, pt.post_id DESC"
        case .home(let id), .list(owner: let id, id: _):
            let filters = HomeFilters(
                entries: entryFilters, posts: postFilters, spaces: spaceFilters,
                boosts: filters(query, viewer: viewer, time: "bp.created_at", id: "bp.post_id", hidesMuted: hidesMuted))
            return homeSQL(of: id, query, viewer: viewer, home: home, filters: filters)
        }
        sql += " ORDER BY \(order) LIMIT \(bind: limit)"
        return sql
    }

    /// The conditions `filters` makes for each source of a home feed, keyed on its sort columns.
    private struct HomeFilters {
        var entries: SQL
        var posts: SQL
        var spaces: SQL
        /// Of the boosts waiting in `boost_pending`.
        var boosts: SQL
    }

    /// A home feed (or a list's, which is its owner's home timeline less what did not come from
    /// the list's accounts): the timeline's entries, merged with the posts and boosts waiting to
    /// be entered, the pulled accounts' posts and the joined spaces' when there are any. An
    /// exclusive list's accounts are left out of the home feed, by an indexed look-up that is
    /// only made when the person has any.
    private static func homeSQL(
        of id: Int64, _ query: FeedQuery, viewer: Int64?, home: HomeTimeline.Sources, filters: HomeFilters
    ) -> SQL {
        let limit = query.page.fetchLimit
        var home = home
        if case .list(_, let list) = query.source { home.list = list }
        let columns = PostRecord.columns(viewer: viewer)
        let timeline: SQL = "home_entries he JOIN posts p ON p.id = he.post_id"
        var mine: SQL = "he.user_id = \(bind: id)\(filters.entries)\(boostFilter(viewer: viewer))"
        var filters = filters
        if let list = home.list {
            mine += " AND \(HomeTimeline.inList(list, account: "COALESCE(he.boosted_by, p.author_id)"))"
        } else if home.exclusive {
            mine += " AND NOT \(HomeTimeline.inExclusiveList(of: id, account: "COALESCE(he.boosted_by, p.author_id)"))"
            filters.spaces += " AND NOT \(HomeTimeline.inExclusiveList(of: id, account: "p.author_id"))"
        }
        if home.pulled.isEmpty && home.spaces.isEmpty && !home.pending {
            return """
                SELECT \(columns), he.created_at AS feed_time, he.boosted_by AS boosted_by FROM \(timeline) \
                JOIN users u ON u.id = p.author_id WHERE \(mine) ORDER BY he.created_at DESC, he.post_id DESC \
                LIMIT \(bind: limit)
                """
        }
        let branches = homeBranches(
            of: id, home: home, timeline: timeline, mine: mine, filters: filters, viewer: viewer, limit: limit)
        // One page of each source, merged by the time each came in (a boost's for a boost).
        return """
            SELECT \(columns), merged.t AS feed_time, merged.boosted_by AS boosted_by \
            FROM (\(branches.joined(separator: " UNION "))) merged JOIN posts p ON p.id = merged.id \
            JOIN users u ON u.id = p.author_id ORDER BY merged.t DESC, merged.id DESC LIMIT \(bind: limit)
            """
    }

    /// A merged home feed's sources: the newest page of the timeline, of each pulled account
    /// and of each joined space, each branch walking an index in order.
    private static func homeBranches(
        of id: Int64, home: HomeTimeline.Sources, timeline: SQL, mine: SQL,
        filters: HomeFilters, viewer: Int64?, limit: Int
    ) -> [SQL] {
        // The newest page of each source, merged by the caller: no source is read past one page.
        func branch(_ select: SQL, order: SQL) -> SQL {
            "SELECT id, t, boosted_by FROM (SELECT \(select) ORDER BY \(order) LIMIT \(bind: limit)) AS by_source"
        }
        let noBoost: SQL = "CAST(NULL AS BIGINT) AS boosted_by"
        var branches = [
            branch(
                "he.post_id AS id, he.created_at AS t, he.boosted_by AS boosted_by FROM \(timeline) WHERE \(mine)",
                order: "he.created_at DESC, he.post_id DESC")
        ]
        if home.pending {
            branches += pendingBranches(of: id, home: home, filters: filters, viewer: viewer).map {
                branch($0.select, order: $0.order)
            }
        }
        for author in home.pulled.prefix(HomeTimeline.maxPulledBranches) {
            branches.append(
                branch(
                    "p.id, p.created_at AS t, \(noBoost) FROM posts p WHERE p.author_id = \(bind: author)\(filters.posts)",
                    order: "p.created_at DESC, p.id DESC"))
        }
        if home.pulled.count > HomeTimeline.maxPulledBranches {
            // All of them (the first ones again, which the UNION drops): correct, not cheap.
            let pulled = HomeTimeline.pulledSQL(of: id, list: home.list, ordered: false)
            branches.append(
                branch(
                    "p.id, p.created_at AS t, \(noBoost) FROM posts p WHERE p.author_id IN (\(pulled))\(filters.posts)",
                    order: "p.created_at DESC, p.id DESC"))
        }
        for space in home.spaces {
            branches.append(
                branch(
                    "ps.post_id AS id, ps.created_at AS t, \(noBoost) FROM post_spaces ps JOIN posts p ON p.id = ps.post_id WHERE ps.space_id = \(bind: space)\(filters.spaces)",
                    order: "ps.created_at DESC, ps.post_id DESC"))
        }
        return branches
    }

    /// What waits to be entered in a home feed's timeline, each as `select` (`id`, `t`,
    /// `boosted_by`) and `order`: the posts in `home_pending` of the people it follows (and its
    /// own); the boosts in `boost_pending` of the people it follows that will bring their post
    /// into it; and for each boost undone there by someone it follows, the boost of the post
    /// that brings it now, if any (both by `BoostStore.reaches`, as `enterPendingBoosts` enters
    /// them; not when the post waits for this feed itself).
    private static func pendingBranches(
        of id: Int64, home: HomeTimeline.Sources, filters: HomeFilters, viewer: Int64?
    ) -> [(select: SQL, order: SQL)] {
        var posts = HomeTimeline.pendingAuthor(of: id, list: home.list, account: "hp.author_id")
        var booster: SQL = "bp.user_id IN (\(HomeTimeline.followed(by: id, list: home.list)))"
        if home.exclusive && home.list == nil {
            posts += " AND NOT \(HomeTimeline.inExclusiveList(of: id, account: "hp.author_id"))"
            booster += " AND NOT \(HomeTimeline.inExclusiveList(of: id, account: "bp.user_id"))"
        }
        let boost: SQL = """
            \(booster) AND \(BoostStore.reaches(follower: "\(bind: id)")) \
            AND NOT EXISTS (SELECT 1 FROM home_pending hw WHERE hw.post_id = bp.post_id \
            AND \(HomeTimeline.pendingAuthor(of: id, list: nil, account: "hw.author_id"))) \
            AND \(Visibility.person("bp.user_id", seenBy: viewer)) AND \(Visibility.unmuted("bp.user_id", by: viewer))\(filters.boosts)
            """
        let boosted: SQL = "bp.post_id AS id, bp.created_at AS t, bp.user_id AS boosted_by"
        let undone: SQL = "bu.user_id IN (\(HomeTimeline.followed(by: id, list: nil)))"
        let byBoost: SQL = "bp.created_at DESC, bp.post_id DESC"
        return [
            (
                "hp.post_id AS id, hp.created_at AS t, CAST(NULL AS BIGINT) AS boosted_by FROM home_pending hp JOIN posts p ON p.id = hp.post_id WHERE \(posts)\(filters.posts)",
                "hp.created_at DESC, hp.post_id DESC"
            ),
            (
                "\(boosted) FROM boost_pending bp JOIN posts p ON p.id = bp.post_id WHERE NOT bp.undo AND \(boost)",
                byBoost
            ),
            (
                """
                \(boosted) FROM boost_pending bu JOIN boosts bp ON bp.post_id = bu.post_id JOIN posts p ON p.id = bp.post_id \
                WHERE bu.undo AND \(undone) AND \(boost)
                """,
                byBoost
            ),
        ]
    }

    /// A home entry a boost made shows while the boost stands (the boost of its time: one undone
    /// and made again is another), and not when its booster is someone the viewer blocked, was
    /// blocked by or muted.
    private static func boostFilter(viewer: Int64?) -> SQL {
        """
         AND (he.boosted_by IS NULL OR (EXISTS (SELECT 1 FROM boosts bo WHERE bo.user_id = he.boosted_by AND bo.post_id = he.post_id \
        AND bo.created_at = he.created_at) \
        AND \(Visibility.person("he.boosted_by", seenBy: viewer)) AND \(Visibility.unmuted("he.boosted_by", by: viewer))))
        """
    }

    /// The conditions every feed applies to its posts `p`, keyed on the given sort columns.
    private static func filters(
        _ query: FeedQuery, viewer: Int64?, time: SQL, id: SQL, hidesMuted: Bool
    ) -> SQL {
        var sql: SQL = ""
        if let kind = query.kind { sql += " AND p.kind = \(bind: kind.rawValue)" }
        if query.activityType != nil || query.progress != nil, query.kind == nil { sql += " AND p.kind = 'activity'" }
        if let type = query.activityType { sql += " AND p.activity_type = \(bind: type)" }
        switch query.progress {
        case .done: sql += " AND p.activity_completed_at IS NOT NULL"
        case .ongoing: sql += " AND p.activity_completed_at IS NULL"
        case nil: break
        }
        if let since = query.since { sql += " AND \(time) >= \(bind: since.milliseconds)" }
        if let until = query.until { sql += " AND \(time) < \(bind: until.milliseconds)" }
        if let cursor = query.page.cursor {
            sql += " AND (\(time), \(id)) < (\(bind: cursor.time), \(bind: cursor.id))"
        }
        sql += " AND \(Visibility.post("p", readableBy: viewer))"
        if hidesMuted, viewer != nil { sql += " AND \(Visibility.unmuted("p.author_id", by: viewer))" }
        return sql
    }
}
