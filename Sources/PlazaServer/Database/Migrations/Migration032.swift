/// Polls (step 22): a post may carry one.
///
/// - `polls`: the options as a JSON array of their titles, the votes per option as comma-separated
///   counts (`tallies`) and the number of people who voted, all kept on write by the vote itself
///   (under the poll row's lock), so reading a poll never counts votes. `announced` is set once
///   its author and voters were told it ended; `polls_due` finds the ones still to tell.
/// - `poll_votes`: each person's choices, each once (a single-choice poll takes one).
/// - `post_versions.poll`: a replaced version's poll (its options and whether several may be chosen).
enum Migration032 {
    static let migration = Migration(
        version: 32,
        name: "polls",
        statements: [
            """
            CREATE TABLE polls (
                post_id BIGINT PRIMARY KEY REFERENCES posts(id) ON DELETE CASCADE,
                options TEXT NOT NULL,
                tallies TEXT NOT NULL,
                multiple BOOLEAN NOT NULL,
                expires_at BIGINT NOT NULL,
                voters_count BIGINT NOT NULL DEFAULT 0,
                announced BOOLEAN NOT NULL DEFAULT FALSE
            )
            """,
            "CREATE INDEX polls_due ON polls (expires_at) WHERE NOT announced",
            """
            CREATE TABLE poll_votes (
                post_id BIGINT NOT NULL REFERENCES polls(post_id) ON DELETE CASCADE,
                user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                choice INTEGER NOT NULL,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (post_id, user_id, choice)
            ) {without_rowid}
            """,
            "CREATE INDEX poll_votes_user ON poll_votes (user_id, post_id)",
            "ALTER TABLE post_versions ADD COLUMN poll TEXT",
        ])
}
