import Foundation
import Hummingbird
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// Days in each person's time zone: the heatmap and its streak count the owner's calendar
/// days (`preferences.timeZone`), `?tz=` another zone's, with days of 23 and 25 hours.
@Suite("Time zones")
struct TimeZoneTests {
    static let losAngeles = TimeZone(identifier: "America/Los_Angeles")!

    /// A completed activity of `account` made and finished at `instant`.
    func activity(_ api: TestAPI, _ account: Account, at instant: Date) async throws {
        let post = try await api.post(
            account, CreatePostRequest(kind: .activity, activity: ActivityInput(type: "Run", progress: 100)))
        let millis = Timestamp(instant).milliseconds
        _ = try await api.withDatabase { db in
            try await db.write(
                "UPDATE posts SET created_at = \(bind: millis), activity_completed_at = \(bind: millis) WHERE id = \(bind: Int64(post.id)!)"
            )
        }
    }

    @Test func theHeatmapCountsTheOwnersDaysAcrossClockChanges() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            try await api.call(.patch, "/me/preferences", as: ana, json: ["timeZone": "America/Los_Angeles"])
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = Self.losAngeles
            // The last year's days in Los Angeles, each with its length: one has 23 hours, one 25.
            let starts = PeopleStore.dayStarts(days: 367, endingOn: Date(), calendar: calendar)
            let lengths = zip(starts, starts.dropFirst()).map { ($0, $1.timeIntervalSince($0) / 3600) }
            let short = try #require(lengths.first { $0.1 == 23 }?.0)
            let long = try #require(lengths.first { $0.1 == 25 }?.0)
            // Just after each of those midnights and just before the next.
            for start in [short, long] {
                let hours = start == short ? 23.0 : 25.0
                try await activity(api, ana, at: start.addingTimeInterval(30 * 60))
                try await activity(api, ana, at: start.addingTimeInterval((hours - 0.5) * 3600))
            }
            let shortDay = PeopleStore.dayText(short, calendar: calendar)
            let longDay = PeopleStore.dayText(long, calendar: calendar)

            let local = try await api.get("/users/ana/activity?days=366").decode(ActivityHeatmap.self)
            #expect(local.timeZone == "America/Los_Angeles")
            let busy = local.days.filter { $0.completed > 0 }
            #expect(
                busy == [
                    .init(date: min(shortDay, longDay), completed: 2, posted: 2),
                    .init(date: max(shortDay, longDay), completed: 2, posted: 2),
                ], "both ends of the 23- and the 25-hour day are on that day")

            // In UTC the late ones fall on the next day.
            let utc = try await api.get("/users/ana/activity?days=366&tz=UTC").decode(ActivityHeatmap.self)
            #expect(utc.timeZone == "UTC")
            #expect(utc.days.filter { $0.completed > 0 }.count == 4)
            #expect(utc.days.reduce(0) { $0 + $1.completed } == 4, "nothing lost or counted twice")
        }
    }

    @Test func aRunAtEightInTheEveningKeepsTheStreak() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            try await api.call(.patch, "/me/preferences", as: ana, json: ["timeZone": "America/Los_Angeles"])
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = Self.losAngeles
            let starts = PeopleStore.dayStarts(days: 4, endingOn: Date(), calendar: calendar)
            // Two days ago at 8 pm and yesterday at 8 am, in California: one UTC day.
            let evening = try #require(calendar.date(byAdding: .hour, value: 20, to: starts[1]))
            let morning = try #require(calendar.date(byAdding: .hour, value: 8, to: starts[2]))
            try await activity(api, ana, at: evening)
            try await activity(api, ana, at: morning)
            let local = try await api.get("/users/ana/activity?days=30").decode(ActivityHeatmap.self)
            #expect(local.streak == .init(current: 2, longest: 2), "yesterday and the day before, in her days")
            #expect(local.days.suffix(3).map(\.completed) == [1, 1, 0])
            let utc = try await api.get("/users/ana/activity?days=30&tz=UTC").decode(ActivityHeatmap.self)
            #expect(utc.streak.longest == 1, "counted in UTC, both fall on one day")

            // Anyone may ask in their own zone; a zone that is not one is refused.
            let bob = try await api.register("bob")
            #expect(
                try await api.get("/users/ana/activity?days=1&tz=Asia/Kathmandu", as: bob).decode(ActivityHeatmap.self)
                    .timeZone == "Asia/Kathmandu")
            for bad in ["PST", "Mars/Base", "+05:00", "../../etc/passwd", String(repeating: "A/", count: 100)] {
                let encoded = bad.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                let response = try await api.get("/users/ana/activity?tz=\(encoded)")
                #expect(response.status == .unprocessableContent && response.error?.field == "tz", "\(bad)")
            }
        }
    }

    @Test func theZoneIsAPreferenceSetAtSignUpAndChecked() async throws {
        try await withApp { api async throws in
            let response = try await api.call(
                .post, "/auth/register",
                json: RegisterRequest(
                    username: "kai", email: "kai@example.com", password: "correct horse battery",
                    timeZone: "Pacific/Auckland", language: "de-AT"))
            let auth = try response.decode(AuthResponse.self)
            #expect(auth.user.preferences["timeZone"]?.stringValue == "Pacific/Auckland")
            #expect(auth.user.preferences["language"]?.stringValue == "de-AT")
            #expect(
                try await api.get("/users/kai/activity?days=1").decode(ActivityHeatmap.self).timeZone
                    == "Pacific/Auckland")
            let refused = try await api.call(
                .post, "/auth/register",
                json: RegisterRequest(
                    username: "lee", email: "lee@example.com", password: "correct horse battery", timeZone: "Nowhere"))
            #expect(refused.status == .unprocessableContent && refused.error?.field == "timeZone")
            #expect(try await api.get("/users/lee").status == .notFound, "nothing was made")
            let kai = Account(token: auth.token, me: auth.user, password: "correct horse battery")
            for (key, value) in [
                ("timeZone", "EST5EDT!"), ("timeZone", ""), ("language", "deutsch!"), ("language", "x"),
            ] {
                let bad = try await api.call(.patch, "/me/preferences", as: kai, json: [key: value])
                #expect(bad.status == .unprocessableContent && bad.error?.field == key, "\(key)=\(value)")
            }
            #expect(
                try await api.call(.patch, "/me/preferences", as: kai, json: ["timeZone": "Europe/Berlin"]).status
                    == .ok)
        }
    }
}
