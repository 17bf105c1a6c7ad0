import Foundation
import PlazaAPI
import Testing

@testable import PlazaMastodon
@testable import PlazaServer

/// The policy of Mastodon's door. Admins have no extra rights here; what a person may not see or
/// change is 404, as Mastodon says it; a token without the scope is 403.
extension MastodonAuthorizationMatrixTests {
    static let policy: [Row] =
        instanceAndAccounts() + relations() + statuses() + statusActions() + media()
        + notifications() + theRest() + filters() + lists() + emptyFeatures() + streams() + inbox()

    static func instanceAndAccounts() -> [Row] {
        var rows: [Row] = []
        // Registering an app changes no one's things: it shares the readers' world.
        rows.append(
            uniform(
                "POST \(v1)/apps", scope: nil, anon: 200,
                body: form("client_name=Matrix&redirect_uris=urn:ietf:wg:oauth:2.0:oob&scopes=read"), fixtures: .shared)
        )
        // A token or a revocation for an unknown client; the server's metadata.
        rows.append(
            ignoringTokens(
                "POST /oauth/token", 401, body: form("grant_type=client_credentials&client_id=nope&client_secret=nope"))
        )
        rows.append(
            ignoringTokens("POST /oauth/revoke", 403, body: form("client_id=nope&client_secret=nope&token=nope")))
        rows.append(ignoringTokens("GET /.well-known/oauth-authorization-server", 200))
        // Any token names its app: no scope is needed, so none is refused.
        rows.append(uniform("GET \(v1)/apps/verify_credentials", scope: nil, anon: 401))
        rows.append(uniform("GET \(v1)/instance", scope: nil, anon: 200))
        rows.append(uniform("GET \(v2)/instance", scope: nil, anon: 200))
        rows.append(uniform("GET \(v1)/instance/rules", scope: nil, anon: 200))
        rows.append(uniform("GET \(v1)/accounts/verify_credentials", scope: "profile", anon: 401))
        rows.append(
            uniform(
                "PATCH \(v1)/accounts/update_credentials", scope: "write:accounts", anon: 401,
                body: form("display_name=New+Name")))
        rows.append(
            row(
                "GET \(v1)/accounts/lookup", scope: "read:accounts", anon: 200, owner: 200, other: 200, blocked: 404,
                query: { "?acct=\($0.base.owner.username)" }))
        // The blocked person's answer leaves the owner out.
        rows.append(
            row(
                "GET \(v1)/accounts/relationships", scope: "read:follows", anon: 401, owner: 200, other: 200,
                query: { "?id[]=\($0.base.owner.id)" }))
        rows.append(
            row(
                "GET \(v1)/accounts/search", scope: "read:accounts", anon: 200, owner: 200, other: 200,
                query: { "?q=\($0.base.owner.username)" }))
        for path in ["", "/statuses", "/followers", "/following", "/featured_tags"] {
            rows.append(
                row(
                    "GET \(v1)/accounts/{id}\(path)", scope: path == "/statuses" ? "read:statuses" : "read:accounts",
                    anon: 200, owner: 200, other: 200, blocked: 404))
        }
        return rows
    }

    /// Following, blocking and muting the owner: not oneself (422), not someone hidden by a block.
    static func relations() -> [Row] {
        var rows: [Row] = []
        for action in ["follow", "unfollow", "block", "unblock", "mute", "unmute"] {
            let scope =
                action.hasSuffix("follow")
                ? "write:follows" : action.hasSuffix("block") ? "write:blocks" : "write:mutes"
            rows.append(
                row("POST \(v1)/accounts/{id}/\(action)", scope: scope, anon: 401, owner: 422, other: 200, blocked: 404)
            )
        }
        rows.append(uniform("GET \(v1)/follow_requests", scope: "read:follows", anon: 401))
        // Each person's own lists.
        for (path, scope) in [
            ("blocks", "read:blocks"), ("mutes", "read:mutes"), ("favourites", "read:favourites"),
            ("bookmarks", "read:bookmarks"),
        ] {
            rows.append(uniform("GET \(v1)/\(path)", scope: scope, anon: 401))
        }
        // Mastodon's report of the owner (`POST /api/v1/reports` naming an account_id comes here).
        rows.append(
            row(
                "POST \(v1)/mastodon/reports", scope: "write:reports", anon: 401, owner: 422, other: 200, blocked: 404,
                body: { .form("account_id=\($0.base.owner.id)&category=spam&comment=spam") }))
        // `other` asks to follow the locked owner: only the owner answers it; anyone else has no
        // such request.
        for action in ["authorize", "reject"] {
            rows.append(
                row(
                    "POST \(v1)/follow_requests/{id}/\(action)", "a request from another person",
                    scope: "write:follows",
                    anon: 401, owner: 200, other: 404,
                    prepare: { client, world in
                        try await client.mastodonMust(
                            200, .patch, "/accounts/update_credentials", token: world.token(.owner),
                            .form("locked=true"))
                        try await client.mastodonMust(
                            200, .post, "/accounts/\(world.base.owner.id)/follow", token: world.token(.other))
                    }))
        }
        return rows
    }

