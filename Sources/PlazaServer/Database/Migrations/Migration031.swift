/// Trends (step 22), counted on write: `trend_uses` has each person's use of a thing on a day
/// (UTC) once — a hashtag in a public post, a link shared in one, a public post liked or
/// boosted — and `trend_days` how many people used each thing that day, so that the trends read
/// a few days of counts and never the posts. Days older than `Trends.keptDays` are pruned by the
/// maintenance round.
enum Migration031 {
    static let migration = Migration(
        version: 31,
        name: "trends",
        statements: [
            """
            CREATE TABLE trend_uses (
                kind TEXT NOT NULL,
                day BIGINT NOT NULL,
                key TEXT NOT NULL,
                user_id BIGINT NOT NULL,
                PRIMARY KEY (kind, day, key, user_id)
            ) {without_rowid}
            """,
            """
            CREATE TABLE trend_days (
                kind TEXT NOT NULL,
                day BIGINT NOT NULL,
                key TEXT NOT NULL,
                people BIGINT NOT NULL,
                PRIMARY KEY (kind, day, key)
            ) {without_rowid}
            """,
        ])
}
