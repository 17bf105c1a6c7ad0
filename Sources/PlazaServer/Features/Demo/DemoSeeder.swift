import PlazaAPI

/// A small living world from the five seed apps, so a newcomer sees a real app at once:
/// a course board with questions and answers, friends tracking activities, a meme page and
/// food posts with places and prices.
public struct DemoSeeder: Sendable {
    public static let demoUsername = "demo"
    public static let demoPassword = "plaza-demo"

    public enum Outcome: Sendable, Equatable {
        case seeded(users: Int, posts: Int)
        case alreadySeeded
    }

    let services: AppServices

    struct Person {
        let username: String
        let displayName: String
        let bio: String
        var status: StatusInput? = nil
    }

    static let people = [
        Person(username: demoUsername, displayName: "Demo Person", bio: "Kicking the tyres of Plaza."),
        Person(username: "emily", displayName: "Emily Chen", bio: "CS 101 TA. Ask me about recursion."),
        Person(username: "marcus", displayName: "Marcus Hall", bio: "First-year student, second-year coffee drinker."),
        Person(
            username: "priya", displayName: "Priya Nair", bio: "Running, reading, repeating.",
            status: StatusInput(kind: "safe", text: "Home and safe 🏡")),
        Person(username: "jon", displayName: "Jon Park", bio: "Trying to finish one thing a day."),
        Person(username: "memerly", displayName: "Memerly", bio: "Fresh memes, daily."),
        Person(username: "eatstagram", displayName: "Eat Stagram", bio: "Food I ate so you can too."),
    ]

    func seed() async throws -> Outcome {
        if (try? await services.people.userID(username: Self.demoUsername)) != nil { return .alreadySeeded }
        var ids: [String: Int64] = [:]
        let hash = try await services.passwords.hash(Self.demoPassword)
        for person in Self.people {
            let id = try await services.accounts.createUser(
                .init(
                    username: person.username, email: "\(person.username)@demo.plaza.test", passwordHash: hash,
                    displayName: person.displayName, emailVerified: true))
            try await services.accounts.updateProfile(
                userID: id, displayName: nil, bio: person.bio, status: person.status.map(FieldUpdate.set) ?? .keep)
            ids[person.username] = id
        }
        let world = World(services: services, ids: ids)
        for (follower, followees) in [
            "demo": ["emily", "priya", "jon", "memerly", "eatstagram"], "priya": ["jon", "demo"], "jon": ["priya"],
            "marcus": ["emily"], "emily": ["marcus"],
        ] {
            for followee in followees {
                try await services.people.follow(follower: world.id(follower), followee: world.id(followee))
            }
        }
        try await coursesAndActivities(world)
        try await memesAndFood(world)
        return .seeded(users: Self.people.count, posts: world.posts)
    }

    /// The people by username, how their posts are written, and how many were.
    final class World {
        let services: AppServices
        let ids: [String: Int64]
        private(set) var posts = 0

        init(services: AppServices, ids: [String: Int64]) {
            self.services = services
            self.ids = ids
        }

        func id(_ name: String) -> Int64 { ids[name] ?? 0 }

        func post(_ author: String, _ draft: PostStore.Draft, comments: [(String, String)] = [], likedBy: [String] = [])
            async throws
        {
            let created = try await services.posts.create(author: id(author), draft)
            guard let postID = parseID(created.id) else { return }
            for (who, text) in comments {
                _ = try await services.comments.create(post: postID, author: id(who), body: text)
            }
            for who in likedBy { _ = try await services.likes.set(post: postID, user: id(who), liked: true) }
            posts += 1
        }

        func text(_ title: String?, _ body: String) -> PostStore.Draft {
            PostStore.Draft(kind: .text, title: title, body: body)
        }

        func activity(_ type: String, _ emoji: String, _ color: String, _ progress: Int, _ body: String) throws
            -> PostStore.Draft
        {
            let value = try PostRules.activity(
                Activity(type: type, emoji: nil, color: nil, progress: 0, completedAt: nil),
                applying: ActivityInput(emoji: emoji, color: color, progress: progress))
            return PostStore.Draft(kind: .activity, body: body, activity: value)
        }

        func food(_ body: String, _ place: String, _ lat: Double, _ lon: Double, price: String?) -> PostStore.Draft {
            PostStore.Draft(
                kind: .text, body: body, location: Location(latitude: lat, longitude: lon, name: place), price: price)
        }
    }

    /// The course board's questions and the friends' activities.
    private func coursesAndActivities(_ world: World) async throws {
        // Course Q&A (seed 000)
        try await world.post(
            "marcus",
            world.text(
                "CS 101: why does my recursive function never stop?",
                "I wrote factorial(n) = n * factorial(n - 1) and it crashes with a stack overflow. What am I missing?"),
            comments: [
                ("emily", "You need a base case: if n <= 1 return 1. Without it the calls never bottom out."),
                ("marcus", "That was it, thank you!"),
            ], likedBy: ["emily", "demo"])
        try await world.post(
            "emily",
            world.text(
                "CS 101: office hours moved to Thursday",
                "This week only, office hours are Thursday 3–5 pm in room 204. Bring your loop questions!"),
            likedBy: ["marcus"])
        try await world.post(
            "marcus",
            world.text(
                "MATH 120: is the midterm cumulative?", "Does the midterm cover chapter 1 too or only chapters 2–4?"),
            comments: [("emily", "Chapters 1–4, but chapter 1 is only a couple of warm-up questions.")])
        // Activity tracking (seed 001)
        try await world.post(
            "priya", try world.activity("Running", "🏃", "#ff7a59", 100, "5 km before breakfast. Done!"),
            comments: [("jon", "Beast mode 🔥")], likedBy: ["jon", "demo"])
        try await world.post(
            "jon",
            try world.activity("Reading", "📚", "#4f7cff", 40, "Reading 'The Pragmatic Programmer', 40% through."),
            likedBy: ["priya"])
        try await world.post(
            "priya", try world.activity("Sourdough", "🍞", "#d9a441", 70, "Starter is bubbling, bake tomorrow."))
        try await world.post("demo", try world.activity("Learning Plaza", "🧭", "#2bb673", 20, "Poking around the API."))
    }

    /// The meme page and the food posts.
    private func memesAndFood(_ world: World) async throws {
        // Memes (seed 003)
        try await world.post(
            "memerly", world.text(nil, "When the code works on the first try and you don't know why 😳"),
            comments: [("marcus", "every single time")], likedBy: ["marcus", "jon", "demo"])
        try await world.post(
            "memerly", world.text(nil, "My plants after I remember to water them once a month: 🌵"), likedBy: ["priya"])
        // Food with places and prices (seed 004)
        try await world.post(
            "eatstagram",
            world.food(
                "Crispy pork belly bao, worth the queue.", "Bao Haus, Lower East Side", 40.7190, -73.9880, price: "$9"),
            comments: [("demo", "Adding this to my list!")], likedBy: ["demo", "priya"])
        try await world.post(
            "eatstagram",
            world.food(
                "Homemade shakshuka with too much feta (there is no such thing).", "Home kitchen", 40.6782, -73.9442,
                price: nil))
        try await world.post(
            "eatstagram",
            world.food("Matcha soft serve on a rainy day.", "Tea Lab, Williamsburg", 40.7081, -73.9571, price: "$6"),
            likedBy: ["jon"])
    }
}
