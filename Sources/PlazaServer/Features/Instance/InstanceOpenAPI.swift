import OpenAPIKit
import PlazaAPI

/// What the instance says of itself, and its admins' settings, sign-ups and invites.
extension OpenAPIDocument {
    static var instanceOperations: [(String, Operation)] {
        [
            (
                "\(v1)/about",
                Operation(
                    method: .get,
                    summary: """
                        The instance: its name, description, rules, contact, terms, who may sign up (registrations) \
                        and Plaza's version
                        """,
                    auth: .none, response: ref("InstanceInfo"))
            ),
            (
                "\(v1)/admin/instance",
                Operation(
                    method: .patch,
                    summary: """
                        Change the instance's settings (admins only): the fields given, an empty text clears one; \
                        rules replaces the list (a rule given its id keeps it). In the audit log
                        """,
                    auth: .required, body: "InstancePatch", response: ref("InstanceInfo"), errors: [403, 422])
            ),
            (
                "\(v1)/admin/registrations",
                Operation(
                    method: .get, summary: "Sign-ups waiting for approval, oldest first (admins only)",
                    auth: .required, query: Params.page, response: pageOf("RegistrationRequest"), errors: [403])
            ),
            (
                "\(v1)/admin/registrations/{username}",
                Operation(
                    method: .put,
                    summary: "Approve a waiting sign-up (admins only): the person can sign in; they are mailed",
                    auth: .required, status: 204, errors: [403, 404])
            ),
            (
                "\(v1)/admin/registrations/{username}",
                Operation(
                    method: .delete,
                    summary: "Reject a waiting sign-up (admins only): the account is deleted; they are mailed",
                    auth: .required, status: 204, errors: [403, 404])
            ),
        ] + inviteOperations + dashboardOperations
    }

    private static var dashboardOperations: [(String, Operation)] {
        [
            (
                "\(v1)/admin/overview",
                Operation(
                    method: .get,
                    summary: """
                        How the instance is doing (admins only): version and start, database size, people, \
                        storage and who stores most, the mail and push outboxes, the video queue, open reports
                        """,
                    auth: .required, response: ref("AdminOverview"), errors: [403])
            ),
            (
                "\(v1)/admin/users",
                Operation(
                    method: .get,
                    summary: "People, newest first, or those whose username starts with q (admins only)",
                    auth: .required,
                    query: Params.page + [.query(name: "q", schema: .string(maxLength: 30))],
                    response: pageOf("AdminUser"), errors: [403])
            ),
            (
                "\(v1)/admin/users/{username}/role",
                Operation(
                    method: .put,
                    summary: "Make someone an admin, a moderator or a member (admins only; not oneself, 422)",
                    auth: .required, body: "RoleRequest", status: 204, errors: [403, 404, 422])
            ),
            (
                "\(v1)/admin/users/{username}/two-factor",
                Operation(
                    method: .delete,
                    summary: "Turn off someone's two-factor sign-in, when they lost their app and codes (admins only)",
                    auth: .required, status: 204, errors: [403, 404])
            ),
        ]
    }

