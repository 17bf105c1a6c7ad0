import Hummingbird
import Testing

@testable import PlazaAPI
@testable import PlazaServer

@Suite("Activity tracking")
struct ActivityTests {
    @Test func progressSetsAndClearsCompletionAndOnlyTheAuthorUpdates() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            let run = try await api.post(
                ana,
                CreatePostRequest(
                    kind: .activity, activity: ActivityInput(type: "Run 5k", emoji: "🏃", color: "#FF8800", progress: 40)
                ))
            #expect(
                run.activity == Activity(type: "Run 5k", emoji: "🏃", color: "#ff8800", progress: 40, completedAt: nil))
            let done = try await api.call(
                .patch, "/posts/\(run.id)", as: ana, json: UpdatePostRequest(activity: ActivityInput(progress: 100))
            ).decode(Post.self)
            #expect(done.activity?.progress == 100 && done.activity?.completedAt != nil)
            let again = try await api.call(
                .patch, "/posts/\(run.id)", as: ana, json: UpdatePostRequest(activity: ActivityInput(emoji: "✅"))
            ).decode(Post.self)
            #expect(again.activity?.completedAt == done.activity?.completedAt, "completion time stays while at 100")
            let dropped = try await api.call(
                .patch, "/posts/\(run.id)", as: ana, json: UpdatePostRequest(activity: ActivityInput(progress: 90))
            ).decode(Post.self)
            #expect(dropped.activity?.completedAt == nil)
            #expect(
                try await api.call(
                    .patch, "/posts/\(run.id)", as: bob, json: UpdatePostRequest(activity: ActivityInput(progress: 100))
                ).status == .forbidden)
            #expect(
                try await api.call(
                    .patch, "/posts/\(run.id)", json: UpdatePostRequest(activity: ActivityInput(progress: 100))
                ).status == .unauthorized)
            for (input, field) in [
                (ActivityInput(progress: 140), "activity.progress"), (ActivityInput(progress: -1), "activity.progress"),
                (ActivityInput(color: "orange"), "activity.color"), (ActivityInput(color: "#12345g"), "activity.color"),
            ] {
                let response = try await api.call(
                    .patch, "/posts/\(run.id)", as: ana, json: UpdatePostRequest(activity: input))
                #expect(response.status == .unprocessableContent && response.error?.field == field, "\(input)")
            }
            let created = try await api.call(
                .post, "/posts", as: ana,
                json: CreatePostRequest(kind: .activity, activity: ActivityInput(type: "Swim", progress: 140)))
            #expect(created.status == .unprocessableContent && created.error?.field == "activity.progress")
        }
    }

    @Test func feedsFilterActivitiesByTypeAndProgress() async throws {
        try await withApp { api async throws in
            let (ana, ben) = try await api.register("ana", "ben")
            #expect(try await api.call(.put, "/users/ana/follow", as: ben).status == .ok)
            let run = try await api.post(
                ana, CreatePostRequest(kind: .activity, activity: ActivityInput(type: "Running", progress: 100)))
            let read = try await api.post(
                ana, CreatePostRequest(kind: .activity, activity: ActivityInput(type: "Reading", progress: 40)))
            let longRun = try await api.post(
                ana, CreatePostRequest(kind: .activity, activity: ActivityInput(type: "Running", progress: 10)))
            _ = try await api.textPost(ana, "Running late")
            func ids(_ path: String, as account: Account? = nil) async throws -> [String] {
                try await api.page(path, as: account, of: Post.self).items.map(\.id)
            }
            #expect(try await ids("/users/ana/posts?activity=Running") == [longRun.id, run.id])
            #expect(try await ids("/users/ana/posts?progress=done") == [run.id])
            #expect(try await ids("/users/ana/posts?progress=ongoing") == [longRun.id, read.id])
            #expect(try await ids("/users/ana/posts?activity=Running&progress=ongoing") == [longRun.id])
            #expect(try await ids("/feed/home?activity=Reading", as: ben) == [read.id])
            #expect(try await ids("/feed/global?activity=Running&progress=done") == [run.id])
            #expect(try await ids("/users/ana/posts?activity=running").isEmpty, "types match as written")
            #expect(try await api.get("/users/ana/posts?progress=half").status == .unprocessableContent)
            let long = String(repeating: "x", count: 41)
            #expect(try await api.get("/users/ana/posts?activity=\(long)").status == .unprocessableContent)
            // The web app's log of my activities filters the same way.
            let page = try await api.page(.get, "/activities?activity=Running&progress=ongoing", cookie: ana.cookie)
            #expect(page.status == .ok)
            #expect(page.text.contains("id=\"post-\(longRun.id)\"") && !page.text.contains("id=\"post-\(run.id)\""))
            #expect(
                page.text.contains("href=\"/activities?activity=Reading&amp;progress=ongoing\""),
                "my types to pick from, keeping the progress chosen")
            #expect(try await api.page(.get, "/activities").status == .seeOther)
        }
    }

    @Test func theHeatmapCountsPostedAndCompletedPerDay() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            let a = try await api.post(ana, CreatePostRequest(kind: .activity, activity: ActivityInput(type: "Read")))
            _ = try await api.post(
                ana, CreatePostRequest(kind: .activity, activity: ActivityInput(type: "Walk", progress: 100)))
            _ = try await api.textPost(ana, "not an activity")
            _ = try await api.post(
                bob, CreatePostRequest(kind: .activity, activity: ActivityInput(type: "Bob's", progress: 100)))
            try await api.call(
                .patch, "/posts/\(a.id)", as: ana, json: UpdatePostRequest(activity: ActivityInput(progress: 100)))

            let heatmap = try await api.get("/users/ana/activity?days=7").decode(ActivityHeatmap.self)
            #expect(heatmap.days.count == 7)
            #expect(
                heatmap.days.last
                    == ActivityHeatmap.Day(date: Timestamp.now.day, completed: 2, posted: 2, unfinished: 0))
            #expect(heatmap.days.dropLast().allSatisfy { $0.completed == 0 && $0.posted == 0 })
            #expect(heatmap.days.map(\.date) == heatmap.days.map(\.date).sorted(), "oldest first")
            #expect(try await api.get("/users/ana/activity").decode(ActivityHeatmap.self).days.count == 365)
            // Dropping below 100 takes the completion back out: it is unfinished again.
            try await api.call(
                .patch, "/posts/\(a.id)", as: ana, json: UpdatePostRequest(activity: ActivityInput(progress: 50)))
            #expect(
                try await api.get("/users/ana/activity?days=1", as: bob).decode(ActivityHeatmap.self).days == [
                    .init(date: Timestamp.now.day, completed: 1, posted: 2, unfinished: 1)
                ])
            let profile = try await api.page(.get, "/u/ana")
            #expect(profile.text.contains("<span data-unfinished>1</span> unfinished"))
            #expect(
                profile.text.contains("1 posted") == false
                    && profile.text.contains("2 posted, 1 completed, 1 unfinished"))
            for days in ["0", "367", "abc"] {
                let response = try await api.get("/users/ana/activity?days=\(days)")
                #expect(response.status == .unprocessableContent && response.error?.field == "days")
            }
            #expect(try await api.get("/users/nobody/activity").status == .notFound)
            try await api.call(.put, "/users/bob/block", as: ana)
            #expect(
                try await api.get("/users/ana/activity", as: bob).status == .notFound,
                "hidden from the person she blocked")
            #expect(try await api.get("/users/bob/activity", as: ana).status == .notFound, "and the other way")
        }
    }

    @Test func theHeatmapPlacesDaysInUTC() async throws {
        try await withDatabase { db, config in
            let services = try AppServices(config: config, db: db)
            let ana = try await services.accounts.createUser(
                .init(username: "ana", email: "ana@example.com", passwordHash: "x", displayName: "Ana"))
            let day: Int64 = 86_400_000
            let now = Timestamp(rfc3339: "2026-11-21T12:00:00.000Z")!.milliseconds
            // Posted two days ago just before midnight, completed yesterday just after it.
            let id = services.ids.next()
            try await db.write(
                """
                INSERT INTO posts (id, author_id, kind, activity_type, activity_progress, activity_completed_at, created_at)
                VALUES (\(bind: id), \(bind: ana), 'activity', 'Climb', 100, \(bind: now - day - 12 * 3_600_000 + 1), \(bind: now - 2 * day + 11 * 3_600_000 + 59 * 60_000))
                """)
            let heatmap = try await services.people.activity(
                of: ana, days: 3, viewer: nil, now: Timestamp(milliseconds: now))
            #expect(
                heatmap.days == [
                    .init(date: "2026-11-19", completed: 0, posted: 1),
                    .init(date: "2026-11-20", completed: 1, posted: 0),
                    .init(date: "2026-11-21", completed: 0, posted: 0),
                ])
        }
    }
}
