/// Audiences, closed spaces, follow requests and moderation (API.md: Audiences, friends and
/// moderation).

/// Who may read a post.
public enum PostAudience: String, Codable, Sendable, Hashable, CaseIterable {
    /// Anyone, signed in or not.
    case `public`
    /// The people who follow the author (and the author).
    case followers
    /// The members of the post's spaces (and the author); the post needs a space.
    case members
}

/// Who may see and join a space.
public enum SpaceVisibility: String, Codable, Sendable, Hashable, CaseIterable {
    /// Listed; anyone joins; posts are public unless their author narrows them.
    case open
    /// Listed; joining needs a moderator's approval; posts are for members only.
    case closed
    /// Unlisted; joined by invite only; posts are for members only.
    case `private`
}

public enum SpaceRole: String, Codable, Sendable, Hashable, CaseIterable {
    case owner, moderator, member
}

/// A member of a space, with their role.
public struct SpaceMember: Codable, Sendable, Hashable {
    public var user: UserSummary
    public var role: SpaceRole
    public var joinedAt: Timestamp
    public init(user: UserSummary, role: SpaceRole, joinedAt: Timestamp) {
        self.user = user
        self.role = role
        self.joinedAt = joinedAt
    }
}

/// Someone asking to join a closed space, or to follow a locked person.
public struct JoinRequest: Codable, Sendable, Hashable {
    public var user: UserSummary
    public var requestedAt: Timestamp
    public init(user: UserSummary, requestedAt: Timestamp) {
        self.user = user
        self.requestedAt = requestedAt
    }
}

/// PATCH /spaces/{slug}/members/{username}.
public struct UpdateMemberRequest: Codable, Sendable {
    /// `moderator` or `member` (the owner's role does not change).
    public var role: SpaceRole
    public init(role: SpaceRole) { self.role = role }
}

/// POST /spaces/{slug}/invites.
public struct CreateInviteRequest: Codable, Sendable {
    /// How many people may join with it; no limit when left out.
    public var maxUses: Int?
    /// When it stops working; never when left out.
    public var expiresAt: Timestamp?
    public init(maxUses: Int? = nil, expiresAt: Timestamp? = nil) {
        self.maxUses = maxUses
        self.expiresAt = expiresAt
    }
}

public struct SpaceInvite: Codable, Sendable, Hashable {
    /// The secret to pass to `POST /spaces/join/{code}`; shown once.
    public var code: String
    /// The web app's page that joins with it.
    public var url: String
    @Nullable public var expiresAt: Timestamp?
    @Nullable public var maxUses: Int?
    public init(code: String, url: String, expiresAt: Timestamp?, maxUses: Int?) {
        self.code = code
        self.url = url
        self.expiresAt = expiresAt
        self.maxUses = maxUses
    }
}

public enum ReportTargetType: String, Codable, Sendable, Hashable, CaseIterable {
    case post, comment, user
}

public enum ReportReason: String, Codable, Sendable, Hashable, CaseIterable {
    /// `rules`: it breaks one or more of the instance's rules, which the report cites.
    case spam, abuse, illegal, rules, other
}

public enum ReportState: String, Codable, Sendable, Hashable, CaseIterable {
    case open, resolved
}

/// What a moderator did about a report.
public enum ReportAction: String, Codable, Sendable, Hashable, CaseIterable {
    /// Nothing was wrong.
    case dismiss
    /// The content goes: a post or comment is deleted (by a space's moderator: the post leaves
    /// their space).
    case remove
    /// The person is suspended (admins only).
    case suspend
}

/// POST /reports.
public struct CreateReportRequest: Codable, Sendable {
    public var targetType: ReportTargetType
    public var targetId: String
    public var reason: ReportReason
    public var note: String?
    /// With reason `rules`: the ids of the instance's rules it breaks (`GET /about`).
    public var ruleIds: [String]?
    public init(
        targetType: ReportTargetType, targetId: String, reason: ReportReason, note: String? = nil,
        ruleIds: [String]? = nil
    ) {
        self.targetType = targetType
        self.targetId = targetId
        self.reason = reason
        self.note = note
        self.ruleIds = ruleIds
    }
}

/// PATCH /admin/reports/{id}.
public struct ResolveReportRequest: Codable, Sendable {
    public var action: ReportAction
    public var note: String?
    public init(action: ReportAction, note: String? = nil) {
        self.action = action
        self.note = note
    }
}

/// PUT /admin/users/{username}/suspension (the body is optional).
public struct SuspensionRequest: Codable, Sendable {
    /// Why, for the audit log.
    public var note: String?
    public init(note: String? = nil) { self.note = note }
}

public struct Report: Codable, Sendable, Hashable {
    public var id: String
    public var targetType: ReportTargetType
    public var targetId: String
    /// The person the report is about (the author of reported content).
    @Nullable public var targetUser: UserSummary?
    /// The reported text as it was when reported.
    @Nullable public var snapshot: String?
    public var reason: ReportReason
    /// The instance's rules the report cites, as they read when it was filed.
    public var rules: [InstanceRule]
    @Nullable public var note: String?
    /// Who reported it; null once their account is gone.
    @Nullable public var reporter: UserSummary?
    /// Slugs of the spaces the content was in when reported.
    public var spaces: [String]
    public var state: ReportState
    @Nullable public var action: ReportAction?
    @Nullable public var resolvedBy: UserSummary?
    @Nullable public var resolutionNote: String?
    @Nullable public var resolvedAt: Timestamp?
    public var createdAt: Timestamp
    public init(
        id: String, targetType: ReportTargetType, targetId: String, targetUser: UserSummary?, snapshot: String?,
        reason: ReportReason, note: String?, reporter: UserSummary?, spaces: [String], state: ReportState,
        action: ReportAction?, resolvedBy: UserSummary?, resolutionNote: String?, resolvedAt: Timestamp?,
        createdAt: Timestamp, rules: [InstanceRule] = []
    ) {
        self.id = id
        self.targetType = targetType
        self.targetId = targetId
        self.targetUser = targetUser
        self.snapshot = snapshot
        self.reason = reason
        self.rules = rules
        self.note = note
        self.reporter = reporter
        self.spaces = spaces
        self.state = state
        self.action = action
        self.resolvedBy = resolvedBy
        self.resolutionNote = resolutionNote
        self.resolvedAt = resolvedAt
        self.createdAt = createdAt
    }
}

/// One line of the audit log: who did what to what.
public struct AuditEntry: Codable, Sendable, Hashable {
    public var id: String
    /// Null when the account is gone.
    @Nullable public var actor: UserSummary?
    /// e.g. `report.dismiss`, `post.remove`, `user.suspend`, `space.ban`, `member.role`.
    public var action: String
    public var targetType: String
    public var targetId: String
    /// The person, when the target is one; null otherwise or when the account is gone.
    @Nullable public var targetUser: UserSummary?
    @Nullable public var space: String?
    @Nullable public var reportId: String?
    @Nullable public var note: String?
    public var createdAt: Timestamp
    public init(
        id: String, actor: UserSummary?, action: String, targetType: String, targetId: String,
        targetUser: UserSummary? = nil, space: String?, reportId: String?, note: String?, createdAt: Timestamp
    ) {
        self.id = id
        self.actor = actor
        self.action = action
        self.targetType = targetType
        self.targetId = targetId
        self.targetUser = targetUser
        self.space = space
        self.reportId = reportId
        self.note = note
        self.createdAt = createdAt
    }
}
