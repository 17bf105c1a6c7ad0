/// Lists of accounts (Mastodon's lists) and notes on accounts.
///
/// - `lists`: a person's lists, each with a title, a replies policy (`followed`, `list` or `none`)
///   and whether it is `exclusive` (its accounts' posts leave the owner's home feed).
/// - `list_accounts`: the accounts of each list, with the list's owner (`user_id`) and its
///   `exclusive` flag copied in, so that the home feed asks "is this author in an exclusive list
///   of mine" by one partial index (`list_accounts_exclusive`), and an unfollow or a block takes
///   the account out of every list of its owner by `list_accounts_owner`.
/// - `account_notes`: what a person wrote about another (Mastodon's relationship `note`), theirs alone.
enum Migration033 {
    static let migration = Migration(
        version: 33,
        name: "lists and account notes",
        statements: [
            """
            CREATE TABLE lists (
                id BIGINT PRIMARY KEY,
                user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                title TEXT NOT NULL,
                replies_policy TEXT NOT NULL,
                exclusive BOOLEAN NOT NULL,
                created_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX lists_user ON lists (user_id, id)",
            """
            CREATE TABLE list_accounts (
                list_id BIGINT NOT NULL REFERENCES lists(id) ON DELETE CASCADE,
                account_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                exclusive BOOLEAN NOT NULL,
                PRIMARY KEY (list_id, account_id)
            ) {without_rowid}
            """,
            "CREATE INDEX list_accounts_owner ON list_accounts (user_id, account_id)",
            "CREATE INDEX list_accounts_exclusive ON list_accounts (user_id, account_id) WHERE exclusive",
            "CREATE INDEX list_accounts_account ON list_accounts (account_id)",
            """
            CREATE TABLE account_notes (
                user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                account_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                note TEXT NOT NULL,
                updated_at BIGINT NOT NULL,
                PRIMARY KEY (user_id, account_id)
            ) {without_rowid}
            """,
            "CREATE INDEX account_notes_account ON account_notes (account_id)",
        ])
}