    private static var inviteOperations: [(String, Operation)] {
        [
            (
                "\(v1)/admin/invites",
                Operation(
                    method: .get, summary: "Invites to sign up, newest first, with their uses (admins only)",
                    auth: .required, query: Params.page, response: pageOf("InstanceInvite"), errors: [403])
            ),
            (
                "\(v1)/admin/invites",
                Operation(
                    method: .post,
                    summary: """
                        Make an invite to sign up (admins only): maxUses sign-ups at most and until expiresAt, \
                        both optional. Its url opens the sign-up page with the code
                        """,
                    auth: .required, body: "CreateInviteRequest", bodyRequired: false, status: 201,
                    response: ref("InstanceInvite"), errors: [403, 422])
            ),
            (
                "\(v1)/admin/invites/{code}",
                Operation(
                    method: .delete, summary: "Revoke an invite (admins only)", auth: .required, status: 204,
                    errors: [403, 404])
            ),
            (
                "\(v1)/invites",
                Operation(
                    method: .get, summary: "One's own invites to sign up, newest first, with their uses",
                    auth: .required, query: Params.page, response: pageOf("InstanceInvite"))
            ),
            (
                "\(v1)/invites",
                Operation(
                    method: .post,
                    summary: """
                        Make an invite of one's own: admins always, members when the instance's membersMayInvite \
                        is on (else 403 invites_disabled). A member's works for at most \(InstanceStore.maxMemberInviteUses) \
                        people (10 when not given) and \(InstanceStore.maxMemberInviteDays) days (a week), \
                        \(InstanceStore.maxMemberInvites) working ones at a time (403 too_many_invites)
                        """,
                    auth: .required, body: "CreateInviteRequest", bodyRequired: false, status: 201,
                    response: ref("InstanceInvite"), errors: [403, 422])
            ),
            (
                "\(v1)/invites/{code}",
                Operation(
                    method: .delete, summary: "Revoke one of one's own invites", auth: .required, status: 204,
                    errors: [404])
            ),
        ]
    }
}

extension OpenAPIDocument.Schemas {
    private static func counts(_ names: [String]) -> [String: JSONSchema] {
        Dictionary(uniqueKeysWithValues: names.map { ($0, integer) })
    }

    static var instance: [String: JSONSchema] {
        let mode = enumeration(RegistrationMode.allCases.map(\.rawValue))
        let rule = object(["id": string(), "text": string(maxLength: InstanceStore.maxRule)], required: ["text"])
        return [
            "InstanceInfo": object(
                [
                    "name": string(), "description": string(),
                    "rules": array(object(["id": string(), "text": string()])), "contact": string(),
                    "terms": string(), "registrations": mode, "membersMayInvite": boolean, "version": string(),
                ],
                description: """
                    registrations: open (anyone), approval (an admin approves each sign-up; an invite's code \
                    lets one past), invite (with an invite's code), closed (nobody)
                    """),
            "InstancePatch": object(
                [
                    "name": string(maxLength: InstanceStore.maxName),
                    "description": string(maxLength: InstanceStore.maxDescription),
                    "rules": array(rule), "contact": string(maxLength: InstanceStore.maxContact),
                    "terms": string(maxLength: InstanceStore.maxTerms), "registrations": mode,
                    "membersMayInvite": boolean,
                ], required: []),
            "PendingRegistration": object(["status": enumeration(["pending"])]),
            "RegistrationRequest": object([
                "username": string(), "email": string(), "reason": string(), "createdAt": timestamp,
            ]),
            "RegistrationRequestPage": page("RegistrationRequest"),
            "InstanceInvite": object([
                "code": string(), "url": string(), "maxUses": nullable(integer), "uses": integer,
                "expiresAt": nullable(timestamp), "createdBy": nullable(OpenAPIDocument.ref("UserSummary")),
                "createdAt": timestamp,
            ]),
            "InstanceInvitePage": page("InstanceInvite"),
            "AdminOverview": object([
                "version": string(), "startedAt": timestamp, "database": enumeration(["sqlite", "postgres"]),
                "databaseBytes": integer, "people": object(counts(["total", "admins", "pending", "suspended"])),
                "storageBytes": integer,
                "topStorage": array(object(["user": OpenAPIDocument.ref("UserSummary"), "bytes": integer])),
                "mail": object(counts(["pending", "failed"])), "push": object(counts(["pending", "failed"])),
                "videos": object(counts(["pending", "failed"])), "openReports": integer,
            ]),
            "AdminUser": object([
                "user": OpenAPIDocument.ref("UserSummary"), "email": string(),
                "role": enumeration(InstanceRole.allCases.map(\.rawValue)),
                "suspended": boolean, "pending": boolean, "twoFactor": boolean, "storageBytes": integer,
                "createdAt": timestamp,
            ]),
            "AdminUserPage": page("AdminUser"),
            "RoleRequest": object(["role": enumeration(InstanceRole.allCases.map(\.rawValue))]),
        ]
    }
}
