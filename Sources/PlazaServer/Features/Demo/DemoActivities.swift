import PlazaAPI

/// The friends' activity tracker (seed app 001): ten weeks of runs, rides, swims, reading and
/// baking, so heatmaps, streaks and the pie of activity types mean something. The same world
/// each time: the days come from a fixed sequence, not from chance.
enum DemoActivities {
    struct Habit {
        let type: String
        let emoji: String
        let colour: String
        /// Out of 7: on how many days of a week it is done.
        let daysAWeek: Int
        let notes: [String]
    }

    static let habits: [String: [Habit]] = [
        "priya": [
            Habit(
                type: "Running", emoji: "🏃", colour: "#ff7a59", daysAWeek: 4,
                notes: ["5 km before breakfast.", "Intervals at the track: 6 × 400 m.", "Easy 8 km along the river."]),
            Habit(
                type: "Reading", emoji: "📚", colour: "#4f7cff", daysAWeek: 2,
                notes: ["Two chapters of 'Born to Run'.", "Finished the book club pick."]),
        ],
        "noor": [
            Habit(
                type: "Cycling", emoji: "🚴", colour: "#2bb673", daysAWeek: 4,
                notes: ["Rode to work, 11 km.", "Hill repeats on the old road.", "Commute with a tailwind!"]),
            Habit(
                type: "Swimming", emoji: "🏊", colour: "#00a3c4", daysAWeek: 1,
                notes: ["40 lengths, mostly front crawl.", "Open water at the lake."]),
        ],
        "jon": [
            Habit(
                type: "Reading", emoji: "📚", colour: "#4f7cff", daysAWeek: 3,
                notes: ["'The Pragmatic Programmer', a chapter a night.", "Twenty pages on the train."]),
            Habit(
                type: "Sourdough", emoji: "🍞", colour: "#d9a441", daysAWeek: 1,
                notes: ["Starter is bubbling, bake tomorrow.", "Best crumb yet."]),
        ],
        "demo": [
            Habit(
                type: "Running", emoji: "🏃", colour: "#ff7a59", daysAWeek: 3,
                notes: ["Couch to 5K, week by week.", "Ran the whole way without stopping!"]),
            Habit(
                type: "Learning Plaza", emoji: "🧭", colour: "#2bb673", daysAWeek: 2,
                notes: ["Poking around the API.", "Made my first collection."]),
        ],
    ]

    static let weeks = 10

    static func seed(_ world: DemoWorld) async throws {
        var numbers = Numbers(state: 20_261_201)
        // Oldest first, so the posts' ids follow their dates as they would have.
        var plans: [(daysAgo: Double, person: String, habit: Habit, note: String, progress: Int)] = []
        for (person, list) in habits.sorted(by: { $0.key < $1.key }) {
            for habit in list {
                for day in stride(from: weeks * 7 - 1, through: 0, by: -1)
                where numbers.next(below: 7) < habit.daysAWeek {
                    let hour = 6 + Double(numbers.next(below: 14)) + Double(numbers.next(below: 60)) / 60
                    // Most days are done; now and then one is still under way.
                    let progress = numbers.next(below: 6) == 0 ? 25 * (1 + numbers.next(below: 3)) : 100
                    let note = habit.notes[numbers.next(below: habit.notes.count)]
                    plans.append((Double(day) + 1 - hour / 24, person, habit, note, progress))
                }
            }
        }
        for plan in plans.sorted(by: { $0.daysAgo > $1.daysAgo }) {
            let draft = try world.activity(
                plan.habit.type, plan.habit.emoji, plan.habit.colour, plan.progress, plan.note, daysAgo: plan.daysAgo)
            let likers = ["priya", "noor", "jon", "demo"].filter { $0 != plan.person }
            try await world.post(
                plan.person, draft, daysAgo: plan.daysAgo,
                likedBy: plan.daysAgo < 7 ? Array(likers.prefix(1 + Int(plan.daysAgo) % 3)) : [])
        }
        try await world.post(
            "priya", world.activity("Running", "🏃", "#ff7a59", 100, "Half marathon done! 1:58:40.", daysAgo: 0.3),
            daysAgo: 0.3,
            comments: [("jon", "Beast mode!"), ("noor", "Under two hours, amazing."), ("demo", "Congratulations!")],
            likedBy: ["jon", "noor", "demo", "emily"])
    }

    /// A linear congruential sequence: the same numbers from the same state, everywhere.
    struct Numbers {
        var state: UInt64

        mutating func next(below bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(max(bound, 1)))
        }
    }
}
