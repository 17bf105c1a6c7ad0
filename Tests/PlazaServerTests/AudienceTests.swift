import Foundation
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// Who reads a post (its audience) and who is in a space (open, closed, private; roles,
/// requests, invites, bans): the rules of step 11, on every read path.
@Suite("Audiences and closed spaces")
struct AudienceTests {
    /// Ana's course: a space she owns, with the given visibility.
    private func course(_ api: TestAPI, _ owner: Account, _ slug: String, _ visibility: SpaceVisibility) async throws {
        let response = try await api.call(
            .post, "/spaces", as: owner, json: CreateSpaceRequest(slug: slug, name: slug, visibility: visibility))
        #expect(response.status == .created, "\(response.text)")
        #expect(try response.decode(Space.self).visibility == visibility)
    }

    /// Ana's open course cs101, with Bob a member and Eve a follower of Ana but not a member.
    private func openCourse(_ api: TestAPI) async throws -> (ana: Account, bob: Account, eve: Account) {
        let (ana, bob, eve) = try await api.register("ana", "bob", "eve")
        try await course(api, ana, "cs101", .open)
        #expect(try await api.call(.put, "/spaces/cs101/membership", as: bob).status == .ok)
        try await api.follow(eve, "ana")
        return (ana, bob, eve)
    }

    private func ids(_ api: TestAPI, _ path: String, as account: Account? = nil) async throws -> [String] {
        try await api.page(path, as: account, of: Post.self).items.map(\.id)
    }

