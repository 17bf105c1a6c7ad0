/// Keyword filters (`/me/filters`, Mastodon's filters v2): a person's phrases that hide posts
/// and comments or put them behind a warning. `contexts` is a comma list of `FilterContext`
/// names; `expires_at` null for never. Read whole per person, by `keyword_filters_user`.
enum Migration027 {
    static let migration = Migration(
        version: 27,
        name: "keyword filters",
        statements: [
            """
            CREATE TABLE keyword_filters (
                id BIGINT PRIMARY KEY,
                user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                phrase TEXT NOT NULL,
                whole_word BOOLEAN NOT NULL,
                contexts TEXT NOT NULL,
                action TEXT NOT NULL,
                expires_at BIGINT,
                created_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX keyword_filters_user ON keyword_filters (user_id, id)",
            "CREATE INDEX keyword_filters_expiry ON keyword_filters (expires_at) WHERE expires_at IS NOT NULL",
        ])
}
