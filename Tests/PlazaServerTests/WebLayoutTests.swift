import Foundation
import Hummingbird
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// The shape of the pages: the visitor's landing page, the side column beside feeds, the post
/// page's menu and sheets, several photos as a carousel.
@Suite("Web app: landing page, side column, post menu, carousel")
struct WebLayoutTests {
    @Test func aVisitorLandsOnTheCommunityAndWhatPlazaIsSignedInPeopleOnTheirHome() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            _ = try await SpacesTests().space(api, ana, "chess", name: "Chess club")
            _ = try await api.textPost(ana, "Openings tonight at eight")
            let media = try await api.uploaded(try MediaFixtures.sample(.jpeg), as: ana)
            let photo = try await api.post(
                ana, CreatePostRequest(kind: .photo, body: "The board", mediaIds: [media.id]))
            // MUT
            let landing = try await api.page(.get, "/")
            #expect(landing.status == .ok)
            #expect(landing.text.contains("A place for your communities") && landing.text.contains(#"href="/signup""#))
            #expect(landing.text.contains("Openings tonight at eight"), "the newest posts")
            #expect(landing.text.contains(#"href="/s/chess""#) && landing.text.contains("Chess club"), "its spaces")
            #expect(landing.text.contains(#"<a href="/p/\#(photo.id)" class="tile">"#), "its newest photos")
            let home = try await api.page(.get, "/", cookie: ana.cookie).text
            #expect(!home.contains("A place for your communities") && home.contains(#"id="feed-heading""#))
            // An empty profile says what to do to its owner only.
            let bob = try await api.register("bob")
            #expect(try await api.page(.get, "/u/bob", cookie: bob.cookie).text.contains("Write your first post"))
            let others = try await api.page(.get, "/u/bob", cookie: ana.cookie).text
            #expect(others.contains("No posts yet.") && !others.contains("Write your first post"))
        }
    }

    @Test func feedsHaveASideColumnOfMySpacesPeopleAndPhotos() async throws {
        try await withApp { api async throws in
            let (ana, bob, cat) = try await api.register("ana", "bob", "cat")
            _ = try await SpacesTests().space(api, ana, "chess", name: "Chess club")
            for (who, whom) in [(ana, "bob"), (bob, "cat")] {
                #expect(try await api.call(.put, "/users/\(whom)/follow", as: who).status == .ok)
            }
            for n in 1...3 { _ = try await api.textPost(bob, "Bob's post \(n)") }
            _ = try await api.textPost(cat, "Cat writes")
            // MUT
            let home = try await api.page(.get, "/", cookie: ana.cookie).text
            let side = try #require(
                home.range(of: #"<aside class="side side-wide""#).map { String(home[$0.lowerBound...]) })
            #expect(side.contains("Your spaces") && side.contains(#"href="/s/chess""#))
            #expect(side.contains("People to follow") && side.contains(#"data-follow="cat""#), "bob follows cat")
            let explore = try await api.page(.get, "/explore").text
            #expect(explore.contains("What Plaza is") && !explore.contains("Your spaces"), "a visitor's side")
            #expect(explore.contains(#"href="/s/chess""#))
            // The fragments that infinite scroll fetches carry cards only.
            let fragment = try await api.page(.get, "/explore?fragment=1").text
            #expect(!fragment.contains("<aside"))
        }
    }

    @Test func thePostPageKeepsItsSecondaryActionsInAMenuAndSheetsForWhoMayUseThem() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            let post = try await api.textPost(ana, "A post with a menu")
            let edit = #"href="/p/\#(post.id)/edit""#
            let delete = #"data-api="DELETE /api/v1/posts/\#(post.id)""#
            // MUT: another person may save, recommend and report it; not edit or delete it.
            let other = try await api.page(.get, "/p/\(post.id)", cookie: bob.cookie).text
            for sheet in ["save-sheet", "recommend-sheet", "report-sheet"] {
                #expect(
                    other.contains(#"<dialog id="\#(sheet)""#) && other.contains(#"data-dialog="\#(sheet)""#),
                    "\(sheet)")
            }
            #expect(other.contains(#"class="post-menu""#) && other.contains("data-text-size"))
            #expect(other.contains(#"data-share="/p/\#(post.id)""#))
            #expect(!other.contains(edit) && !other.contains(delete))
            // The author edits and deletes it from the menu, and is taken to their profile after.
            let owner = try await api.page(.get, "/p/\(post.id)", cookie: ana.cookie).text
            #expect(owner.contains(edit) && owner.contains(delete) && owner.contains(#"data-then="go:/u/ana""#))
            #expect(!owner.contains(#"<dialog id="report-sheet""#))
            // A visitor reads it and is sent to sign in to save it.
            let visitor = try await api.page(.get, "/p/\(post.id)").text
            #expect(!visitor.contains("<dialog") && !visitor.contains(edit) && !visitor.contains(delete))
            #expect(visitor.contains(#"href="/login?next=/p/\#(post.id)""#))
            // Cards elsewhere save on the post's page, and remove themselves when deleted.
            let profile = try await api.page(.get, "/u/ana", cookie: ana.cookie).text
            #expect(profile.contains(#"href="/p/\#(post.id)#save""#))
            #expect(profile.contains(#"data-then="remove:#post-\#(post.id)""#))
        }
    }

    @Test func severalPhotosMakeACarouselAndOnePhotoTheCardsCover() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            var ids: [String] = []
            for _ in 0..<3 { ids.append(try await api.uploaded(try MediaFixtures.sample(.jpeg), as: ana).id) }
            let several = try await api.post(ana, CreatePostRequest(kind: .photo, body: "Three", mediaIds: ids))
            let cover = try await api.uploaded(try MediaFixtures.sample(.jpeg), as: ana)
            let one = try await api.post(ana, CreatePostRequest(kind: .photo, body: "One", mediaIds: [cover.id]))
            // MUT
            let explore = try await api.page(.get, "/explore").text
            let card = try #require(explore.range(of: #"id="post-\#(several.id)""#).map { explore[$0.lowerBound...] })
            let carousel = String(card.split(separator: "</article>").first ?? "")
            #expect(carousel.contains("data-carousel") && carousel.contains(#"aria-label="3 photos and videos""#))
            #expect(
                carousel.components(separatedBy: #"<div class="slide"><img"#).count - 1 == 3
                    && carousel.contains("1 / 3"))
            let single = try #require(explore.range(of: #"id="post-\#(one.id)""#).map { explore[$0.lowerBound...] })
            let card1 = String(single.split(separator: "</article>").first ?? "")
            #expect(card1.contains(#"<a class="photo" href="/p/\#(one.id)">"#) && !card1.contains("data-carousel"))
        }
    }

    @Test func aQuestionInASpaceShowsAsOneWithItsAnswers() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            _ = try await SpacesTests().space(api, ana, "cs101")
            #expect(try await api.call(.put, "/spaces/cs101/membership", as: bob).status == .ok)
            let asked = try await api.post(
                bob,
                CreatePostRequest(kind: .text, title: "Why does it never stop?", body: "My loop.", spaces: ["cs101"]))
            let told = try await api.post(bob, CreatePostRequest(kind: .text, body: "It stops now.", spaces: ["cs101"]))
            let aside = try await api.textPost(bob, "Anyone here?")
            #expect(
                try await api.call(.post, "/posts/\(asked.id)/comments", as: ana, json: ["body": "A base case."]).status
                    == .created)
            // MUT
            let space = try await api.page(.get, "/s/cs101").text
            let card = String(
                space.split(separator: #"id="post-\#(asked.id)""#).last?.split(separator: "</article>").first ?? "")
            #expect(card.contains(#"class="kind-badge""#) && card.contains("1 answer"), "\(card)")
            let statement = String(
                space.split(separator: #"id="post-\#(told.id)""#).last?.split(separator: "</article>").first ?? "")
            #expect(!statement.contains("kind-badge") && statement.contains("0 comments"))
            let page = try await api.page(.get, "/p/\(asked.id)", cookie: ana.cookie).text
            #expect(page.contains(#"<h2 id="comments-heading">Answers</h2>"#) && page.contains("Your answer"))
            let outside = try await api.page(.get, "/p/\(aside.id)").text
            #expect(!outside.contains("kind-badge"), "a question outside any space is a post like any other")
        }
    }
}
