import OpenAPIKit
import PlazaAPI

/// Reports, the moderation queue, suspensions and the audit log.
extension OpenAPIDocument {
    static var moderationOperations: [(String, Operation)] { reportOperations + adminOperations }

    /// Reporting, and the moderators' queue of reports.
    private static var reportOperations: [(String, Operation)] {
        [
            (
                "\(v1)/reports",
                Operation(
                    method: .post,
                    summary: """
                        Report a post, comment or person I can see (else 404); not myself or what I made (422). \
                        201 with the report; 200 with my open report on the same target when I report it again; \
                        429 daily_report_limit past 50 reports a day
                        """,
                    auth: .required, body: "CreateReportRequest", status: 201, response: ref("Report"),
                    errors: [404, 422, 429])
            ),
            (
                "\(v1)/admin/reports",
                Operation(
                    method: .get,
                    summary: """
                        The moderation queue, newest first: every report for admins; for the owners and moderators \
                        of spaces, the reports about content in their spaces; 403 for anyone else
                        """,
                    auth: .required, query: Params.page + [Params.reportState], response: pageOf("Report"),
                    errors: [403])
            ),
            (
                "\(v1)/admin/reports/{id}",
                Operation(
                    method: .patch,
                    summary: """
                        Resolve a report, and every other open report on the same target: dismiss; remove (an admin \
                        deletes the post or comment; a space's moderator takes the post out of their space or deletes \
                        the comment; 422 for a person); suspend the author (admins only, 403 otherwise). The reporters \
                        are notified (report_resolved); 409 when already resolved
                        """,
                    auth: .required, body: "ResolveReportRequest", response: ref("Report"), errors: [403, 409, 422])
            ),
        ]
    }

    /// Suspensions and the audit log.
    private static var adminOperations: [(String, Operation)] {
        [
            (
                "\(v1)/admin/users/{username}/suspension",
                Operation(
                    method: .put,
                    summary: """
                        Suspend a person (admins only): their sessions end at once, what they made is hidden, they \
                        cannot sign in (403 account_suspended). Not oneself (422) nor an admin (403)
                        """,
                    auth: .required, body: "SuspensionRequest", bodyRequired: false, status: 204, errors: [403, 422])
            ),
            (
                "\(v1)/admin/users/{username}/suspension",
                Operation(
                    method: .delete, summary: "Lift a suspension (admins only)", auth: .required, status: 204,
                    errors: [403])
            ),
            (
                "\(v1)/admin/audit",
                Operation(
                    method: .get, summary: "The audit log, newest first: who did what (admins only)",
                    auth: .required, query: Params.page, response: pageOf("AuditEntry"), errors: [403])
            ),
        ]
    }
}

extension OpenAPIDocument.Params {
    static var reportState: OpenAPI.Parameter {
        .query(name: "state", schema: .string(allowedValues: ["open", "resolved"], defaultValue: "open"))
    }
}

extension OpenAPIDocument.Schemas {
    static var moderation: [String: JSONSchema] {
        let targetType = enumeration(["post", "comment", "user"])
        let reason = enumeration(ReportReason.allCases.map(\.rawValue))
        let action = enumeration(["dismiss", "remove", "suspend"])
        return [
            "Report": object(
                [
                    "id": id, "targetType": targetType, "targetId": id,
                    "targetUser": nullable(OpenAPIDocument.ref("UserSummary")), "snapshot": nullable(string()),
                    "reason": reason, "rules": array(object(["id": string(), "text": string()])),
                    "note": nullable(string()), "reporter": nullable(OpenAPIDocument.ref("UserSummary")),
                    "spaces": array(string()),
                    "state": enumeration(["open", "resolved"]), "action": nullable(action),
                    "resolvedBy": nullable(OpenAPIDocument.ref("UserSummary")), "resolutionNote": nullable(string()),
                    "resolvedAt": nullable(timestamp), "createdAt": timestamp,
                ],
                description: """
                    targetUser: the person reported, or the author of the reported content; snapshot: its text when \
                    reported; spaces: slugs of the spaces it was in then
                    """),
            "ReportPage": page("Report"),
            "AuditEntry": object(
                [
                    "id": id, "actor": nullable(OpenAPIDocument.ref("UserSummary")), "action": string(),
                    "targetType": string(),
                    "targetId": id, "targetUser": nullable(OpenAPIDocument.ref("UserSummary")),
                    "space": nullable(string()), "reportId": nullable(id), "note": nullable(string()),
                    "createdAt": timestamp,
                ],
                description: """
                    action: e.g. report.dismiss, post.remove, comment.remove, user.suspend, user.unsuspend; \
                    targetUser: the person, when the target is one
                    """),
            "AuditEntryPage": page("AuditEntry"),
            "CreateReportRequest": object(
                [
                    "targetType": targetType, "targetId": id, "reason": reason,
                    "note": string(maxLength: ModerationStore.maxNoteLength),
                    "ruleIds": array(string(maxLength: 20)),
                ],
                required: ["targetType", "targetId", "reason"],
                description: """
                    reason rules: it breaks the instance's rules, whose ids (GET /about) ruleIds names; \
                    no other reason takes ruleIds (422)
                    """),
            "ResolveReportRequest": object(
                ["action": action, "note": string(maxLength: ModerationStore.maxNoteLength)], required: ["action"]),
            "SuspensionRequest": object(["note": string(maxLength: ModerationStore.maxNoteLength)], required: []),
        ]
    }
}
