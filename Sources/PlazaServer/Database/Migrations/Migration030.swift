/// Edit history (step 22): the versions a post had before each edit of its title, text, content
/// warning, sensitivity or media, each with the time it was written (the post's creation, or the
/// edit that made it). The current version is the post itself. They go with the post.
enum Migration030 {
    static let migration = Migration(
        version: 30,
        name: "post versions",
        statements: [
            """
            CREATE TABLE post_versions (
                post_id BIGINT NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                title TEXT,
                body TEXT,
                content_warning TEXT,
                sensitive BOOLEAN NOT NULL DEFAULT FALSE,
                media TEXT,
                PRIMARY KEY (post_id, created_at)
            ) {without_rowid}
            """
        ])
}
