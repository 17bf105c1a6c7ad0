/// Audiences, closed spaces, follow requests, mutes and moderation.
///
/// - `posts.audience`: `public`, `followers` or `members` (of the post's spaces); the rule that
///   reads it lives in `Visibility.post`.
/// - `spaces.visibility`: `open`, `closed` or `private`; `space_members.role`: `owner`,
///   `moderator` or `member` (each space's owner gets `owner` here).
/// - `space_requests` (asking to join a closed space), `space_invites` (codes stored hashed,
///   with a use count and an expiry), `space_bans`.
/// - `users.locked` (follows need approval) and `follow_requests`; `mutes`.
/// - `users.suspended_at`: a suspended person cannot sign in and what they made is hidden.
/// - `reports` with `report_spaces` (the spaces of the reported content when it was reported,
///   so a space's moderators find the reports about it) and `audit_log` (who did what).
enum Migration008 {
    static let migration = Migration(
        version: 8,
        name: "audiences_moderation",
        statements: [
            "ALTER TABLE posts ADD COLUMN audience TEXT NOT NULL DEFAULT 'public'",
            "ALTER TABLE spaces ADD COLUMN visibility TEXT NOT NULL DEFAULT 'open'",
            "ALTER TABLE space_members ADD COLUMN role TEXT NOT NULL DEFAULT 'member'",
            """
            UPDATE space_members SET role = 'owner'
            WHERE EXISTS (SELECT 1 FROM spaces s WHERE s.id = space_members.space_id AND s.owner_id = space_members.user_id)
            """,
            // A space's member list, by joining time.
            "CREATE INDEX space_members_list ON space_members (space_id, created_at, user_id)",
            "ALTER TABLE users ADD COLUMN locked BOOLEAN NOT NULL DEFAULT FALSE",
            "ALTER TABLE users ADD COLUMN suspended_at BIGINT",
            // A moderator's queue of join requests, oldest first.
            """
            CREATE TABLE space_requests (
                space_id BIGINT NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
                user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (space_id, user_id)
            ) {without_rowid}
            """,
            "CREATE INDEX space_requests_queue ON space_requests (space_id, created_at, user_id)",
            "CREATE INDEX space_requests_user ON space_requests (user_id)",
            """
            CREATE TABLE space_invites (
                id {id},
                space_id BIGINT NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
                code_hash TEXT NOT NULL UNIQUE,
                created_by BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                max_uses BIGINT,
                uses BIGINT NOT NULL DEFAULT 0,
                expires_at BIGINT,
                created_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX space_invites_space ON space_invites (space_id)",
            "CREATE INDEX space_invites_creator ON space_invites (created_by)",
            """
            CREATE TABLE space_bans (
                space_id BIGINT NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
                user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                created_by BIGINT REFERENCES users(id) ON DELETE SET NULL,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (space_id, user_id)
            ) {without_rowid}
            """,
            "CREATE INDEX space_bans_user ON space_bans (user_id)",
            "CREATE INDEX space_bans_creator ON space_bans (created_by)",
            """
            CREATE TABLE follow_requests (
                requester_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                target_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (requester_id, target_id)
            ) {without_rowid}
            """,
            "CREATE INDEX follow_requests_inbox ON follow_requests (target_id, created_at, requester_id)",
            """
            CREATE TABLE mutes (
                muter_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                muted_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (muter_id, muted_id)
            ) {without_rowid}
            """,
            "CREATE INDEX mutes_muted ON mutes (muted_id)",
            // `target_user_id`: the person the report is about (a post's or comment's author), so
            // a suspension finds their reports. `snapshot`: the reported text when it was reported.
            """
            CREATE TABLE reports (
                id {id},
                reporter_id BIGINT REFERENCES users(id) ON DELETE SET NULL,
                target_type TEXT NOT NULL,
                target_id BIGINT NOT NULL,
                target_user_id BIGINT REFERENCES users(id) ON DELETE CASCADE,
                reason TEXT NOT NULL,
                note TEXT,
                snapshot TEXT,
                state TEXT NOT NULL DEFAULT 'open',
                action TEXT,
                resolved_by BIGINT REFERENCES users(id) ON DELETE SET NULL,
                resolution_note TEXT,
                resolved_at BIGINT,
                created_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX reports_queue ON reports (state, id)",
            "CREATE INDEX reports_target ON reports (target_type, target_id)",
            "CREATE INDEX reports_target_user ON reports (target_user_id)",
            "CREATE INDEX reports_reporter ON reports (reporter_id)",
            "CREATE INDEX reports_resolver ON reports (resolved_by)",
            """
            CREATE TABLE report_spaces (
                report_id BIGINT NOT NULL REFERENCES reports(id) ON DELETE CASCADE,
                space_id BIGINT NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
                PRIMARY KEY (report_id, space_id)
            ) {without_rowid}
            """,
            "CREATE INDEX report_spaces_space ON report_spaces (space_id, report_id)",
            """
            CREATE TABLE audit_log (
                id {id},
                actor_id BIGINT REFERENCES users(id) ON DELETE SET NULL,
                action TEXT NOT NULL,
                target_type TEXT NOT NULL,
                target_id BIGINT NOT NULL,
                space_id BIGINT,
                report_id BIGINT,
                note TEXT,
                created_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX audit_log_actor ON audit_log (actor_id)",
            // A person's latest comments (the moderation page) without sorting all of them.
            "CREATE INDEX comments_author_recent ON comments (author_id, created_at, id)",
            "DROP INDEX comments_author",
        ]
    )
}