    static func statuses() -> [Row] {
        var rows: [Row] = []
        rows.append(uniform("GET \(v1)/timelines/home", scope: "read:statuses", anon: 401))
        rows.append(uniform("GET \(v1)/timelines/public", scope: "read:statuses", anon: 200))
        rows.append(uniform("GET \(v1)/timelines/tag/{tag}", scope: "read:statuses", anon: 200))
        // The owner's post carries the marker as a tag: a tag's own answers name it, which is no leak.
        let tag: [String: @Sendable (MastodonMatrixWorld) -> String] = ["tag": { _ in "ramen" }]
        rows.append(row("GET \(v1)/tags/{tag}", scope: "read", anon: 200, owner: 200, other: 200, parameters: tag))
        for action in ["follow", "unfollow"] {
            rows.append(
                row(
                    "POST \(v1)/tags/{tag}/\(action)", scope: "write:follows", anon: 401, owner: 200, other: 200,
                    parameters: tag))
        }
        rows.append(uniform("GET \(v1)/followed_tags", scope: "read:follows", anon: 401))
        rows.append(
            row("GET \(v1)/statuses/{id}", scope: "read:statuses", anon: 200, owner: 200, other: 200, blocked: 404))
        rows.append(
            row(
                "GET \(v1)/statuses/{id}", "a post for the owner's followers", scope: "read:statuses", anon: 404,
                owner: 200, other: 404, follower: 200, parameters: ["id": { $0.base.followersPost.id }]))
        rows.append(
            row(
                "GET \(v1)/statuses/{id}", "a post for the space's members", scope: "read:statuses", anon: 404,
                owner: 200, other: 404, member: 200, parameters: ["id": { $0.base.membersPost.id }]))
        rows.append(
            row(
                "GET \(v1)/statuses/{id}", "the owner's comment", scope: "read:statuses", anon: 200, owner: 200,
                other: 200, blocked: 404, parameters: ["id": { $0.base.ownerComment.id }]))
        rows.append(
            row(
                "GET \(v1)/statuses/{id}/context", scope: "read:statuses", anon: 200, owner: 200, other: 200,
                blocked: 404))
        rows.append(
            row(
                "GET \(v1)/statuses/{id}/favourited_by", scope: "read:accounts", anon: 200, owner: 200, other: 200,
                blocked: 404))
        rows.append(
            row(
                "GET \(v1)/statuses/{id}/reblogged_by", scope: "read:accounts", anon: 200, owner: 200, other: 200,
                blocked: 404))
        rows.append(
            row(
                "GET \(v1)/statuses/{id}/history", scope: "read:statuses", anon: 200, owner: 200, other: 200,
                blocked: 404))
        rows.append(
            row(
                "GET \(v1)/statuses/{id}/source", scope: "read:statuses", anon: 401, owner: 200, other: 200,
                blocked: 404))
        for action in ["reblog", "unreblog"] {
            rows.append(
                row(
                    "POST \(v1)/statuses/{id}/\(action)", scope: "write:statuses", anon: 401, owner: 200, other: 200,
                    blocked: 404))
        }
        let poll: [String: @Sendable (MastodonMatrixWorld) -> String] = ["id": { $0.base.post2.id }]
        rows.append(
            row(
                "GET \(v1)/polls/{id}", scope: "read:statuses", anon: 200, owner: 200, other: 200, blocked: 404,
                parameters: poll))
        rows.append(
            row(
                "POST \(v1)/polls/{id}/votes", scope: "write:statuses", anon: 401, owner: 422, other: 200, blocked: 404,
                body: form("choices[]=1"), parameters: poll))
        for action in ["pin", "unpin"] {
            rows.append(
                row(
                    "POST \(v1)/statuses/{id}/\(action)", scope: "write:accounts", anon: 401, owner: 200, other: 422,
                    blocked: 404))
        }
        rows.append(
            uniform(
                "POST \(v1)/statuses", scope: "write:statuses", anon: 401, body: form("status=hello+from+the+matrix")))
        rows.append(
            row(
                "POST \(v1)/statuses", "a reply to the owner's post", scope: "write:statuses", anon: 401, owner: 200,
                other: 200, blocked: 404, body: { .form("status=a+reply&in_reply_to_id=\($0.base.post.id)") }))
        rows.append(
            row(
                "POST \(v1)/statuses", "visibility direct", scope: "write:statuses", anon: 401, owner: 422, other: 422,
                body: form("status=psst&visibility=direct")))
        return rows
    }

