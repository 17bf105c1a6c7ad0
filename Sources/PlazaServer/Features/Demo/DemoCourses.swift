import PlazaAPI

/// The course board (seed app 000) and a run club: spaces with owners, moderators and members,
/// questions answered in their comments, and a closed space whose join requests wait for a
/// moderator — the demo account.
enum DemoCourses {
    struct SpacePlan {
        let slug: String
        let name: String
        let description: String
        var visibility: SpaceVisibility = .open
        let owner: String
        let moderators: [String]
        let members: [String]
        let colours: (String, String)
        /// What its square picture says.
        let badge: String
    }

    static let spaces = [
        SpacePlan(
            slug: "cs101", name: "CS 101: Introduction to Programming",
            description: "Questions, answers and announcements for CS 101. Be kind, show your code.",
            owner: "okafor", moderators: ["emily"], members: ["marcus", "leo", "sofia", "demo", "jon"],
            colours: ("#4f7cff", "#2bb673"), badge: "CS\n101"),
        SpacePlan(
            slug: "math120", name: "MATH 120: Calculus I",
            description: "Limits, derivatives and the occasional integral. Problem sets every Friday.",
            owner: "okafor", moderators: ["sofia"], members: ["marcus", "demo", "emily"],
            colours: ("#8e44ad", "#ff7a59"), badge: "MATH\n120"),
        SpacePlan(
            slug: "thesis-lab", name: "Thesis Writing Lab",
            description: "A closed group for final-year students writing their theses. Ask to join.",
            visibility: .closed, owner: "okafor", moderators: ["demo"], members: ["jon", "priya"],
            colours: ("#2c3e50", "#d9a441"), badge: "THESIS\nLAB"),
        SpacePlan(
            slug: "run-club", name: "Riverside Run Club",
            description: "Saturday 8 am at the boathouse. All paces welcome.",
            owner: "priya", moderators: ["noor"], members: ["jon", "demo"], colours: ("#ff7a59", "#d9a441"),
            badge: "RUN\nCLUB"),
    ]

    static func seed(_ world: DemoWorld) async throws {
        for plan in spaces { try await make(plan, world) }
        // A request to the closed lab that its moderator (the demo account) has not answered.
        try await ask("thesis-lab", by: "marcus", world)
        try await questions(world)
        try await reviewPoll(world)
    }

    /// A course's poll, still open, that three students voted in and the demo account may.
    private static func reviewPoll(_ world: DemoWorld) async throws {
        var draft = world.text(nil, "Which topic should Friday's review session cover?", in: ["cs101"])
        draft.poll = PollRules.Draft(
            options: ["Recursion", "Loops and ranges", "Lists and dictionaries", "Reading error messages"],
            multiple: false, expiresInSeconds: 7 * 86_400)
        let post = try await world.post("okafor", draft, daysAgo: 0.5)
        for (student, choice) in [("emily", 0), ("marcus", 0), ("leo", 3)] {
            _ = try await world.actions.posts.vote(in: post, by: world.id(student), choices: [choice])
        }
    }

    private static func make(_ plan: SpacePlan, _ world: DemoWorld) async throws {
        let owner = try world.id(plan.owner)
        let banner = DemoPictures.Picture(
            from: plan.colours.0, to: plan.colours.1, caption: plan.badge, width: 640, height: 640,
            seed: plan.slug.count, fontSize: 120)
        let image = try await world.upload(plan.owner, banner.jpeg(), description: nil)
        let space = try await world.actions.spaces.create(
            by: owner,
            SpaceStore.Draft(
                slug: plan.slug, name: plan.name, description: plan.description, imageID: image,
                visibility: plan.visibility))
        guard let spaceID = parseID(space.id) else { throw PlazaError.notFound("Space") }
        for member in plan.moderators + plan.members {
            let person = try world.id(member)
            if plan.visibility == .closed {
                try await ask(plan.slug, by: member, world)
                try await world.services.spaceMembers.answer(requestOf: person, to: spaceID, approve: true, by: owner)
            } else {
                _ = try await world.actions.spaces.join(plan.slug, by: person)
            }
        }
        for moderator in plan.moderators {
            try await world.services.spaceMembers.setRole(.moderator, of: world.id(moderator), in: spaceID, by: owner)
        }
    }

