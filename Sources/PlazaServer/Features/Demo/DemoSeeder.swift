import Foundation
import Logging
import PlazaAPI

/// A living world from the five seed apps, so a newcomer sees what Plaza is for at once:
/// courses with questions, answers and moderators; friends tracking ten weeks of activities; a
/// meme page and a food feed with pictures, places, prices and a video; collections of saved
/// posts and links; and, waiting for the demo account and the administrator, notifications, a
/// follow request, a request to join a space and a report.
public struct DemoSeeder: Sendable {
    public static let demoUsername = "demo"
    public static let adminUsername = "admin"
    /// Every demo account's password.
    public static let demoPassword = "plaza-demo"

    public enum Outcome: Sendable, Equatable {
        case seeded(users: Int, posts: Int)
        case alreadySeeded
    }

    let services: AppServices
    let logger: Logger

    struct Person {
        let username: String
        let displayName: String
        let bio: String
        var status: StatusInput? = nil
        var isAdmin = false
    }

    static let people = [
        Person(username: demoUsername, displayName: "Demo Person", bio: "Kicking the tyres of Plaza."),
        Person(
            username: adminUsername, displayName: "Plaza Admin", bio: "Keeps this instance tidy.", isAdmin: true),
        Person(username: "okafor", displayName: "Dr. Ada Okafor", bio: "Lecturer in computing and mathematics."),
        Person(username: "emily", displayName: "Emily Chen", bio: "CS 101 TA. Ask me about recursion."),
        Person(username: "marcus", displayName: "Marcus Hall", bio: "First-year student, second-year coffee drinker."),
        Person(username: "sofia", displayName: "Sofia Rossi", bio: "Maths, climbing, too many notebooks."),
        Person(username: "leo", displayName: "Leo Martin", bio: "Learning to code one bug at a time."),
        Person(
            username: "priya", displayName: "Priya Nair", bio: "Running, reading, repeating.",
            status: StatusInput(kind: "safe", text: "Home and safe")),
        Person(username: "jon", displayName: "Jon Park", bio: "Trying to finish one thing a day."),
        Person(username: "noor", displayName: "Noor Haddad", bio: "Cycling to work, swimming on Sundays."),
        Person(username: "memerly", displayName: "Memerly", bio: "Fresh memes, daily."),
        Person(username: "eatstagram", displayName: "Eat Stagram", bio: "Food I ate so you can too."),
        Person(username: "cheapfollowers", displayName: "Cheap Followers", bio: "Grow your audience fast!!!"),
    ]

    func seed() async throws -> Outcome {
        if (try? await services.people.userID(username: Self.demoUsername)) != nil { return .alreadySeeded }
        let world = DemoWorld(services: services, logger: logger)
        let hash = try await services.passwords.hash(Self.demoPassword)
        for person in Self.people { try await world.add(person, passwordHash: hash) }
        for (follower, followees) in [
            "demo": ["emily", "priya", "jon", "memerly", "eatstagram", "okafor"], "priya": ["jon", "demo", "noor"],
            "jon": ["priya", "noor"], "noor": ["priya", "jon", "demo"], "marcus": ["emily", "memerly"],
            "emily": ["marcus", "okafor"], "sofia": ["emily", "eatstagram"], "leo": ["memerly", "emily"],
            "okafor": ["emily"],
        ] {
            try await world.follow(follower, followees)
        }
        try await DemoCourses.seed(world)
        try await DemoActivities.seed(world)
        try await DemoPictureFeeds.seed(world)
        try await DemoCollections.seed(world)
        try await waiting(world)
        return .seeded(users: Self.people.count, posts: world.posts)
    }

    /// What the demo account and the administrator find waiting: a follow request (the demo
    /// account asks before anyone follows it), replies to their posts, and a report.
    private func waiting(_ world: DemoWorld) async throws {
        try await world.actions.people.setLocked(world.id(Self.demoUsername), true)
        try await world.follow("leo", [Self.demoUsername])
        let spam = try await world.post(
            "cheapfollowers",
            world.text("10,000 followers for $5", "Buy followers today!!! Real people, instant delivery, DM us."),
            daysAgo: 2.2)
        _ = try await world.actions.moderation.report(
            by: world.id("priya"), type: .post, target: spam, reason: .spam,
            note: "Posts the same ad every day.")
    }
}
