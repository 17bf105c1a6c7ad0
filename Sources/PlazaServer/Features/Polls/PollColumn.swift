import Foundation
import PlazaAPI

/// The poll of post `p` as one text column of the post's row, with the viewer's choices and
/// whether they wrote it: `m|s expires_at voters tallies own choices|options-json` (`-` for no
/// choices), or NULL for a post with no poll. A look-up by primary key per post, none for the
/// viewer's votes when there is no poll.
enum PollColumn {
    static let name = "poll"

    static func select(viewer: Int64?) -> SQL {
        let own: SQL
        let choices: SQL
        if let viewer {
            own = "CASE WHEN p.author_id = \(bind: viewer) THEN '1' ELSE '0' END"
            choices = """
                COALESCE((SELECT string_agg(CAST(pv.choice AS TEXT), ',') FROM poll_votes pv \
                WHERE pv.post_id = pl.post_id AND pv.user_id = \(bind: viewer)), '-')
                """
        } else {
            (own, choices) = ("'0'", "'-'")
        }
        return """
            (SELECT CASE WHEN pl.multiple THEN 'm' ELSE 's' END || ' ' || pl.expires_at || ' ' || pl.voters_count \
            || ' ' || pl.tallies || ' ' || \(own) || ' ' || \(choices) || '|' || pl.options \
            FROM polls pl WHERE pl.post_id = p.id) AS \(unsafeRaw: name)
            """
    }

    /// The poll of post `id` as its reader sees it, from the column's text; nil for none (or text
    /// that does not read as a poll).
    static func poll(_ text: String?, post id: Int64, now: Int64 = Timestamp.now.milliseconds) -> Poll? {
        guard let text, let bar = text.firstIndex(of: "|") else { return nil }
        let head = text[..<bar].split(separator: " ")
        guard head.count == 6, let expiresAt = Int64(head[1]), let voters = Int(head[2]) else { return nil }
        let options = PollStore.Stored.options(String(text[text.index(after: bar)...]))
        let stored = PollStore.Stored(
            options: options, tallies: PollStore.Stored.counts(head[3], options: options.count),
            multiple: head[0] == "m", expiresAt: expiresAt, voters: voters)
        let choices = head[5] == "-" ? [] : head[5].split(separator: ",").compactMap { Int($0) }.sorted()
        return stored.poll(id: id, choices: choices, resultsShown: head[4] == "1" || !choices.isEmpty, now: now)
    }
}
