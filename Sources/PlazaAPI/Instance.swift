/// Who may sign up: anyone (`open`), anyone an admin approves (`approval`), whoever has an
/// invite (`invite`), or nobody (`closed`).
public enum RegistrationMode: String, Codable, Sendable, CaseIterable {
    case open, approval, invite, closed
}

/// One of the instance's rules, shown at sign-up and when reporting.
public struct InstanceRule: Codable, Sendable, Hashable {
    public var id: String
    public var text: String
    public init(id: String, text: String) {
        self.id = id
        self.text = text
    }
}

/// `GET /api/v1/about`: what the instance says of itself.
public struct InstanceInfo: Codable, Sendable, Hashable {
    public var name: String
    public var description: String
    public var rules: [InstanceRule]
    /// An address or URL where people reach the admins; empty when none is set.
    public var contact: String
    public var terms: String
    public var registrations: RegistrationMode
    public var version: String
    public init(
        name: String, description: String, rules: [InstanceRule], contact: String, terms: String,
        registrations: RegistrationMode, version: String
    ) {
        self.name = name
        self.description = description
        self.rules = rules
        self.contact = contact
        self.terms = terms
        self.registrations = registrations
        self.version = version
    }
}

/// `PATCH /admin/instance`: the fields to change; the others stay. `rules` replaces the list
/// (a rule given with the `id` it had keeps it).
public struct InstancePatch: Codable, Sendable {
    public struct Rule: Codable, Sendable {
        public var id: String?
        public var text: String
        public init(id: String? = nil, text: String) {
            self.id = id
            self.text = text
        }
    }
    public var name: String?
    public var description: String?
    public var rules: [Rule]?
    public var contact: String?
    public var terms: String?
    public var registrations: RegistrationMode?
    public init(
        name: String? = nil, description: String? = nil, rules: [Rule]? = nil, contact: String? = nil,
        terms: String? = nil, registrations: RegistrationMode? = nil
    ) {
        self.name = name
        self.description = description
        self.rules = rules
        self.contact = contact
        self.terms = terms
        self.registrations = registrations
    }
}

/// `202` to a sign-up that waits for an admin's approval.
public struct PendingRegistration: Codable, Sendable, Hashable {
    public var status: String
    public init(status: String = "pending") { self.status = status }
}

/// A sign-up waiting for approval, as admins see it.
public struct RegistrationRequest: Codable, Sendable, Hashable {
    public var username: String
    public var email: String
    public var reason: String
    public var createdAt: Timestamp
    public init(username: String, email: String, reason: String, createdAt: Timestamp) {
        self.username = username
        self.email = email
        self.reason = reason
        self.createdAt = createdAt
    }
}

/// An invite to sign up (`POST /admin/invites`, which takes a `CreateInviteRequest`): `url`
/// opens the sign-up page with the code filled in.
public struct InstanceInvite: Codable, Sendable, Hashable {
    public var code: String
    public var url: String
    @Nullable public var maxUses: Int?
    public var uses: Int
    @Nullable public var expiresAt: Timestamp?
    @Nullable public var createdBy: UserSummary?
    public var createdAt: Timestamp
    public init(
        code: String, url: String, maxUses: Int?, uses: Int, expiresAt: Timestamp?, createdBy: UserSummary?,
        createdAt: Timestamp
    ) {
        self.code = code
        self.url = url
        self.maxUses = maxUses
        self.uses = uses
        self.expiresAt = expiresAt
        self.createdBy = createdBy
        self.createdAt = createdAt
    }
}
