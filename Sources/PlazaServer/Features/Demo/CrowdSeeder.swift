import Foundation
import Logging
import PlazaAPI

/// A large world for trying Plaza's scale by hand (`plaza seed --large`): thousands of people
/// who follow each other, join spaces and post text, activities and now and then a picture
/// over the last three months, all through the core's actions. The same world each time for
/// the same sizes; seeding again does nothing.
public struct CrowdSeeder: Sendable {
    public enum Outcome: Sendable, Equatable {
        case seeded(users: Int, posts: Int, follows: Int)
        case alreadySeeded
    }

    let services: AppServices
    let logger: Logger
    let people: Int
    let posts: Int
    /// Each person follows about this many others.
    var followsEach = 20

    public static let defaultPeople = 2_000
    public static let defaultPosts = 20_000

    static func username(_ n: Int) -> String { "crowd\(n)" }

    static let firstNames = [
        "Ada", "Ben", "Chloe", "Dev", "Elif", "Farah", "Gus", "Hana", "Ivan", "Jade", "Kofi", "Lena", "Mateo", "Nia",
        "Omar", "Pia", "Quinn", "Rosa", "Sami", "Tara", "Uma", "Vik", "Wen", "Xavi", "Yara", "Zeke",
    ]
    static let lastNames = [
        "Abara", "Berg", "Costa", "Dube", "Eze", "Fischer", "Garcia", "Haddad", "Ito", "Jensen", "Kaur", "Lopez",
        "Moreau", "Nakamura", "Okoro", "Petrov", "Quispe", "Rossi", "Sato", "Tan", "Usman", "Varga", "Wong", "Yilmaz",
    ]
    static let lines = [
        "Coffee first, then everything else.", "Anyone else studying for the exam this weekend?",
        "Found a great new trail by the river.", "Trying a new recipe tonight: wish me luck.",
        "Finally fixed that bug from last week.", "The library is packed today.", "Rainy day, good book.",
        "Who is going to the meetup on Thursday?", "Small win: finished my to-do list before noon.",
        "Hot take: breakfast for dinner is the best dinner.",
    ]
    static let activities: [(String, String, String)] = [
        ("Running", "🏃", "#ff7a59"), ("Cycling", "🚴", "#2bb673"), ("Reading", "📚", "#4f7cff"),
        ("Swimming", "🏊", "#00a3c4"), ("Yoga", "🧘", "#8e44ad"),
    ]

    public func seed(progress: @Sendable (String) -> Void = { _ in }) async throws -> Outcome {
        if (try? await services.people.userID(username: Self.username(1))) != nil { return .alreadySeeded }
        let world = DemoWorld(services: services, logger: logger)
        var numbers = DemoActivities.Numbers(state: UInt64(people) &* 1_000_003 &+ UInt64(posts))
        let hash = try await services.passwords.hash(DemoSeeder.demoPassword)
        for n in 1...people {
            let name = "\(Self.firstNames[n % Self.firstNames.count]) \(Self.lastNames[(n / 7) % Self.lastNames.count])"
            try await world.add(
                DemoSeeder.Person(username: Self.username(n), displayName: name, bio: "One of the crowd."),
                passwordHash: hash, avatar: false)
            if n % 500 == 0 { progress("\(n) of \(people) people") }
        }
        var follows = 0
        for n in 1...people {
            var followees = Set<Int>()
            for _ in 0..<min(followsEach, people - 1) {
                let other = 1 + numbers.next(below: people)
                if other != n { followees.insert(other) }
            }
            try await world.follow(Self.username(n), followees.sorted().map(Self.username))
            follows += followees.count
            if n % 500 == 0 { progress("\(n) of \(people) people's follows") }
        }
        for n in 0..<posts {
            // Oldest first, over the last ninety days.
            let daysAgo = 90 * Double(posts - n) / Double(posts)
            let author = Self.username(1 + numbers.next(below: people))
            try await world.post(author, draft(&numbers, world, author: author, daysAgo: daysAgo), daysAgo: daysAgo)
            if (n + 1) % 2_000 == 0 { progress("\(n + 1) of \(posts) posts") }
        }
        return .seeded(users: people, posts: posts, follows: follows)
    }

    /// One post of the mix: mostly text, a third activities, one in twenty with a picture.
    private func draft(
        _ numbers: inout DemoActivities.Numbers, _ world: DemoWorld, author: String, daysAgo: Double
    ) async throws -> PostStore.Draft {
        let roll = numbers.next(below: 20)
        let line = Self.lines[numbers.next(below: Self.lines.count)]
        switch roll {
        case 0:
            let colours = DemoWorld.avatarColours[numbers.next(below: DemoWorld.avatarColours.count)]
            let picture = DemoPictures.Picture(
                from: colours.0, to: colours.1, caption: nil, width: 480, height: 480, seed: numbers.next(below: 99))
            return try await world.photos(author, [picture], body: line)
        case 1...7:
            let (type, emoji, colour) = Self.activities[numbers.next(below: Self.activities.count)]
            let progress = numbers.next(below: 4) == 0 ? 50 : 100
            return try world.activity(type, emoji, colour, progress, line, daysAgo: daysAgo)
        default:
            return world.text(nil, line)
        }
    }
}
