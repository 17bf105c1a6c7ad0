/// Notifications and the event log behind the realtime stream.
///
/// A notification is one row per recipient and *group*: likes on one post and new followers
/// gather in one unread row ("Ana and 3 others"), every other kind has a group of its own
/// (`group_key` names it, e.g. `like:<post>`, `comment:<comment>`). Only one unread row per
/// group exists, which a partial unique index enforces; once read, the next like starts a new
/// group. `notification_actors` holds who acted, so one person counts once per group.
/// `users.unread_notifications` is kept by triggers.
///
/// The event log is `events` (one row per visible change, numbered by `seq` in commit order)
/// and `event_inbox` (who may receive it), written in the transaction that makes the change.
enum Migration005 {
    static let migration = Migration(
        version: 5,
        name: "notifications_events",
        statements: [
            """
            CREATE TABLE notifications (
                id {id},
                recipient_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                kind TEXT NOT NULL,
                group_key TEXT NOT NULL,
                actor_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                actor_count BIGINT NOT NULL DEFAULT 1,
                post_id BIGINT REFERENCES posts(id) ON DELETE CASCADE,
                comment_id BIGINT REFERENCES comments(id) ON DELETE CASCADE,
                sort_id BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                read_at BIGINT
            )
            """,
            "CREATE INDEX notifications_list ON notifications (recipient_id, sort_id)",
            "CREATE INDEX notifications_unread ON notifications (recipient_id, sort_id) WHERE read_at IS NULL",
            "CREATE UNIQUE INDEX notifications_open_group ON notifications (recipient_id, group_key) WHERE read_at IS NULL",
            "CREATE INDEX notifications_post ON notifications (post_id)",
            "CREATE INDEX notifications_comment ON notifications (comment_id)",
            """
            CREATE TABLE notification_actors (
                notification_id BIGINT NOT NULL REFERENCES notifications(id) ON DELETE CASCADE,
                actor_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                acted_at BIGINT NOT NULL,
                PRIMARY KEY (notification_id, actor_id)
            ) {without_rowid}
            """,
            "CREATE INDEX notification_actors_recent ON notification_actors (notification_id, acted_at)",
            "CREATE INDEX notification_actors_actor ON notification_actors (actor_id)",
            "ALTER TABLE users ADD COLUMN unread_notifications BIGINT NOT NULL DEFAULT 0",
            """
            CREATE TABLE event_inbox (
                recipient_id BIGINT NOT NULL,
                seq BIGINT NOT NULL,
                PRIMARY KEY (recipient_id, seq)
            ) {without_rowid}
            """,
            "CREATE INDEX event_inbox_seq ON event_inbox (seq, recipient_id)",
            """
            CREATE TABLE events (
                seq {sequence},
                kind TEXT NOT NULL,
                actor_id BIGINT NOT NULL,
                post_id BIGINT,
                comment_id BIGINT,
                notification_id BIGINT,
                data TEXT,
                created_at BIGINT NOT NULL
            )
            """,
            // Everything up to `pruned_through` was dropped by retention: older resume points get a reset.
            "CREATE TABLE event_log (pruned_through BIGINT NOT NULL)",
            "INSERT INTO event_log (pruned_through) VALUES (0)",
        ],
        sqlite: [
            """
            CREATE TRIGGER notifications_unread_insert AFTER INSERT ON notifications WHEN NEW.read_at IS NULL BEGIN
                UPDATE users SET unread_notifications = unread_notifications + 1 WHERE id = NEW.recipient_id;
            END
            """,
            """
            CREATE TRIGGER notifications_unread_delete AFTER DELETE ON notifications WHEN OLD.read_at IS NULL BEGIN
                UPDATE users SET unread_notifications = unread_notifications - 1 WHERE id = OLD.recipient_id;
            END
            """,
            """
            CREATE TRIGGER notifications_unread_read AFTER UPDATE OF read_at ON notifications
            WHEN OLD.read_at IS NULL AND NEW.read_at IS NOT NULL BEGIN
                UPDATE users SET unread_notifications = unread_notifications - 1 WHERE id = NEW.recipient_id;
            END
            """,
        ],
        postgres: [
            """
            CREATE FUNCTION notifications_unread() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP = 'INSERT' THEN
                    IF NEW.read_at IS NULL THEN
                        UPDATE users SET unread_notifications = unread_notifications + 1 WHERE id = NEW.recipient_id;
                    END IF;
                ELSIF TG_OP = 'DELETE' THEN
                    IF OLD.read_at IS NULL THEN
                        UPDATE users SET unread_notifications = unread_notifications - 1 WHERE id = OLD.recipient_id;
                    END IF;
                ELSIF OLD.read_at IS NULL AND NEW.read_at IS NOT NULL THEN
                    UPDATE users SET unread_notifications = unread_notifications - 1 WHERE id = NEW.recipient_id;
                END IF;
                RETURN NULL;
            END $$
            """,
            """
            CREATE TRIGGER notifications_unread AFTER INSERT OR DELETE OR UPDATE OF read_at ON notifications
            FOR EACH ROW EXECUTE FUNCTION notifications_unread()
            """,
        ])
}
