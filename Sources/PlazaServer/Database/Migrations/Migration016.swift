/// Activity feeds filtered by type (`activity=`): a person's activities of one type, and
/// everyone's, each one walk of an index in feed order. The progress filter (`progress=`) rides
/// on the same walks and on `posts_activity_posted`.
enum Migration016 {
    static let migration = Migration(
        version: 16,
        name: "activity filters",
        statements: [
            "CREATE INDEX posts_author_activity_type ON posts (author_id, activity_type, created_at, id) WHERE kind = 'activity'",
            "CREATE INDEX posts_activity_type ON posts (activity_type, created_at, id) WHERE kind = 'activity'",
        ]
    )
}
