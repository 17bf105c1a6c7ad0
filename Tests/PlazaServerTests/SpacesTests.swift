import Hummingbird
import Testing

@testable import PlazaAPI
@testable import PlazaServer

@Suite("Spaces")
struct SpacesTests {
    func space(_ api: TestAPI, _ account: Account, _ slug: String, name: String? = nil) async throws -> Space {
        let response = try await api.call(
            .post, "/spaces", as: account, json: CreateSpaceRequest(slug: slug, name: name ?? slug.uppercased()))
        #expect(response.status == .created, "create space: \(response.text)")
        return try response.decode(Space.self)
    }

    @Test func creatorOwnsAndJoinsTheSpaceAndOnlyTheOwnerEdits() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            // MUT
            let cs = try await space(api, ana, "CS101", name: "Intro to CS")
            // validate
            #expect(cs.slug == "cs101" && cs.name == "Intro to CS" && cs.owner.username == "ana")
            #expect(cs.counts == Space.Counts(members: 1, posts: 0))
            #expect(cs.viewer == Space.Viewer(member: true, owner: true, role: .owner))
            #expect(
                try await api.call(.post, "/spaces", json: CreateSpaceRequest(slug: "x1", name: "X")).status
                    == .unauthorized)
            let taken = try await api.call(
                .post, "/spaces", as: bob, json: CreateSpaceRequest(slug: "cs101", name: "Again"))
            #expect(taken.status == .conflict && taken.error?.field == "slug")

            let edit = UpdateSpaceRequest(name: "CS 101", description: "Questions and answers")
            #expect(try await api.call(.patch, "/spaces/cs101", json: edit).status == .unauthorized)
            let byBob = try await api.call(.patch, "/spaces/cs101", as: bob, json: edit)
            #expect(byBob.status == .forbidden && byBob.error?.code == "not_owner")
            let edited = try await api.call(.patch, "/spaces/cs101", as: ana, json: edit).decode(Space.self)
            #expect(edited.name == "CS 101" && edited.description == "Questions and answers" && edited.slug == "cs101")
            #expect(try await api.call(.patch, "/spaces/nope", as: ana, json: edit).status == .notFound)

            let anonymous = try await api.get("/spaces/cs101").decode(Space.self)
            #expect(anonymous.viewer == Space.Viewer(member: false, owner: false) && anonymous.name == "CS 101")
        }
    }

    @Test func badSpacesAreRefusedNamingTheField() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            for (body, field) in [
                (CreateSpaceRequest(slug: "a", name: "A"), "slug"),
                (CreateSpaceRequest(slug: "no spaces", name: "A"), "slug"),
                (CreateSpaceRequest(slug: "-dash", name: "A"), "slug"),
                (CreateSpaceRequest(slug: "ok", name: "  "), "name"),
                (CreateSpaceRequest(slug: "ok", name: "two\nlines"), "name"),
                (CreateSpaceRequest(slug: "ok", name: "A", imageId: "12"), "imageId"),
                (CreateSpaceRequest(slug: "ok", name: String(repeating: "n", count: 81)), "name"),
            ] {
                let response = try await api.call(.post, "/spaces", as: ana, json: body)
                #expect(
                    response.status == .unprocessableContent && response.error?.field == field,
                    "\(body): \(response.text)")
            }
            #expect(try await api.get("/spaces", as: ana).decode(Page<Space>.self).items.isEmpty, "nothing half-made")
            let unknown = try await api.call(
                .post, "/posts", as: ana, json: CreatePostRequest(kind: .text, body: "hi", spaces: ["nowhere"]))
            #expect(
                unknown.status == .unprocessableContent && unknown.error?.code == "unknown_space"
                    && unknown.error?.field == "spaces")
            #expect(try await api.page("/feed/global", of: Post.self).items.isEmpty, "no post made")
        }
    }

    @Test func joinAndLeaveAreIdempotentAndCountMembers() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            _ = try await space(api, ana, "hiking")
            #expect(try await api.call(.put, "/spaces/hiking/membership").status == .unauthorized)
            for _ in 0..<2 {
                let joined = try await api.call(.put, "/spaces/hiking/membership", as: bob).decode(Space.self)
                #expect(joined.counts.members == 2 && joined.viewer.member)
            }
            #expect(try await api.page("/spaces?member=true", as: bob, of: Space.self).items.map(\.slug) == ["hiking"])
            for _ in 0..<2 {
                let left = try await api.call(.delete, "/spaces/hiking/membership", as: bob).decode(Space.self)
                #expect(left.counts.members == 1 && !left.viewer.member)
            }
            #expect(try await api.page("/spaces?member=true", as: bob, of: Space.self).items.isEmpty)
            #expect(try await api.get("/spaces?member=true").status == .unauthorized)
            #expect(try await api.call(.put, "/spaces/nope/membership", as: bob).status == .notFound)
        }
    }

    /// Joining reads the space before its write: one deleted in between (its owner's account
    /// purged) is a 404, not a failed foreign key, on both databases.
    @Test func joiningASpaceGoneSinceItWasLookedUpIsNotFound() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            let gone = try #require(Int64(try await space(api, ana, "hiking").id))
            let user = try #require(Int64(bob.id))
            let error = await #expect(throws: PlazaError.self) {
                try await api.withDatabase { db in
                    _ = try await db.write("DELETE FROM spaces WHERE id = \(bind: gone)")
                    try await db.write { try await SpaceStore.addMember(user, to: gone, on: $0) }
                }
            }
            #expect(error?.status == .notFound)
        }
    }

    @Test func listSearchesNameAndSlugAndPages() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            _ = try await space(api, ana, "cs101", name: "Intro to Computer Science")
            _ = try await space(api, ana, "math", name: "Linear Algebra")
            _ = try await space(api, ana, "cafe", name: "Café 100%")
            #expect(try await api.page("/spaces", of: Space.self).items.map(\.slug) == ["cafe", "math", "cs101"])
            #expect(try await api.page("/spaces?q=COMPUTER", of: Space.self).items.map(\.slug) == ["cs101"])
            #expect(try await api.page("/spaces?q=cs1", of: Space.self).items.map(\.slug) == ["cs101"])
            #expect(try await api.page("/spaces?q=caf%C3%A9", of: Space.self).items.map(\.slug) == ["cafe"])
            #expect(
                try await api.page("/spaces?q=100%25", of: Space.self).items.map(\.slug) == ["cafe"],
                "% is matched literally")
            #expect(try await api.page("/spaces?q=_", of: Space.self).items.isEmpty, "_ is matched literally")
            let first = try await api.page("/spaces?limit=2", of: Space.self)
            let second = try await api.page("/spaces?limit=2&cursor=\(first.nextCursor!)", of: Space.self)
            #expect((first.items + second.items).map(\.slug) == ["cafe", "math", "cs101"] && second.nextCursor == nil)
            #expect(try await api.get("/spaces?member=maybe").status == .unprocessableContent)
        }
    }

    @Test func postsGoIntoSeveralSpacesAndSpaceFeedsPage() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            _ = try await space(api, ana, "cs101")
            _ = try await space(api, ana, "math")
            let both = try await api.post(
                bob,
                CreatePostRequest(
                    kind: .text, title: "Q", body: "What is a vector?", spaces: ["math", "CS101", "math"]))
            #expect(Set(both.spaces.map(\.slug)) == ["cs101", "math"])
            let csOnly = try await api.post(ana, CreatePostRequest(kind: .text, body: "Welcome", spaces: ["cs101"]))
            _ = try await api.textPost(ana, "not in a space")

            #expect(try await api.page("/spaces/cs101/feed", of: Post.self).items.map(\.id) == [csOnly.id, both.id])
            #expect(try await api.page("/spaces/math/feed", of: Post.self).items.map(\.id) == [both.id])
            let fetched = try await api.get("/posts/\(both.id)").decode(Post.self)
            #expect(
                fetched.spaces.map(\.slug).sorted() == ["cs101", "math"]
                    && fetched.spaces.contains { $0.name == "MATH" })
            #expect(try await api.get("/spaces/cs101").decode(Space.self).counts.posts == 2)
            let page = try await api.page("/spaces/cs101/feed?limit=1", of: Post.self)
            #expect(page.items.map(\.id) == [csOnly.id])
            #expect(
                try await api.page("/spaces/cs101/feed?limit=1&cursor=\(page.nextCursor!)", of: Post.self).items.map(
                    \.id) == [both.id])
            #expect(try await api.get("/spaces/nope/feed").status == .notFound)

            // The author moves the post; the counts follow.
            let moved = try await api.call(
                .patch, "/posts/\(both.id)", as: bob, json: UpdatePostRequest(spaces: ["math"]))
            #expect(try moved.decode(Post.self).spaces.map(\.slug) == ["math"])
            #expect(try await api.page("/spaces/cs101/feed", of: Post.self).items.map(\.id) == [csOnly.id])
            #expect(try await api.get("/spaces/cs101").decode(Space.self).counts.posts == 1)
            #expect(
                try await api.call(.patch, "/posts/\(both.id)", as: ana, json: UpdatePostRequest(spaces: [])).status
                    == .forbidden)
            let unknown = try await api.call(
                .patch, "/posts/\(both.id)", as: bob, json: UpdatePostRequest(spaces: ["nowhere"]))
            #expect(unknown.status == .unprocessableContent && unknown.error?.field == "spaces")

            #expect(try await api.call(.delete, "/posts/\(both.id)", as: bob).status == .noContent)
            #expect(try await api.get("/spaces/math").decode(Space.self).counts.posts == 0)
        }
    }

    @Test func joinedSpacesFeedTheHomeFeedWithoutBlockedPeople() async throws {
        try await withApp { api async throws in
            let (ana, bob, carol) = try await api.register("ana", "bob", "carol")
            _ = try await space(api, carol, "cs101")
            let inSpace = try await api.post(bob, CreatePostRequest(kind: .text, body: "in cs101", spaces: ["cs101"]))
            _ = try await api.textPost(bob, "not followed")
            #expect(try await api.page("/feed/home", as: ana, of: Post.self).items.isEmpty)
            try await api.call(.put, "/spaces/cs101/membership", as: ana)
            var mine: [String] = []
            for i in 0..<3 { mine.append(try await api.textPost(ana, "mine \(i)").id) }
            let home = try await api.page("/feed/home", as: ana, of: Post.self)
            #expect(home.items.map(\.id) == mine.reversed() + [inSpace.id])
            // Paging across both sources: every post once, in order.
            let walked = try await api.walk("/feed/home?limit=1", as: ana, of: Post.self)
            #expect(walked.map(\.id) == home.items.map(\.id))
            try await api.call(.put, "/users/bob/block", as: ana)
            #expect(try await api.page("/feed/home", as: ana, of: Post.self).items.map(\.id) == mine.reversed())
            #expect(try await api.page("/spaces/cs101/feed", as: ana, of: Post.self).items.isEmpty)
        }
    }

    @Test func viewingASpaceKeepsItAsTheLastSpace() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            _ = try await space(api, ana, "cs101")
            _ = try await space(api, ana, "math")
            try await api.call(.put, "/me/preferences", as: ana, raw: #"{"theme":"dark"}"#)
            _ = try await api.get("/spaces/math", as: ana)
            #expect(
                try await api.get("/me/preferences", as: ana).decode(JSONValue.self)
                    == .object(["theme": .string("dark"), "lastSpace": .string("math")]))
            _ = try await api.get("/spaces/cs101", as: ana)
            #expect(
                try await api.get("/me", as: ana).decode(Me.self).preferences
                    == .object(["theme": .string("dark"), "lastSpace": .string("cs101")]))
        }
    }

    @Test func aSpaceImageIsAnUploadClaimedOnce() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            let upload = try await api.uploaded(try MediaFixtures.sample(.png), as: ana)
            let bobsUpload = try await api.uploaded(try MediaFixtures.sample(.png), as: bob)
            let refused = try await api.call(
                .post, "/spaces", as: ana, json: CreateSpaceRequest(slug: "art", name: "Art", imageId: bobsUpload.id))
            #expect(refused.status == .unprocessableContent && refused.error?.field == "imageId")
            let art = try await api.call(
                .post, "/spaces", as: ana, json: CreateSpaceRequest(slug: "art", name: "Art", imageId: upload.id)
            ).decode(Space.self)
            #expect(art.image?.id == upload.id)
            let again = try await api.call(
                .post, "/spaces", as: ana, json: CreateSpaceRequest(slug: "art2", name: "Art", imageId: upload.id))
            #expect(again.status == .unprocessableContent, "an image is used once")
            let replacement = try await api.uploaded(try MediaFixtures.sample(.png), as: ana)
            let replaced = try await api.call(
                .patch, "/spaces/art", as: ana, json: UpdateSpaceRequest(imageId: .set(replacement.id))
            ).decode(Space.self)
            #expect(replaced.image?.id == replacement.id)
            #expect(try await api.fetch(art.image?.url ?? "-").status == .notFound, "the old image is gone")
            #expect(try await api.fetch(replaced.image?.url ?? "-").status == .ok, "the new one is served to anyone")
            let cleared = try await api.call(.patch, "/spaces/art", as: ana, json: UpdateSpaceRequest(imageId: .clear))
                .decode(Space.self)
            #expect(cleared.image == nil)
        }
    }
}
