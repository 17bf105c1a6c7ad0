import Logging
import PlazaAPI

/// What people do about content and accounts, decided once for every door: report, resolve a
/// report, suspend and reinstate. Who may do what is decided by `ModerationStore` in SQL; a
/// post removed by a resolution loses its media files once that is committed.
package struct ModerationActions: Sendable {
    let moderation: ModerationStore
    let instance: InstanceStore
    let storage: any MediaStorage

    /// The longest note a report may carry, in characters.
    package static let maxNoteLength = ModerationStore.maxNoteLength

    /// `reporter`'s report on a post, comment or person: the new report and true, or their open
    /// report on the same target and false. A report for breaking the rules cites one or more
    /// of the instance's current rules (422 otherwise); no other reason cites any.
    package func report(
        by reporter: Int64, type: ReportTargetType, target: Int64, reason: ReportReason, note: String?,
        ruleIDs: [String] = []
    ) async throws -> (report: Report, created: Bool) {
        var cited: [InstanceRule] = []
        if reason == .rules {
            let ids = Set(ruleIDs.prefix(InstanceStore.maxRules + 1))
            guard !ids.isEmpty, ids.count <= InstanceStore.maxRules else {
                throw PlazaError.invalid("ruleIds", "Name the rules it breaks (ruleIds, from GET /about).")
            }
            cited = try await instance.info().rules.filter { ids.contains($0.id) }
            guard cited.count == ids.count else {
                throw PlazaError.invalid("ruleIds", "ruleIds names a rule this server does not have.")
            }
        } else if !ruleIDs.isEmpty {
            throw PlazaError.invalid("ruleIds", "Only a report for breaking the rules (reason rules) cites rules.")
        }
        return try await moderation.report(
            by: reporter, type: type, targetID: target, reason: reason, note: note, rules: cited)
    }

    /// Resolves the report (and every other open report on the same target) with `action`.
    /// 404 when `moderator` may not see it.
    func resolve(_ report: Int64, by moderator: Int64, action: ReportAction, note: String?, logger: Logger)
        async throws -> Report
    {
        let (resolved, media) = try await moderation.resolve(report: report, by: moderator, action: action, note: note)
        await storage.deleteFiles(ofMedia: media, logger: logger)
        return resolved
    }

    /// Suspends (or reinstates) the person named `username`, as `moderator` (an admin).
    func setSuspension(of username: String, _ suspended: Bool, by moderator: Int64, note: String?) async throws {
        try await moderation.setSuspension(username: username, suspended: suspended, by: moderator, note: note)
    }
}
