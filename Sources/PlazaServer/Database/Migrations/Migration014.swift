/// Push: the devices people registered and the deliveries owed to them.
///
/// - `push_devices`: an APNs device token or a Web Push subscription (`address`: the token in
///   lower-case hex, or the endpoint URL; `p256dh`/`auth` its keys), registered by a session: it
///   goes when that session ends (sign-out, password reset). One device belongs to one person:
///   registering it again from another account moves it (`push_devices_address`).
/// - `push_deliveries`: one row per notification and device, written in the transaction that
///   recorded the notification and sent by `PushService` (retries as `mail_outbox`). While it
///   waits, a notification that gains actors needs no new row: the push is rendered when sent;
///   `generation` counts such changes, so a push rendered before one is followed by another;
///   `claims` counts the workers' claims, so only the latest claim's outcome is recorded.
///   After it was sent, new actors re-arm the same row no sooner than a minute later, and the
///   device replaces the shown push (same collapse id): a burst of likes is one or two pushes.
///   `recipient_id` is whom the notification was for: a device that moved to someone else
///   since gets nothing of it. `push_deliveries_due` is the worker's queue; `push_deliveries_done` finds the
///   finished ones to prune.
enum Migration014 {
    static let migration = Migration(
        version: 14,
        name: "push",
        statements: [
            """
            CREATE TABLE push_devices (
                id BIGINT PRIMARY KEY,
                user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                session_id BIGINT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                platform TEXT NOT NULL,
                address TEXT NOT NULL,
                environment TEXT,
                bundle_id TEXT,
                p256dh TEXT,
                auth TEXT,
                created_at BIGINT NOT NULL,
                last_used_at BIGINT
            )
            """,
            "CREATE UNIQUE INDEX push_devices_address ON push_devices (platform, address)",
            "CREATE INDEX push_devices_user ON push_devices (user_id, id)",
            "CREATE INDEX push_devices_session ON push_devices (session_id)",
            """
            CREATE TABLE push_deliveries (
                notification_id BIGINT NOT NULL REFERENCES notifications(id) ON DELETE CASCADE,
                device_id BIGINT NOT NULL REFERENCES push_devices(id) ON DELETE CASCADE,
                recipient_id BIGINT NOT NULL,
                state TEXT NOT NULL DEFAULT 'pending',
                attempts INTEGER NOT NULL DEFAULT 0,
                generation INTEGER NOT NULL DEFAULT 0,
                claims INTEGER NOT NULL DEFAULT 0,
                next_attempt_at BIGINT NOT NULL,
                created_at BIGINT NOT NULL,
                sent_at BIGINT,
                last_error TEXT,
                PRIMARY KEY (notification_id, device_id)
            )
            """,
            "CREATE INDEX push_deliveries_device ON push_deliveries (device_id)",
            "CREATE INDEX push_deliveries_due ON push_deliveries (next_attempt_at) WHERE state = 'pending'",
            "CREATE INDEX push_deliveries_done ON push_deliveries (created_at) WHERE state <> 'pending'",
        ]
    )
}
