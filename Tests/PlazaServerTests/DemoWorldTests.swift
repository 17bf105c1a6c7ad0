import Foundation
import Logging
import PlazaAPI
import Testing

@testable import PlazaServer

/// `plaza seed --demo`, counted through the API as a newcomer would meet it.
@Suite("The demo world")
struct DemoWorldTests {
    static func seed(_ api: TestAPI) async throws -> DemoSeeder.Outcome {
        try await api.withDatabase { db in
            try await DemoSeeder(services: AppServices(config: api.config, db: db), logger: Logger(label: "test"))
                .seed()
        }
    }

    static func signIn(_ api: TestAPI, _ username: String) async throws -> Account {
        let response = try await api.call(
            .post, "/auth/login", json: LoginRequest(login: username, password: DemoSeeder.demoPassword))
        #expect(response.status == .ok, "\(username): \(response.text)")
        let auth = try response.decode(AuthResponse.self)
        return Account(token: auth.token, me: auth.user, password: DemoSeeder.demoPassword)
    }

    @Test func everySeedAppIsThereOnceWithPicturesHistoryAndThingsWaiting() async throws {
        try await withApp { api async throws in
            guard case .seeded(let people, let posts) = try await Self.seed(api) else {
                Issue.record("a fresh database is seeded")
                return
            }
            #expect(people == DemoSeeder.people.count && posts > 200)
            #expect(try await Self.seed(api) == .alreadySeeded, "seeding again changes nothing")
            let demo = try await Self.signIn(api, DemoSeeder.demoUsername)
            let admin = try await Self.signIn(api, DemoSeeder.adminUsername)

            // Courses: three spaces with moderators, one of them closed, with answered questions.
            let spaces = try await api.walk("/spaces?limit=50", as: demo, of: Space.self)
            let courses = spaces.filter { ["cs101", "math120", "thesis-lab"].contains($0.slug) }
            #expect(courses.count == 3 && courses.contains { $0.visibility == .closed })
            #expect(spaces.allSatisfy { $0.image != nil }, "every space has its picture")
            for course in courses {
                let members = try await api.walk(
                    "/spaces/\(course.slug)/members?limit=50", as: demo, of: SpaceMember.self)
                #expect(members.contains { $0.role == .moderator }, "\(course.slug) has a moderator")
                let feed = try await api.walk("/spaces/\(course.slug)/feed?limit=50", as: demo, of: Post.self)
                #expect(feed.contains { $0.counts.comments > 0 }, "\(course.slug) has an answered question")
            }

            // Pictures on the meme page and the food feed, places and prices, and a video.
            let memes = try await api.walk("/users/memerly/posts?limit=50", of: Post.self)
            let food = try await api.walk("/users/eatstagram/posts?limit=50", of: Post.self)
            #expect(memes.count >= 5 && memes.allSatisfy { $0.kind == .photo && !$0.media.isEmpty })
            #expect(food.filter { !$0.media.isEmpty && $0.location != nil }.count >= 5)
            #expect(food.contains { $0.price != nil } && food.contains { $0.media.count > 1 })
            let picture = try #require(memes.first?.media.first?.variants.medium)
            let image = try await api.client.execute(uri: picture, method: .get, headers: [:], body: nil)
            #expect(image.status == .ok && image.headers[.contentType] == "image/jpeg")
            if VideoPipeline.make(api.config.video, logger: Logger(label: "test")) != nil {
                #expect(food.contains { $0.media.contains { $0.contentType.hasPrefix("video/") } })
            }

            // Ten weeks of activities: heatmaps, streaks and more than one kind of activity.
            let heatmap = try await api.get("/users/priya/activity?days=84").decode(ActivityHeatmap.self)
            let activeDays = heatmap.days.filter { $0.completed > 0 }
            #expect(activeDays.count >= 30 && heatmap.streak.longest >= 2)
            let weeks = Set(heatmap.days.indices.filter { heatmap.days[$0].completed > 0 }.map { $0 / 7 })
            #expect(weeks.count >= 8, "active in \(weeks.count) of the 12 weeks")
            let activities = try await api.walk("/users/noor/posts?limit=100&kind=activity", of: Post.self)
            #expect(Set(activities.compactMap { $0.activity?.type }).count >= 2)

            // Collections of saved posts and links whose previews came from the pages kept here.
            let collections = try await api.walk("/collections?limit=50", as: demo, of: SavedCollection.self)
            #expect(collections.count >= 2)
            var items: [CollectionItem] = []
            for collection in collections {
                items += try await api.walk(
                    "/collections/\(collection.id)/items?limit=50", as: demo, of: CollectionItem.self)
            }
            #expect(items.contains { $0.post != nil })
            let links = items.compactMap(\.link)
            #expect(links.count >= 3 && links.allSatisfy { $0.title != nil && $0.imageURL != nil }, "\(links)")

            // Waiting: notifications and a follow request for the demo account, a request to join
            // the space it moderates, and a report for the administrator.
            #expect(try await api.page("/me/notifications", as: demo, of: PlazaAPI.Notification.self).items.count > 5)
            let followers = try await api.page("/me/follow-requests", as: demo, of: JoinRequest.self).items
            #expect(followers.map(\.user.username) == ["leo"])
            let joining = try await api.page("/spaces/thesis-lab/requests", as: demo, of: JoinRequest.self).items
            #expect(joining.map(\.user.username) == ["marcus"])
            let reports = try await api.page("/admin/reports", as: admin, of: Report.self).items
            #expect(reports.count == 1 && reports.first?.reason == .spam)
        }
    }

    @Test func theCrowdHasItsPeopleFollowsAndPostsOnce() async throws {
        try await withApp { api async throws in
            @Sendable func seed() async throws -> CrowdSeeder.Outcome {
                try await api.withDatabase { db in
                    try await CrowdSeeder(
                        services: AppServices(config: api.config, db: db), logger: Logger(label: "test"), people: 12,
                        posts: 60, followsEach: 4
                    ).seed()
                }
            }
            guard case .seeded(let people, let posts, let follows) = try await seed() else {
                Issue.record("a fresh database is seeded")
                return
            }
            #expect(people == 12 && posts == 60 && follows > 24)
            #expect(try await seed() == .alreadySeeded)
            let feed = try await api.walk("/feed/global?limit=50", of: Post.self)
            #expect(feed.count == 60)
            #expect(Set(feed.map(\.kind)).isSuperset(of: [.text, .activity]))
            #expect(
                feed.first.map { $0.createdAt.milliseconds > feed[59].createdAt.milliseconds + 80 * 86_400_000 } == true
            )
            let person = try await api.get("/users/\(CrowdSeeder.username(3))").decode(User.self)
            #expect(person.counts.following > 0)
            let home = try await api.page("/feed/home", as: Self.signIn(api, CrowdSeeder.username(3)), of: Post.self)
            #expect(!home.items.isEmpty, "their home has the posts of the people they follow")
        }
    }
}