    /// Changing the owner's status is the owner's alone; liking and saving it, anyone's who sees it.
    static func statusActions() -> [Row] {
        var rows: [Row] = []
        rows.append(
            row("DELETE \(v1)/statuses/{id}", scope: "write:statuses", anon: 401, owner: 200, other: 404))
        rows.append(
            row(
                "PUT \(v1)/statuses/{id}", scope: "write:statuses", anon: 401, owner: 200, other: 404,
                body: form("status=edited")))
        for action in ["favourite", "unfavourite", "bookmark", "unbookmark"] {
            rows.append(
                row(
                    "POST \(v1)/statuses/{id}/\(action)",
                    scope: action.hasSuffix("favourite") ? "write:favourites" : "write:bookmarks", anon: 401,
                    owner: 200, other: 200, blocked: 404))
        }
        rows.append(
            row(
                "POST \(v1)/statuses/{id}/favourite", "a post for the owner's followers", scope: "write:favourites",
                anon: 401, owner: 200, other: 404, follower: 200, parameters: ["id": { $0.base.followersPost.id }]))
        return rows
    }

    /// An upload is its owner's alone until it is on a post.
    static func media() -> [Row] {
        var rows: [Row] = []
        for path in ["\(v1)/media", "\(v2)/media"] {
            rows.append(
                uniform("POST \(path)", scope: "write:media", anon: 401, everyone: [200, 202], body: { _ in .upload }))
        }
        rows.append(row("GET \(v1)/media/{id}", scope: "read:statuses", anon: 401, owner: 200, other: 404))
        rows.append(
            row(
                "PUT \(v1)/media/{id}", scope: "write:media", anon: 401, owner: 200, other: 404,
                body: form("description=alt"), media: true))
        return rows
    }

    /// Each person's own notifications; someone else's is not found.
    static func notifications() -> [Row] {
        var rows: [Row] = []
        rows.append(uniform("GET \(v1)/notifications", scope: "read:notifications", anon: 401))
        rows.append(uniform("GET \(v2)/notifications", scope: "read:notifications", anon: 401))
        rows.append(row("GET \(v1)/notifications/{id}", scope: "read:notifications", anon: 401, owner: 200, other: 404))
        rows.append(uniform("POST \(v1)/notifications/clear", scope: "write:notifications", anon: 401))
        rows.append(
            row(
                "POST \(v1)/notifications/{id}/dismiss", scope: "write:notifications", anon: 401, owner: 200,
                other: 404))
        return rows
    }
}

