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
    /// Whether members (not only admins) may make invite links (`POST /invites`).
    public var membersMayInvite: Bool
    public var version: String
    public init(
        name: String, description: String, rules: [InstanceRule], contact: String, terms: String,
        registrations: RegistrationMode, membersMayInvite: Bool = false, version: String
    ) {
        self.name = name
        self.description = description
        self.rules = rules
        self.contact = contact
        self.terms = terms
        self.registrations = registrations
        self.membersMayInvite = membersMayInvite
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
    public var membersMayInvite: Bool?
    public init(
        name: String? = nil, description: String? = nil, rules: [Rule]? = nil, contact: String? = nil,
        terms: String? = nil, registrations: RegistrationMode? = nil, membersMayInvite: Bool? = nil
    ) {
        self.name = name
        self.description = description
        self.rules = rules
        self.contact = contact
        self.terms = terms
        self.registrations = registrations
        self.membersMayInvite = membersMayInvite
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

/// An invite to sign up (`POST /admin/invites` or a member's `POST /invites`, which take a
/// `CreateInviteRequest`): `url` opens the sign-up page with the code filled in.
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

/// `GET /admin/overview`: how the instance is doing, for its admins. Counts of queues and
/// lists stop at `AdminOverview.countCap` (then read as "at least").
public struct AdminOverview: Codable, Sendable, Hashable {
    public static let countCap = 10_000

    public struct People: Codable, Sendable, Hashable {
        public var total: Int
        public var admins: Int
        public var pending: Int
        public var suspended: Int
        public init(total: Int, admins: Int, pending: Int, suspended: Int) {
            self.total = total
            self.admins = admins
            self.pending = pending
            self.suspended = suspended
        }
    }
    /// An outbox or queue: waiting, and given up on.
    public struct Queue: Codable, Sendable, Hashable {
        public var pending: Int
        public var failed: Int
        public init(pending: Int, failed: Int) {
            self.pending = pending
            self.failed = failed
        }
    }
    public struct StorageUser: Codable, Sendable, Hashable {
        public var user: UserSummary
        public var bytes: Int64
        public init(user: UserSummary, bytes: Int64) {
            self.user = user
            self.bytes = bytes
        }
    }
    /// `Plaza 1.0.0 (commit …)`.
    public var version: String
    /// When this server process started.
    public var startedAt: Timestamp
    /// `sqlite` or `postgres`, and the database's size on disk.
    public var database: String
    public var databaseBytes: Int64
    public var people: People
    /// Media stored for people (every variant and preview image), and who stores the most.
    public var storageBytes: Int64
    public var topStorage: [StorageUser]
    public var mail: Queue
    public var push: Queue
    /// Videos: being transcoded (pending), and failed.
    public var videos: Queue
    public var openReports: Int
    public init(
        version: String, startedAt: Timestamp, database: String, databaseBytes: Int64, people: People,
        storageBytes: Int64, topStorage: [StorageUser], mail: Queue, push: Queue, videos: Queue, openReports: Int
    ) {
        self.version = version
        self.startedAt = startedAt
        self.database = database
        self.databaseBytes = databaseBytes
        self.people = people
        self.storageBytes = storageBytes
        self.topStorage = topStorage
        self.mail = mail
        self.push = push
        self.videos = videos
        self.openReports = openReports
    }
}

/// A person's part in running the instance: an admin runs it; a moderator handles every report,
/// suspends members and reads the audit log; a member does neither.
public enum InstanceRole: String, Codable, Sendable, CaseIterable {
    case admin, moderator, member
}

/// A person as the admins' list shows them.
public struct AdminUser: Codable, Sendable, Hashable {
    public var user: UserSummary
    public var email: String
    /// `admin`, `moderator` or `member` (`InstanceRole`).
    public var role: String
    public var suspended: Bool
    public var pending: Bool
    public var twoFactor: Bool
    public var storageBytes: Int64
    public var createdAt: Timestamp
    public init(
        user: UserSummary, email: String, role: String, suspended: Bool, pending: Bool, twoFactor: Bool,
        storageBytes: Int64, createdAt: Timestamp
    ) {
        self.user = user
        self.email = email
        self.role = role
        self.suspended = suspended
        self.pending = pending
        self.twoFactor = twoFactor
        self.storageBytes = storageBytes
        self.createdAt = createdAt
    }
}

/// `PUT /admin/users/{username}/role`.
public struct RoleRequest: Codable, Sendable {
    /// `admin`, `moderator` or `member` (`InstanceRole`).
    public var role: String
    public init(role: String) { self.role = role }
}
