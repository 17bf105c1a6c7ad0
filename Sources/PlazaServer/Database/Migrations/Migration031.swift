/// Trending hashtags (step 22), counted on write: `tag_uses` has each person's use of a tag on a
/// day (UTC) once, and `tag_days` how many people used each tag that day, so that the trends read
/// a few days of counts and never the posts. Days older than `TrendingTags.keptDays` are pruned by
/// the maintenance round.
enum Migration031 {
    static let migration = Migration(
        version: 31,
        name: "trending tags",
        statements: [
            """
            CREATE TABLE tag_uses (
                tag TEXT NOT NULL,
                day BIGINT NOT NULL,
                user_id BIGINT NOT NULL,
                PRIMARY KEY (day, tag, user_id)
            ) {without_rowid}
            """,
            """
            CREATE TABLE tag_days (
                day BIGINT NOT NULL,
                tag TEXT NOT NULL,
                people BIGINT NOT NULL,
                PRIMARY KEY (day, tag)
            ) {without_rowid}
            """,
        ])
}