extension MastodonAuthorizationMatrixTests {
    static func theRest() -> [Row] {
        var rows: [Row] = []
        // The blocked person's search leaves the owner's posts out.
        rows.append(
            row(
                "GET \(v2)/search", scope: "read:search", anon: 200, owner: 200, other: 200,
                query: { "?q=\($0.base.postMarker)" }))
        rows.append(uniform("GET \(v1)/markers", scope: "read:statuses", anon: 401))
        rows.append(
            uniform(
                "POST \(v1)/markers", scope: "write:statuses", anon: 401,
                body: { .form("home[last_read_id]=\($0.base.post.id)") }))
        rows.append(uniform("GET \(v1)/preferences", scope: "read:accounts", anon: 401))
        // Push: each token's own subscription; none has one here.
        rows.append(
            uniform(
                "POST \(v1)/push/subscription", "an endpoint on a private address", scope: "push", anon: 401,
                everyone: 422,
                body: form(
                    "subscription[endpoint]=https://10.1.2.3/p&subscription[keys][p256dh]=AA&subscription[keys][auth]=AA"
                )))
        rows.append(uniform("GET \(v1)/push/subscription", scope: "push", anon: 401, everyone: 404))
        rows.append(
            uniform(
                "PUT \(v1)/push/subscription", scope: "push", anon: 401, everyone: 404, body: form("data[policy]=all"))
        )
        rows.append(uniform("DELETE \(v1)/push/subscription", scope: "push", anon: 401))
        return rows
    }

    /// Filters v1 and v2: each person's own; another's is not found.
    static func filters() -> [Row] {
        var rows: [Row] = []
        rows.append(uniform("GET \(v1)/filters", scope: "read:filters", anon: 401))
        rows.append(uniform("GET \(v2)/filters", scope: "read:filters", anon: 401))
        rows.append(
            uniform(
                "POST \(v2)/filters", scope: "write:filters", anon: 401,
                body: form("title=matrix&context[]=home&keywords_attributes[][keyword]=zzmatrixzz")))
        rows.append(
            uniform(
                "POST \(v1)/filters", scope: "write:filters", anon: 401, body: form("phrase=zzmatrixzz&context[]=home"))
        )
        let own: [(String, String?)] = [
            ("GET \(v2)/filters/{id}", nil), ("PUT \(v2)/filters/{id}", "filter_action=hide"),
            ("DELETE \(v2)/filters/{id}", nil), ("GET \(v2)/filters/{id}/keywords", nil),
            ("POST \(v2)/filters/{id}/keywords", "keyword=another"), ("GET \(v2)/filters/keywords/{id}", nil),
            ("PUT \(v2)/filters/keywords/{id}", "keyword=another"), ("DELETE \(v2)/filters/keywords/{id}", nil),
            ("GET \(v1)/filters/{id}", nil), ("PUT \(v1)/filters/{id}", "irreversible=true"),
            ("DELETE \(v1)/filters/{id}", nil),
        ]
        for (operation, body) in own {
            let read = operation.hasPrefix("GET ")
            rows.append(
                row(
                    operation, scope: read ? "read:filters" : "write:filters", anon: 401, owner: 200, other: 404,
                    body: body.map(form)))
        }
        return rows
    }

    /// Lists are their owner's alone: anyone else's id is 404. Only people one follows go in a
    /// list, so the owner follows `other` before adding them. Notes are one's own; familiar
    /// followers are the caller's view.
    static func lists() -> [Row] {
        var rows: [Row] = []
        rows.append(uniform("GET \(v1)/lists", scope: "read:lists", anon: 401))
        rows.append(uniform("POST \(v1)/lists", scope: "write:lists", anon: 401, body: form("title=matrix")))
        let followOther: @Sendable (MatrixClient, MastodonMatrixWorld) async throws -> Void = { client, world in
            try await client.mastodonMust(
                200, .post, "/accounts/\(world.base.other.id)/follow", token: world.token(.owner))
        }
        let own: [(String, String?)] = [
            ("GET \(v1)/lists/{id}", nil), ("PUT \(v1)/lists/{id}", "title=renamed&exclusive=true"),
            ("DELETE \(v1)/lists/{id}", nil), ("GET \(v1)/lists/{id}/accounts", nil),
            ("POST \(v1)/lists/{id}/accounts", "account_ids[]="),
            ("DELETE \(v1)/lists/{id}/accounts", "account_ids[]="),
            ("GET \(v1)/timelines/list/{id}", nil),
        ]
        for (operation, body) in own {
            let read = operation.hasPrefix("GET ")
            var form: (@Sendable (MastodonMatrixWorld) -> MatrixBody)?
            if let body {
                // `account_ids[]=`: the person the owner follows in the row's `prepare`.
                form = { world in .form(body.hasSuffix("=") ? body + world.base.other.id : body) }
            }
            rows.append(
                row(
                    operation, scope: read ? "read:lists" : "write:lists", anon: 401, owner: 200, other: 404,
                    body: form, prepare: operation.hasPrefix("POST ") ? followOther : nil))
        }
        rows.append(
            row(
                "GET \(v1)/accounts/{id}/lists", scope: "read:lists", anon: 401, owner: 200, other: 200, blocked: 404))
        rows.append(
            row(
                "POST \(v1)/accounts/{id}/note", scope: "write:accounts", anon: 401, owner: 200, other: 200,
                blocked: 404, body: form("comment=a+note")))
        rows.append(
            row(
                "GET \(v1)/accounts/familiar_followers", scope: "read:follows", anon: 401, owner: 200, other: 200,
                query: { "?id[]=\($0.base.owner.id)" }))
        return rows
    }

