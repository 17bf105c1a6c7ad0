import Foundation
import PlazaAPI
import Testing

@testable import PlazaKit
@testable import PlazaKitCore

/// Keyword filters through the SDK, against a real `plaza serve`: the server applies them, and
/// the client's `KeywordFilters` (the server's own code, from PlazaAPI) decides alike.
@Suite("PlazaKit keyword filters against a running plaza serve")
struct FiltersTests {
    @Test func filtersAreEachPersonsOwnAndApplyAlike() async throws {
        try await withServer { server in
            let ana = try await signedUp("ana", on: server)
            let bob = try await signedUp("bob", on: server)
            _ = try await ana.follow("bob")
            let post = try await bob.createPost(CreatePostRequest(kind: .text, body: "Football tonight!"))
            let filter = try await ana.createFilter(phrase: "football", contexts: [.home], action: .warn)
            #expect(try await ana.filters() == [filter])
            #expect(try await bob.filters().isEmpty)

            let home = try await ana.feed(.home)
            #expect(home.items.first { $0.id == post.id }?.filtered == [filter.match])
            // The client decides as the server did, on the post as another reader got it.
            let me = try await ana.me().user.id
            let matcher = try await ana.filterMatcher(for: .home, viewer: me)
            let unmarked = try await bob.post(post.id)
            #expect(matcher.verdict(for: unmarked) == .warn([filter]))
            #expect(matcher.apply(to: [unmarked]).first?.filtered == [filter.match])

            // A pager applies them to stream events, which carry no warning.
            let pager = FeedPager(client: ana, source: .home)
            await pager.useFilters(try await ana.filterMatcher(for: FeedSource.home.filterContext, viewer: me))
            await pager.apply(.postCreated(unmarked))
            #expect(await pager.posts.first?.filtered == [filter.match])

            let hiding = try await ana.updateFilter(filter.id, UpdateKeywordFilterRequest(action: "hide"))
            await pager.useFilters(try await ana.filterMatcher(for: .home, viewer: me))
            #expect(await pager.posts.isEmpty)
            #expect(hiding.action == .hide)
            #expect(try await ana.feed(.home).items.allSatisfy { $0.id != post.id })
            do {
                try await bob.deleteFilter(filter.id)
                Issue.record("not Bob's filter")
            } catch let error as PlazaClientError {
                #expect(error.status == 404)
            }
            do {
                try await ana.createFilter(phrase: " ", contexts: [.home])
                Issue.record("an empty phrase")
            } catch let error as PlazaClientError {
                #expect(error.status == 422)
            }
            try await ana.deleteFilter(filter.id)
            #expect(try await ana.filters().isEmpty)
        }
    }
}
