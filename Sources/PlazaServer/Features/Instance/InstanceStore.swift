import Foundation
import PlazaAPI

/// The instance as its admins run it: its settings (`GET /about`, `PATCH /admin/instance`), who
/// may sign up (`admission`), invite links, and the sign-ups waiting for approval. Every admin's
/// write checks `is_admin` in its own transaction and is written to the audit log there.
package struct InstanceStore: Sendable {
    let db: Database
    let ids: IDGenerator
    let emails: EmailStore
    /// What a setting without a row is: the environment's name and mode, the mail sender.
    let defaults: Defaults
    /// Where invite links point (`PLAZA_PUBLIC_URL`).
    let baseURL: String
    /// The name as last read, for titles, mails and pushes.
    let name: InstanceName

    struct Defaults: Sendable {
        var name: String
        var registrations: RegistrationMode
        var contact: String
    }

    static let maxName = 60
    static let maxDescription = 2000
    static let maxRules = 50
    static let maxRule = 500
    static let maxContact = 200
    static let maxTerms = 20000
    static let maxReason = 1000
    static let maxInviteCode = 64
    static let maxInviteUses = 100_000
    /// A member's invites (admins' have no such limits): live ones at a time, uses each, and
    /// days each works (a week when none is asked for).
    static let maxMemberInvites = 20
    static let maxMemberInviteUses = 100
    static let maxMemberInviteDays = 30

    static let closed = PlazaError(.forbidden, "registrations_closed", "This server is not taking new sign-ups.")
    static let inviteRequired = PlazaError(
        .forbidden, "invite_required", "Signing up here needs an invite from a member.", field: "invite")
    static let invitesOff = PlazaError(
        .forbidden, "invites_disabled", "Only admins make invite links on this server.")
    static let inviteInvalid = PlazaError(
        .forbidden, "invite_required", "This invite is not valid: it may have expired or been used up.",
        field: "invite")

    // MARK: settings

    package func info() async throws -> InstanceInfo {
        let started = ContinuousClock.now
        let rows = try await db.read { try await $0.rows("SELECT key, value FROM instance_settings") }
        var values: [String: String] = [:]
        for row in rows {
            values[try row.decode(column: "key", as: String.self)] = try row.decode(column: "value", as: String.self)
        }
        let rules =
            values["rules"].flatMap { try? JSONDecoder().decode([InstanceRule].self, from: Data($0.utf8)) } ?? []
        name.set(values["name"] ?? defaults.name, readAt: started)
        return InstanceInfo(
            name: values["name"] ?? defaults.name, description: values["description"] ?? "", rules: rules,
            contact: values["contact"] ?? defaults.contact, terms: values["terms"] ?? "",
            registrations: values["registrations"].flatMap(RegistrationMode.init(rawValue:))
                ?? defaults.registrations,
            membersMayInvite: values["members_invite"] == "true", version: PlazaVersion.number)
    }

    /// The instance's name, read again when the last read is older than `InstanceName.maxAge`.
    func currentName() async throws -> String { await name.fresh() }

    /// Changes the settings `patch` names (admins only), in one transaction with its audit entry.
    func update(_ patch: InstancePatch, by admin: Int64) async throws -> InstanceInfo {
        let changes = try Self.validated(patch, current: try await info())
        guard !changes.isEmpty else { return try await info() }
        let ids = ids
        try await db.write { db in
            try await Self.requireAdmin(admin, on: db)
            for (key, value) in changes {
                try await db.exec(
                    """
                    INSERT INTO instance_settings (key, value) VALUES (\(bind: key), \(bind: value))
                    ON CONFLICT (key) DO UPDATE SET value = excluded.value
                    """)
            }
            try await AuditLog.record(
                .init(
                    actor: admin, action: "instance.update", targetType: "instance", targetID: 0,
                    note: changes.map(\.key).sorted().joined(separator: ", ")), ids: ids, on: db)
        }
        return try await info()
    }

    /// The rows to write for `patch`: each field checked, rules numbered (a rule keeps the id it
    /// was given when that id is one of the current rules').
    static func validated(_ patch: InstancePatch, current: InstanceInfo) throws -> [(key: String, value: String)] {
        var changes: [(key: String, value: String)] = []
        if let name = patch.name {
            let name = Validate.trustworthy(name, lines: false).trimmingCharacters(in: .whitespaces)
            guard (1...maxName).contains(name.count) else {
                throw PlazaError.invalid("name", "name must be 1 to \(maxName) characters on one line.")
            }
            changes.append(("name", name))
        }
        // An empty text clears the setting.
        for (key, value, max) in [
            ("description", patch.description, maxDescription), ("contact", patch.contact, maxContact),
            ("terms", patch.terms, maxTerms),
        ] {
            if let value { changes.append((key, try Validate.text(value, field: key, max: max) ?? "")) }
        }
        if let mode = patch.registrations { changes.append(("registrations", mode.rawValue)) }
        if let allowed = patch.membersMayInvite { changes.append(("members_invite", allowed ? "true" : "false")) }
        if let rules = patch.rules {
            changes.append(("rules", try rulesJSON(rules, current: current.rules)))
        }
        return changes
    }

    private static func rulesJSON(_ rules: [InstancePatch.Rule], current: [InstanceRule]) throws -> String {
        guard rules.count <= maxRules else { throw PlazaError.invalid("rules", "At most \(maxRules) rules.") }
        let known = Set(current.map(\.id))
        var next = (current.compactMap { Int($0.id) }.max() ?? 0) + 1
        var used = Set<String>()
        var result: [InstanceRule] = []
        for rule in rules {
            let text = try Validate.requiredText(rule.text, field: "rules", max: maxRule)
            let id: String
            if let given = rule.id, known.contains(given), !used.contains(given) {
                id = given
            } else if let same = current.first(where: { $0.text == text && !used.contains($0.id) }) {
                // A rule sent again without its id (the web form's lines) keeps it.
                id = same.id
            } else {
                id = String(next)
                next += 1
            }
            used.insert(id)
            result.append(InstanceRule(id: id, text: text))
        }
        return String(decoding: try JSONEncoder().encode(result), as: UTF8.self)
    }

    static func isAdmin(_ person: Int64, on db: Connection) async throws -> Bool {
        try await db.first("SELECT 1 AS ok WHERE \(ModerationStore.isAdmin(person))") != nil
    }

    static func requireAdmin(_ admin: Int64, on db: Connection) async throws {
        guard try await isAdmin(admin, on: db) else { throw ModerationStore.adminsOnly }
    }

    // MARK: who may sign up

    /// How a new account made through any door joins, by the instance's registration mode:
    /// refused (403) when closed, or when an invite is needed and none was given; an invite's
    /// validity is checked as the account is written (`AccountStore.createUser`). An invite
    /// also lets its holder past approval, as in Mastodon: someone on the server vouched for them.
    func admission(invite: String?, reason: String?) async throws -> AccountStore.Admission {
        switch try await info().registrations {
        case .open: return .open
        case .closed: throw Self.closed
        case .invite:
            guard let code = invite?.trimmingCharacters(in: .whitespaces), !code.isEmpty else {
                throw Self.inviteRequired
            }
            guard code.utf8.count <= Self.maxInviteCode else { throw Self.inviteInvalid }
            return .invited(code: code)
        case .approval:
            if let code = invite?.trimmingCharacters(in: .whitespaces), !code.isEmpty {
                guard code.utf8.count <= Self.maxInviteCode else { throw Self.inviteInvalid }
                return .invited(code: code)
            }
            return .pending(reason: try Validate.text(reason, field: "reason", max: Self.maxReason) ?? "")
        }
    }

    /// In the sign-up's transaction: uses one of the invite's uses, or refuses it (used up,
    /// expired, or made by someone suspended since: a suspended spammer's links stop at once).
    static func useInvite(_ code: String, now: Int64, on db: Connection) async throws {
        guard
            try await db.first(
                """
                UPDATE invites SET uses = uses + 1
                WHERE code = \(bind: code) AND (max_uses IS NULL OR uses < max_uses)
                    AND (expires_at IS NULL OR expires_at > \(bind: now))
                    AND created_by IN (SELECT id FROM users WHERE suspended_at IS NULL)
                RETURNING id
                """) != nil
        else { throw inviteInvalid }
    }
}
