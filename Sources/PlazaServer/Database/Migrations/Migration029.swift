/// Pins (step 22): a person's posts pinned to their profile, a space's announcements.
///
/// - `profile_pins`: the author's own posts on top of their profile, at most
///   `PinRules.maxPerProfile`; the primary key lists them for a person and checks one.
/// - `space_pins`: posts a space's moderators pinned to its top, at most `PinRules.maxPerSpace`;
///   `pinned_by` is the moderator who did. Both go with the post, the person and the space.
enum Migration029 {
    static let migration = Migration(
        version: 29,
        name: "pins",
        statements: [
            """
            CREATE TABLE profile_pins (
                user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                post_id BIGINT NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (user_id, post_id)
            )
            """,
            "CREATE INDEX profile_pins_post ON profile_pins (post_id)",
            """
            CREATE TABLE space_pins (
                space_id BIGINT NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
                post_id BIGINT NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
                pinned_by BIGINT REFERENCES users(id) ON DELETE SET NULL,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (space_id, post_id)
            )
            """,
            "CREATE INDEX space_pins_post ON space_pins (post_id)",
        ])
}
