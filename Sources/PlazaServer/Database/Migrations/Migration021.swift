/// Alt text: what a photo or video shows, in words, for people who cannot see it
/// (`Media.description`, Mastodon's `description`). Kept on the upload's row and in the line
/// its post copies (`MediaRecord.line`).
enum Migration021 {
    static let migration = Migration(
        version: 21,
        name: "alt text of media",
        statements: ["ALTER TABLE media ADD COLUMN description TEXT"])
}