    @Test func aFollowersPostIsReadByFollowersAndTheAuthorOnly() async throws {
        try await withApp { api async throws in
            let (ana, ben, cat) = try await api.register("ana", "ben", "cat")
            try await api.follow(ben, "ana")
            // MUT
            let post = try await api.post(
                ana, CreatePostRequest(kind: .text, body: "friends only", audience: .followers))
            // validate
            #expect(post.audience == .followers)
            #expect(try await api.get("/posts/\(post.id)", as: ben).status == .ok)
            #expect(try await api.get("/posts/\(post.id)", as: ana).status == .ok)
            #expect(try await api.get("/posts/\(post.id)", as: cat).status == .notFound)
            #expect(try await api.get("/posts/\(post.id)").status == .notFound)
            #expect(try await ids(api, "/feed/home", as: ben) == [post.id])
            #expect(try await ids(api, "/feed/global", as: cat).isEmpty)
            #expect(try await ids(api, "/feed/global").isEmpty)
            #expect(try await ids(api, "/users/ana/posts", as: ben) == [post.id])
            #expect(try await ids(api, "/users/ana/posts", as: cat).isEmpty)
            #expect(try await ids(api, "/search/posts?q=friends", as: cat).isEmpty)
            #expect(try await ids(api, "/search/posts?q=friends", as: ben) == [post.id])
            // The heatmap counts only the activity its viewer may read.
            _ = try await api.post(
                ana,
                CreatePostRequest(
                    kind: .activity, activity: ActivityInput(type: "Run", progress: 100), audience: .followers))
            for (viewer, count) in [(ben, 1), (ana, 1), (cat, 0), (nil, 0)] {
                let days = try await api.get("/users/ana/activity?days=1", as: viewer).decode(ActivityHeatmap.self).days
                #expect(days == [.init(date: Timestamp.now.day, completed: count, posted: count)], "\(count)")
            }
            // Commenting and liking need reading.
            #expect(
                try await api.call(.post, "/posts/\(post.id)/comments", as: cat, json: CreateCommentRequest(body: "hi"))
                    .status == .notFound)
            #expect(try await api.call(.put, "/posts/\(post.id)/like", as: cat).status == .notFound)
            // Unfollowing loses it; widening gives it to everyone.
            #expect(try await api.call(.delete, "/users/ana/follow", as: ben).status == .ok)
            #expect(try await api.get("/posts/\(post.id)", as: ben).status == .notFound)
            let widened = try await api.call(
                .patch, "/posts/\(post.id)", as: ana, json: UpdatePostRequest(audience: .public))
            #expect(try widened.decode(Post.self).audience == .public)
            #expect(try await api.get("/posts/\(post.id)").status == .ok)
        }
    }

    @Test func membersPostsNeedASpaceAndClosedSpacesMakeThem() async throws {
        try await withApp { api async throws in
            let (ana, ben) = try await api.register("ana", "ben")
            let noSpace = try await api.call(
                .post, "/posts", as: ana, json: CreatePostRequest(kind: .text, body: "x", audience: .members))
            #expect(noSpace.status == .unprocessableContent)
            #expect(noSpace.text.contains("audience"))
            let bad = try await api.call(
                .post, "/posts", as: ana, raw: #"{"kind":"text","body":"x","audience":"friends"}"#)
            #expect(bad.status == .badRequest || bad.status == .unprocessableContent)
            try await course(api, ana, "cs101", .closed)
            // Asked public, made members-only: a closed space's posts are for its members.
            let post = try await api.post(
                ana, CreatePostRequest(kind: .text, body: "homework", spaces: ["cs101"], audience: .public))
            #expect(post.audience == .members)
            let widen = try await api.call(
                .patch, "/posts/\(post.id)", as: ana, json: UpdatePostRequest(audience: .public))
            #expect(try widen.decode(Post.self).audience == .members)
            // Only members post in a closed space; a private one is not there for outsiders.
            let outsider = try await api.call(
                .post, "/posts", as: ben, json: CreatePostRequest(kind: .text, body: "hi", spaces: ["cs101"]))
            #expect(outsider.status == .forbidden)
            try await course(api, ana, "secret", .private)
            let hidden = try await api.call(
                .post, "/posts", as: ben, json: CreatePostRequest(kind: .text, body: "hi", spaces: ["secret"]))
            #expect(hidden.status == .unprocessableContent)
            #expect(hidden.text.contains("unknown_space"))
        }
    }

    /// The issue's check: a members-only post in a closed space reaches no non-member by any
    /// read path. Eve (a follower of the author, not a member) met the post while the space was
    /// open: she viewed, picked, saved, liked and commented on it, was mentioned in it, and her
    /// stream heard of it. Then the space closes.
    @Test func aClosedSpacesPostReachesNoNonMemberByAnyPath() async throws {
        try await withLiveApp { api, port async throws in
            let (ana, bob, eve) = try await openCourse(api)
            let stream = try await EventStreamClient.connect(port: port, token: eve.token)
            defer { stream.close() }
            let ready = try #require(await stream.waitFor(1).first)
            let photo = try await api.uploaded(try MediaFixtures.sample(.jpeg), as: ana)
            let post = try await api.post(
                ana,
                CreatePostRequest(
                    kind: .photo, title: "Exam zebra", body: "zebra question for @eve", spaces: ["cs101"],
                    mediaIds: [photo.id]))
            // The post and the mention of Eve in it.
            let heard = await stream.waitFor(3)
            #expect(Set(heard.map(\.event)) == ["ready", "post.created", "notification"])
            #expect(try heard.first { $0.event == "post.created" }?.decode(Post.self).id == post.id)
            #expect(try await api.call(.post, "/posts/\(post.id)/view", as: eve).status == .noContent)
            #expect(try await api.call(.post, "/me/history/\(post.id)/click", as: eve).status == .noContent)
            #expect(try await api.call(.put, "/posts/\(post.id)/like", as: eve).status == .ok)
            #expect(
                try await api.call(.post, "/posts/\(post.id)/comments", as: eve, json: CreateCommentRequest(body: "hm"))
                    .status == .created)
            let saved = try await api.call(.post, "/collections", as: eve, json: CollectionRequest(name: "Saved"))
                .decode(SavedCollection.self)
            #expect(
                try await api.call(
                    .post, "/collections/\(saved.id)/items", as: eve, json: SaveItemRequest(postId: post.id)
                ).status == .created)
            let mediaURL = try #require(post.media.first?.variants.medium)
            let publicCopy = try await api.fetch(mediaURL, as: eve)
            #expect(publicCopy.status == .ok)
            #expect(publicCopy.headers[.cacheControl]?.hasPrefix("public") == true)
            #expect(try await api.page("/me/notifications", as: eve, of: PlazaAPI.Notification.self).items.count == 1)

            // MUT
            let closed = try await api.call(
                .patch, "/spaces/cs101", as: ana, json: UpdateSpaceRequest(visibility: .closed))
            #expect(try closed.decode(Space.self).visibility == .closed)

            // validate: every read path, for Eve and for anonymous visitors.
            for viewer in [eve, nil] {
                #expect(try await api.get("/posts/\(post.id)", as: viewer).status == .notFound, "detail")
                #expect(try await api.get("/posts/\(post.id)/comments", as: viewer).status == .notFound, "comments")
                #expect(try await api.get("/posts/\(post.id)/likes", as: viewer).status == .notFound, "likers")
                #expect(try await ids(api, "/feed/global", as: viewer).isEmpty, "global feed")
                #expect(try await ids(api, "/spaces/cs101/feed", as: viewer).isEmpty, "space feed")
                #expect(try await ids(api, "/users/ana/posts", as: viewer).isEmpty, "profile")
                #expect(try await ids(api, "/search/posts?q=zebra", as: viewer).isEmpty, "search")
                #expect(try await api.fetch(mediaURL, as: viewer).status == .notFound, "media bytes")
                let page = try await api.page(.get, "/p/\(post.id)", cookie: viewer?.cookie)
                #expect(page.status == .notFound, "web post page")
                #expect(!(try await api.page(.get, "/s/cs101", cookie: viewer?.cookie).text.contains("zebra")))
                #expect(!(try await api.page(.get, "/u/ana", cookie: viewer?.cookie).text.contains("zebra")))
            }
            #expect(try await ids(api, "/feed/home", as: eve).isEmpty, "home feed")
            let history = try await api.page("/me/history", as: eve, of: HistoryItem.self).items
            #expect(history.isEmpty, "history")
            #expect(try await api.page("/me/recommended", as: eve, of: HistoryItem.self).items.isEmpty, "recommended")
            let savedItems = try await api.page("/search/saved?q=zebra", as: eve, of: CollectionItem.self).items
            #expect(savedItems.isEmpty, "saved search")
            let items = try await api.page("/collections/\(saved.id)/items", as: eve, of: CollectionItem.self).items
            #expect(items.allSatisfy { $0.post == nil }, "collection items")
            #expect(
                try await api.page("/me/notifications", as: eve, of: PlazaAPI.Notification.self).items.isEmpty,
                "notifications")
            #expect(!(try await api.page(.get, "/notifications", cookie: eve.cookie).text.contains("zebra")))
            let replay = try await EventStreamClient.connect(port: port, token: eve.token, lastEventID: ready.id)
            defer { replay.close() }
            #expect(await replay.waitFor(1).map(\.event) == ["ready"], "stream replay")
            // A member still reads it everywhere.
            #expect(try await api.get("/posts/\(post.id)", as: bob).status == .ok)
            #expect(try await ids(api, "/spaces/cs101/feed", as: bob) == [post.id])
            #expect(try await ids(api, "/search/posts?q=zebra", as: bob) == [post.id])
            let bobsCopy = try await api.fetch(mediaURL, as: bob)
            #expect(bobsCopy.status == .ok)
            #expect(bobsCopy.headers[.cacheControl] == "private, no-cache", "no shared cache keeps members' media")
        }
    }

    @Test func narrowingAPostTellsTheStreamsOfThoseWhoLostIt() async throws {
        try await withLiveApp { api, port async throws in
            let (ana, bob, eve) = try await openCourse(api)
            let bobs = try await EventStreamClient.connect(port: port, token: bob.token)
            let eves = try await EventStreamClient.connect(port: port, token: eve.token)
            defer {
                bobs.close()
                eves.close()
            }
            _ = await bobs.waitFor(1)
            _ = await eves.waitFor(1)
            let post = try await api.post(ana, CreatePostRequest(kind: .text, body: "for all", spaces: ["cs101"]))
            #expect(try await eves.waitFor(2).last?.decode(Post.self).id == post.id)
            #expect(try await bobs.waitFor(2).last?.decode(Post.self).id == post.id)
            // MUT
            _ = try await api.call(.patch, "/posts/\(post.id)", as: ana, json: UpdatePostRequest(audience: .members))
            // validate: Eve (a follower, not a member) is told to drop it; Bob sees the update.
            let eveAll = await eves.waitFor(3)
            #expect(eveAll.last?.event == "post.deleted")
            #expect(eveAll.last?.data.contains(post.id) == true)
            let bobAll = await bobs.waitFor(3)
            #expect(bobAll.last?.event == "post.updated")
            #expect(try bobAll.last?.decode(Post.self).audience == .members)
            // Nothing more for Eve about it, and no deletion for Bob: the next event each gets is the sentinel.
            _ = try await api.call(.patch, "/posts/\(post.id)", as: ana, json: UpdatePostRequest(body: .set("edited")))
            let sentinel = try await api.post(ana, CreatePostRequest(kind: .text, body: "sentinel", spaces: ["cs101"]))
            #expect(try await eves.waitFor(4).last?.decode(Post.self).id == sentinel.id)
            let bobNext = await bobs.waitFor(5)
            #expect(bobNext.suffix(2).map(\.event) == ["post.updated", "post.created"])
        }
    }

    /// Taking a members' post out of a space narrows it for that space's members, whose streams
    /// are told to drop it; the members of the space it stays in see the update.
    @Test func aPostTakenOutOfASpaceIsDroppedByThatSpacesMembers() async throws {
        try await withLiveApp { api, port async throws in
            let (ana, bob, cat) = try await api.register("ana", "bob", "cat")
            try await course(api, ana, "cs101", .open)
            try await course(api, ana, "math", .open)
            #expect(try await api.call(.put, "/spaces/cs101/membership", as: bob).status == .ok)
            #expect(try await api.call(.put, "/spaces/math/membership", as: cat).status == .ok)
            let bobs = try await EventStreamClient.connect(port: port, token: bob.token)
            let cats = try await EventStreamClient.connect(port: port, token: cat.token)
            defer {
                bobs.close()
                cats.close()
            }
            _ = await bobs.waitFor(1)
            _ = await cats.waitFor(1)
            let post = try await api.post(
                ana, CreatePostRequest(kind: .text, body: "both", spaces: ["cs101", "math"], audience: .members))
            #expect(try await bobs.waitFor(2).last?.decode(Post.self).id == post.id)
            #expect(try await cats.waitFor(2).last?.decode(Post.self).id == post.id)
            // MUT
            let moved = try await api.call(
                .patch, "/posts/\(post.id)", as: ana, json: UpdatePostRequest(spaces: ["math"]))
            // validate
            #expect(try moved.decode(Post.self).spaces.map(\.slug) == ["math"])
            let bobAll = await bobs.waitFor(3)
            #expect(bobAll.last?.event == "post.deleted")
            #expect(bobAll.last?.data.contains(post.id) == true)
            #expect(try await api.get("/posts/\(post.id)", as: bob).status == .notFound)
            let catAll = await cats.waitFor(3)
            #expect(catAll.last?.event == "post.updated")
        }
    }

    @Test func closedSpacesAreJoinedByApprovalAndPrivateOnesByInvite() async throws {
        try await withApp { api async throws in
            let (ana, mod, ben, cat) = try await api.register("ana", "mod", "ben", "cat")
            try await course(api, ana, "cs101", .closed)
            // Anyone finds a closed space, but joins by asking.
            #expect(try await api.page("/spaces", as: ben, of: Space.self).items.map(\.slug) == ["cs101"])
            let join = try await api.call(.put, "/spaces/cs101/membership", as: ben)
            #expect(join.status == .forbidden && join.text.contains("approval_needed"))
            #expect(try await api.call(.post, "/spaces/cs101/requests", as: ben).status == .accepted)
            #expect(try await api.call(.post, "/spaces/cs101/requests", as: ben).status == .accepted, "idempotent")
            #expect(try await api.get("/spaces/cs101", as: ben).decode(Space.self).viewer.requested)
            #expect(try await api.call(.post, "/spaces/cs101/requests").status == .unauthorized)
            // Only moderators see and answer requests; the owner makes moderators.
            #expect(try await api.get("/spaces/cs101/requests", as: ben).status == .forbidden)
            #expect(try await api.call(.post, "/spaces/cs101/requests", as: mod).status == .accepted)
            #expect(try await api.call(.put, "/spaces/cs101/requests/mod", as: ana).status == .noContent)
            let promote = try await api.call(
                .patch, "/spaces/cs101/members/mod", as: ana, json: UpdateMemberRequest(role: .moderator))
            #expect(try promote.decode(SpaceMember.self).role == .moderator)
            #expect(
                try await api.call(
                    .patch, "/spaces/cs101/members/ana", as: mod, json: UpdateMemberRequest(role: .member)
                )
                .status == .forbidden, "a moderator does not change roles")
            let queue = try await api.page("/spaces/cs101/requests", as: mod, of: JoinRequest.self).items
            #expect(queue.map(\.user.username) == ["ben"])
            #expect(try await api.call(.put, "/spaces/cs101/requests/cat", as: mod).status == .notFound)
            #expect(try await api.call(.put, "/spaces/cs101/requests/ben", as: mod).status == .noContent)
            let space = try await api.get("/spaces/cs101", as: ben).decode(Space.self)
            #expect(space.viewer.member && space.viewer.role == .member && !space.viewer.requested)
            // Denied: stays out.
            #expect(try await api.call(.post, "/spaces/cs101/requests", as: cat).status == .accepted)
            #expect(try await api.call(.delete, "/spaces/cs101/requests/cat", as: mod).status == .noContent)
            #expect(try await api.get("/spaces/cs101", as: cat).decode(Space.self).viewer.member == false)
            // Members are listed to members only.
            let members = try await api.page("/spaces/cs101/members", as: ben, of: SpaceMember.self).items
            #expect(members.map(\.user.username) == ["ana", "mod", "ben"])
            #expect(members.map(\.role) == [.owner, .moderator, .member])
            #expect(try await api.get("/spaces/cs101/members", as: cat).status == .forbidden)

            // A private space: unlisted, 404 to outsiders, joined with an invite.
            try await course(api, ana, "secret", .private)
            #expect(try await api.page("/spaces", as: cat, of: Space.self).items.map(\.slug) == ["cs101"])
            #expect(try await api.get("/spaces/secret", as: cat).status == .notFound)
            #expect(try await api.get("/spaces/secret").status == .notFound)
            #expect(try await api.call(.post, "/spaces/secret/requests", as: cat).status == .notFound)
            #expect(
                try await api.call(.post, "/spaces/cs101/invites", as: ben, json: CreateInviteRequest()).status
                    == .forbidden)
            let invite = try await api.call(
                .post, "/spaces/secret/invites", as: ana, json: CreateInviteRequest(maxUses: 1)
            ).decode(SpaceInvite.self)
            #expect(invite.url.hasSuffix("/join/\(invite.code)"))
            let joined = try await api.call(.post, "/spaces/join/\(invite.code)", as: cat)
            #expect(try joined.decode(Space.self).viewer.member)
            #expect(try await api.call(.post, "/spaces/join/\(invite.code)", as: cat).status == .ok, "a member again")
            #expect(try await api.call(.post, "/spaces/join/\(invite.code)", as: ben).status == .notFound, "used up")
            #expect(try await api.call(.post, "/spaces/join/nonsense-code-that-is-long", as: ben).status == .notFound)
            let expired = try await api.call(
                .post, "/spaces/secret/invites", as: ana,
                json: CreateInviteRequest(expiresAt: Timestamp(milliseconds: Timestamp.now.milliseconds - 1_000)))
            #expect(expired.status == .unprocessableContent)
            #expect(try await api.get("/spaces/secret", as: cat).status == .ok)
            // The owner cannot leave; a member leaves and a private space is gone from their view.
            #expect(try await api.call(.delete, "/spaces/secret/membership", as: ana).status == .unprocessableContent)
            let left = try await api.call(.delete, "/spaces/secret/membership", as: cat)
            #expect(try left.decode(Space.self).viewer.member == false)
            #expect(try await api.get("/spaces/secret", as: cat).status == .notFound)
        }
    }

    @Test func moderatorsRemovePostsAndBanMembersAndEachActionIsAudited() async throws {
        try await withApp { api async throws in
            let (ana, mod, ben) = try await api.register("ana", "mod", "ben")
            try await course(api, ana, "memes", .open)
            for person in [mod, ben] {
                #expect(try await api.call(.put, "/spaces/memes/membership", as: person).status == .ok)
            }
            _ = try await api.call(
                .patch, "/spaces/memes/members/mod", as: ana, json: UpdateMemberRequest(role: .moderator))
            let post = try await api.post(ben, CreatePostRequest(kind: .text, body: "spam spam", spaces: ["memes"]))
            // An ordinary member cannot remove it; a moderator takes it out of the space.
            #expect(try await api.call(.delete, "/spaces/memes/posts/\(post.id)", as: ben).status == .forbidden)
            #expect(try await api.call(.delete, "/spaces/memes/posts/\(post.id)", as: mod).status == .noContent)
            #expect(try await ids(api, "/spaces/memes/feed").isEmpty)
            #expect(try await api.get("/posts/\(post.id)").decode(Post.self).spaces.isEmpty, "still Ben's post")
            #expect(try await api.call(.delete, "/spaces/memes/posts/\(post.id)", as: mod).status == .notFound)
            // Ban: out, cannot rejoin or post there; the owner and moderators-by-moderators are safe.
            #expect(try await api.call(.put, "/spaces/memes/bans/ana", as: mod).status == .unprocessableContent)
            #expect(try await api.call(.put, "/spaces/memes/bans/ben", as: ben).status == .forbidden)
            #expect(try await api.call(.put, "/spaces/memes/bans/ben", as: mod).status == .noContent)
            #expect(try await api.get("/spaces/memes", as: ben).decode(Space.self).viewer.member == false)
            let rejoin = try await api.call(.put, "/spaces/memes/membership", as: ben)
            #expect(rejoin.status == .forbidden && rejoin.text.contains("banned"))
            let again = try await api.call(
                .post, "/posts", as: ben, json: CreatePostRequest(kind: .text, body: "back", spaces: ["memes"]))
            #expect(again.status == .forbidden)
            #expect(try await api.call(.delete, "/spaces/memes/bans/ben", as: mod).status == .noContent)
            #expect(try await api.call(.put, "/spaces/memes/membership", as: ben).status == .ok)
            #expect(try await api.call(.delete, "/spaces/memes/members/ben", as: mod).status == .noContent)
            #expect(try await api.call(.delete, "/spaces/memes/members/ben", as: mod).status == .notFound)
            let actions = try await api.withDatabase { db in
                try await db.read { db in
                    try await db.rows("SELECT action FROM audit_log ORDER BY id").map {
                        try $0.decode(column: "action", as: String.self)
                    }
                }
            }
            #expect(actions == ["member.moderator", "post.remove", "space.ban", "space.unban", "member.remove"])
        }
    }
}

