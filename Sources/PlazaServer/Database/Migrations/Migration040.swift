/// Fewer index pages a like or a notification writes (step 25): each B-tree a row enters is a
/// page more in the commit's WAL frames and in the next checkpoint.
///
/// - `likes_user (user_id, post_id)` goes: the primary key `(post_id, user_id)` answers a
///   person's like of given posts, and `likes_user_time (user_id, created_at, post_id)` their
///   likes as a list and the cascade when they leave.
/// - `notifications_post` and `notifications_comment` keep only the notifications that have a
///   post or a comment: they serve the cascades (`post_id = ?`, `comment_id = ?`), which no NULL
///   answers, and a notification without a comment (a like, a boost, a follow) no longer enters
///   the comment index.
enum Migration040 {
    static let migration = Migration(
        version: 40,
        name: "fewer write indexes",
        statements: [
            "DROP INDEX likes_user",
            "DROP INDEX notifications_post",
            "CREATE INDEX notifications_post ON notifications (post_id) WHERE post_id IS NOT NULL",
            "DROP INDEX notifications_comment",
            "CREATE INDEX notifications_comment ON notifications (comment_id) WHERE comment_id IS NOT NULL",
        ])
}