    /// `person` asks to join the closed space at `slug`.
    private static func ask(_ slug: String, by person: String, _ world: DemoWorld) async throws {
        let id = try world.id(person)
        try await world.services.spaceMembers.request(world.services.spaces.key(slug: slug, viewer: id), by: id)
    }

    /// A post in a space, with its answers (comments) and likes.
    struct Thread {
        let space: String
        let author: String
        let title: String
        let body: String
        let daysAgo: Double
        var answers: [(String, String)] = []
        var likedBy: [String] = []
    }

    static let threads = [
        Thread(
            space: "cs101", author: "okafor", title: "Welcome to CS 101",
            body:
                "Post your questions here, answer each other's, and like the answers that helped. Office hours: Tuesdays 2–4 pm.",
            daysAgo: 40, likedBy: ["emily", "marcus", "leo", "demo"]),
        Thread(
            space: "cs101", author: "marcus", title: "Why does my recursive function never stop?",
            body:
                "I wrote factorial(n) = n * factorial(n - 1) and it crashes with a stack overflow. What am I missing?",
            daysAgo: 12,
            answers: [
                ("emily", "You need a base case: if n <= 1, return 1. Without it the calls never bottom out."),
                ("leo", "Same thing happened to me with Fibonacci last week."), ("marcus", "That was it, thank you!"),
            ], likedBy: ["emily", "demo", "leo"]),
        Thread(
            space: "cs101", author: "leo", title: "Is a list comprehension faster than a for loop?",
            body: "Both give me the same list. Is one of them better style, or faster?", daysAgo: 6,
            answers: [
                (
                    "emily",
                    "Usually a little faster, and clearer when it is one simple expression. Use a loop when it gets long."
                ),
                ("okafor", "Measure before you optimise: write the clear one first."),
            ], likedBy: ["marcus"]),
        Thread(
            space: "cs101", author: "emily", title: "Office hours moved to Thursday",
            body: "This week only, office hours are Thursday 3–5 pm in room 204. Bring your loop questions!",
            daysAgo: 2, likedBy: ["marcus", "leo"]),
        Thread(
            space: "cs101", author: "demo", title: "What does 'off by one' mean?",
            body: "My loop prints 11 numbers instead of 10. Is that an off-by-one?", daysAgo: 1,
            answers: [
                ("emily", "Yes! Check whether your range should stop before 10 or at 10: range(10) gives 0 to 9."),
                ("marcus", "Classic. I do it every week."),
            ], likedBy: ["emily"]),
        Thread(
            space: "math120", author: "marcus", title: "Is the midterm cumulative?",
            body: "Does the midterm cover chapter 1 too, or only chapters 2–4?", daysAgo: 9,
            answers: [("sofia", "Chapters 1–4, but chapter 1 is only a couple of warm-up questions.")],
            likedBy: ["demo"]),
        Thread(
            space: "math120", author: "sofia", title: "Problem set 5: chain rule tips",
            body:
                "Write the outside function first, keep the inside as it is, then multiply by the inside's derivative.",
            daysAgo: 4, likedBy: ["marcus", "emily", "demo"]),
        Thread(
            space: "thesis-lab", author: "okafor", title: "Draft chapters due on the 15th",
            body:
                "Send your literature review draft to your supervisor by the 15th. Peer review pairs are in the pinned doc.",
            daysAgo: 5, answers: [("jon", "Could I swap pairs with Priya?"), ("demo", "Done, swapped you two.")]),
        Thread(
            space: "run-club", author: "priya", title: "Saturday long run: 12 km",
            body: "Easy pace along the river. Coffee after at the boathouse kiosk.", daysAgo: 3,
            answers: [("noor", "I'll bring the new folks from work."), ("jon", "Count me in for 8 km.")],
            likedBy: ["noor", "jon", "demo"]),
    ]

    /// The threads, oldest first.
    private static func questions(_ world: DemoWorld) async throws {
        for thread in threads.sorted(by: { $0.daysAgo > $1.daysAgo }) {
            try await world.post(
                thread.author, world.text(thread.title, thread.body, in: [thread.space]), daysAgo: thread.daysAgo,
                comments: thread.answers, likedBy: thread.likedBy)
        }
    }
}
