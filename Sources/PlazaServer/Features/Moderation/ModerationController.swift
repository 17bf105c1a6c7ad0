import Hummingbird
import PlazaAPI

/// Reports, the moderation queue, suspensions and the audit log. Who may do what is decided by
/// `ModerationStore` in SQL; these routes parse, call `ModerationActions` and answer.
struct ModerationController: FeatureRoutes {
    let moderation: ModerationStore
    let actions: ModerationActions

    var routes: RouteCollection<PlazaContext> {
        let (routes, signedIn) = RouteCollection.withSignedIn()
        signedIn.post("reports", use: create)
        signedIn.get("admin/reports", use: list)
        signedIn.patch("admin/reports/{id}", use: resolve)
        signedIn.put("admin/users/{username}/suspension", use: suspend)
        signedIn.delete("admin/users/{username}/suspension", use: unsuspend)
        signedIn.get("admin/audit", use: audit)
        return routes
    }

    static func note(_ text: String?) throws -> String? {
        try Validate.text(text, field: "note", max: ModerationStore.maxNoteLength)
    }

    /// 201 with a new report; 200 with the reporter's open report on the same target.
    @Sendable func create(_ request: Request, context: SignedInContext) async throws -> EditedResponse<Report> {
        let body = try await request.decode(as: CreateReportRequest.self, context: context)
        let target = try Validate.id(body.targetId, field: "targetId")
        let (report, created) = try await actions.report(
            by: context.user.userID, type: body.targetType, target: target, reason: body.reason,
            note: try Self.note(body.note), ruleIDs: body.ruleIds ?? [])
        return EditedResponse(status: created ? .created : .ok, response: report)
    }

    @Sendable func list(_ request: Request, context: SignedInContext) async throws -> Page<Report> {
        var state = ReportState.open
        if let text = request.uri.queryParameters.get("state") {
            guard let value = ReportState(rawValue: text) else {
                throw PlazaError.invalid("state", "state must be open or resolved.")
            }
            state = value
        }
        return try await moderation.reports(state: state, page: request.pageRequest(), viewer: context.user.userID)
    }

    @Sendable func resolve(_ request: Request, context: SignedInContext) async throws -> Report {
        let id = try context.parameters.id("id", "Report")
        let body = try await request.decode(as: ResolveReportRequest.self, context: context)
        return try await actions.resolve(
            id, by: context.user.userID, action: body.action, note: try Self.note(body.note), logger: context.logger)
    }

    @Sendable func suspend(_ request: Request, context: SignedInContext) async throws -> Response {
        // The body is optional: none, `{}` or `{"note": "..."}`.
        let buffer = try await PlazaRequestDecoder.body(of: request, context: context)
        var note: String?
        if buffer.readableBytes > 0 {
            note = try Self.note(try PlazaRequestDecoder.decode(SuspensionRequest.self, from: buffer).note)
        }
        try await actions.setSuspension(
            of: context.parameters.string("username"), true, by: context.user.userID, note: note)
        return Response(status: .noContent)
    }

    @Sendable func unsuspend(_ request: Request, context: SignedInContext) async throws -> Response {
        try await actions.setSuspension(
            of: context.parameters.string("username"), false, by: context.user.userID, note: nil)
        return Response(status: .noContent)
    }

    @Sendable func audit(_ request: Request, context: SignedInContext) async throws -> Page<AuditEntry> {
        try await moderation.audit(page: request.pageRequest(), viewer: context.user.userID)
    }
}