    /// Features Plaza does not have: empty answers, behind the scope Mastodon asks for.
    static func emptyFeatures() -> [Row] {
        var rows: [Row] = []
        let scopes: [(String, String?)] = [
            ("\(v1)/custom_emojis", nil), ("\(v1)/announcements", nil),
            ("\(v1)/trends", nil),
            ("\(v1)/trends/tags", nil), ("\(v1)/trends/statuses", nil), ("\(v1)/trends/links", nil),
            ("\(v1)/conversations", "read:statuses"),
            ("\(v1)/scheduled_statuses", "read:statuses"), ("\(v1)/endorsements", "read:accounts"),
            ("\(v1)/featured_tags", "read:accounts"), ("\(v1)/domain_blocks", "read:blocks"),
            ("\(v1)/featured_tags/suggestions", "read:accounts"),
        ]
        for (path, scope) in scopes {
            rows.append(uniform("GET \(path)", scope: scope, anon: scope == nil ? 200 : 401))
        }
        rows.append(uniform("GET \(v1)/streaming/health", scope: nil, anon: 200))
        // A plain GET is no WebSocket upgrade (the upgrades are in MastodonTests).
        rows.append(uniform("GET \(v1)/streaming", scope: nil, anon: 400, everyone: 400))
        return rows
    }

    /// Every stream needs a person's token (docs/mastodon.md); only the refusals are run.
    static func streams() -> [Row] {
        var rows: [Row] = []
        let scopes = [
            ("user", "read:statuses"), ("user/notification", "read:notifications"), ("public", "read:statuses"),
            ("public/local", "read:statuses"), ("public/media", "read:statuses"),
            ("public/local/media", "read:statuses"),
        ]
        for (path, scope) in scopes {
            rows.append(
                row(
                    "GET \(v1)/streaming/\(path)", scope: scope, anon: 401, owner: 200, other: 200))
        }
        return rows
    }
}

extension MastodonAuthorizationMatrixTests {
    /// Notification counts and policy (each person's own), suggestions (each person's own), and
    /// the instance's public bits.
    static func inbox() -> [Row] {
        var rows: [Row] = []
        for version in [v1, v2] {
            rows.append(uniform("GET \(version)/notifications/unread_count", scope: "read:notifications", anon: 401))
            rows.append(uniform("GET \(version)/notifications/policy", scope: "read:notifications", anon: 401))
            rows.append(
                uniform(
                    "PATCH \(version)/notifications/policy", scope: "write:notifications", anon: 401,
                    body: form(version == v2 ? "for_not_following=accept" : "filter_not_following=false")))
            rows.append(uniform("GET \(version)/suggestions", scope: "read", anon: 401))
        }
        rows.append(uniform("GET \(v1)/notifications/requests", scope: "read:notifications", anon: 401))
        // The owner's group; someone else's is not found.
        rows.append(
            row(
                "GET \(v2)/notifications/{group_key}", scope: "read:notifications", anon: 401, owner: 200, other: 404,
                parameters: ["group_key": { "plaza-\($0.base.notificationID)" }]))
        for path in ["peers", "activity", "domain_blocks", "translation_languages", "extended_description"] {
            rows.append(uniform("GET \(v1)/instance/\(path)", scope: nil, anon: 200))
        }
        rows.append(uniform("GET \(v1)/instance/languages", scope: nil, anon: 200))
        return rows
    }
}