@Suite("Audiences and closed spaces on the web")
struct AudienceWebTests {
    @Test func moderatorsManageTheirSpaceOnItsPageAndInvitesOpenAJoinPage() async throws {
        try await withApp { api async throws in
            let (ana, ben) = try await api.register("ana", "ben")
            #expect(
                try await api.call(
                    .post, "/spaces", as: ana,
                    json: CreateSpaceRequest(slug: "cs101", name: "CS 101", visibility: .closed)
                ).status == .created)
            // A non-member is offered to ask; the owner to manage.
            let bensView = try await api.page(.get, "/s/cs101", cookie: ben.cookie).text
            #expect(bensView.contains("Ask to join") && !bensView.contains("/s/cs101/manage"))
            #expect(try await api.page(.get, "/s/cs101", cookie: ana.cookie).text.contains("/s/cs101/manage"))
            #expect(try await api.call(.post, "/spaces/cs101/requests", as: ben).status == .accepted)
            #expect(try await api.page(.get, "/s/cs101", cookie: ben.cookie).text.contains("Requested"))
            // MUT
            let manage = try await api.page(.get, "/s/cs101/manage", cookie: ana.cookie)
            // validate
            #expect(manage.status == .ok)
            #expect(manage.text.contains("PUT /api/v1/spaces/cs101/requests/ben"))
            #expect(manage.text.contains("POST /api/v1/spaces/cs101/invites"))
            #expect(try await api.page(.get, "/s/cs101/manage", cookie: ben.cookie).status == .forbidden)
            #expect(try await api.page(.get, "/s/cs101/manage").status == .seeOther)
            let invite = try await api.call(.post, "/spaces/cs101/invites", as: ana, json: CreateInviteRequest())
                .decode(SpaceInvite.self)
            let join = try await api.page(.get, invite.url, cookie: ben.cookie)
            #expect(join.status == .ok && join.text.contains("POST /api/v1/spaces/join/\(invite.code)"))
            #expect(try await api.page(.get, "/join/not*a*code*of*ours*at*all", cookie: ben.cookie).status == .notFound)
            // The composer offers the audiences; a members' post carries its tag on its card.
            let compose = try await api.page(.get, "/compose", cookie: ana.cookie).text
            #expect(compose.contains(#"value="followers""#) && compose.contains(#"value="members""#))
            let post = try await api.post(ana, CreatePostRequest(kind: .text, body: "for the class", spaces: ["cs101"]))
            let card = try await api.page(.get, "/p/\(post.id)", cookie: ana.cookie).text
            #expect(card.contains(#"title="Who can see it">Members<"#))
            let edit = try await api.page(.get, "/p/\(post.id)/edit", cookie: ana.cookie).text
            #expect(edit.contains(#"value="members" selected"#))
        }
    }
}
