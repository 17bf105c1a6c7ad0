/// The rules of the instance a report cites (`reason` `rules`, Mastodon's "violation"): a JSON
/// list of `{id, text}` as the rules read when the report was filed, so that a rule changed or
/// removed since still says what the reporter pointed to.
enum Migration024 {
    static let migration = Migration(
        version: 24,
        name: "rules cited by reports",
        statements: ["ALTER TABLE reports ADD COLUMN rules TEXT"])
}
