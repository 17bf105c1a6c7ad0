import Foundation
import Hummingbird
import PlazaAPI
import PlazaServer

extension Mastodon {
    /// A report as Mastodon answers it (docs.joinmastodon.org/entities/Report).
    struct Report: Codable, Sendable, Hashable {
        var id: String
        var actionTaken: Bool
        @Nullable var actionTakenAt: String?
        var category: String
        var comment: String
        var forwarded: Bool
        var createdAt: String
        var statusIds: [String]
        var ruleIds: [String]
        var targetAccount: Account
    }
}

extension MastodonController {
    /// Mastodon's categories as Plaza's reasons: `violation` cites rules, `legal` is illegal
    /// content; Plaza's `abuse` has no category of its own and is `other`.
    static func reason(category: String) -> ReportReason? {
        ["spam": .spam, "legal": .illegal, "violation": .rules, "other": .other][category]
    }

    static func category(_ reason: ReportReason) -> String {
        switch reason {
        case .spam: "spam"
        case .illegal: "legal"
        case .rules: "violation"
        case .abuse, .other: "other"
        }
    }

    /// The most statuses one report names.
    static let maxReportedStatuses = 20

    /// Reports an account, or some of its statuses, through Plaza's reports: one report on each
    /// status (a post or a comment) named, else one on the account; the answer is the first.
    /// A status the reporter cannot read, or another account's, is "Record not found".
    @Sendable func report(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("write:reports").userID
        let params = try await MastodonParams.read(request, context: context)
        guard let accountID = try params.id("account_id") else { throw MastodonError.notFound }
        let account = try await profile(accountID, viewer: me, hiding: .theirBlock)
        let comment = try Validate.text(
            params.string("comment"), field: "comment", max: ModerationActions.maxNoteLength)
        let ruleIDs = params.strings("rule_ids")
        let category =
            params.string("category").flatMap { $0.isEmpty ? nil : $0 }
            ?? (ruleIDs.isEmpty ? "other" : "violation")
        guard let reason = Self.reason(category: category) else {
            throw MastodonError.validation("Category is not included in the list")
        }
        var statusIDs: [Int64] = []
        for text in params.strings("status_ids") where !statusIDs.contains(Int64(text) ?? 0) {
            guard let id = Int64(text), id > 0 else { throw MastodonError.notFound }
            statusIDs.append(id)
        }
        guard statusIDs.count <= Self.maxReportedStatuses else {
            throw MastodonError.validation("A report names at most \(Self.maxReportedStatuses) statuses")
        }
        var targets: [(ReportTargetType, Int64)] = []
        for id in statusIDs { targets.append(try await reportTarget(id, of: account.id, reporter: me)) }
        if targets.isEmpty { targets = [(.user, accountID)] }
        var first: Report?
        for (type, target) in targets {
            let (report, _) = try await asMastodon {
                try await actions.moderation.report(
                    by: me, type: type, target: target, reason: reason, note: comment,
                    ruleIDs: reason == .rules ? ruleIDs : [])
            }
            if first == nil { first = report }
        }
        guard let first else { throw MastodonError.notFound }
        return try MastodonJSON.response(
            Mastodon.Report(
                id: first.id, actionTaken: false, actionTakenAt: nil, category: Self.category(first.reason),
                comment: first.note ?? "", forwarded: false, createdAt: first.createdAt.description,
                statusIds: statusIDs.map { String($0) }, ruleIds: first.rules.map(\.id),
                targetAccount: mapper.account(account)))
    }

    /// What the status `id` is to Plaza's reports — a post or a comment — when `reporter` may
    /// read it and the account `author` wrote it; else "Record not found".
    func reportTarget(_ id: Int64, of author: String, reporter: Int64) async throws -> (ReportTargetType, Int64) {
        if let record = try await posts.record(id: id, viewer: reporter) {
            guard record.post.author.id == author else { throw MastodonError.notFound }
            return (.post, id)
        }
        guard let comment = try await comments.comment(id: id, viewer: reporter), comment.author.id == author,
            let post = Int64(comment.postId), try await posts.record(id: post, viewer: reporter) != nil
        else { throw MastodonError.notFound }
        return (.comment, id)
    }
}
