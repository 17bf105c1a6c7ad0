import PlazaAPI

/// What makes a poll valid, as Mastodon limits them: 2 to 10 different options of at most 50
/// characters, ending 5 minutes to a month after it is posted (or edited).
package enum PollRules {
    package static let optionCount = 2...10
    package static let maxOptionLength = 50
    package static let expiresInSeconds = 300...2_629_746

    /// A validated poll.
    package struct Draft: Sendable, Equatable {
        var options: [String]
        var multiple: Bool
        var expiresInSeconds: Int

        /// Whether it asks the same as a poll with these options (the same way), whatever its end.
        func asks(_ options: [String], multiple: Bool) -> Bool {
            self.options == options && self.multiple == multiple
        }
    }

    package static func draft(_ input: PollInput) throws -> Draft {
        guard optionCount.contains(input.options.count) else {
            throw PlazaError.invalid(
                "poll.options", "A poll has \(optionCount.lowerBound) to \(optionCount.upperBound) options.")
        }
        let options = try input.options.map { option in
            try Validate.text(
                Validate.trustworthy(option, lines: false), field: "poll.options", max: maxOptionLength,
                required: true) ?? ""
        }
        guard Set(options.map { $0.lowercased() }).count == options.count else {
            throw PlazaError.invalid("poll.options", "A poll's options must differ.")
        }
        guard expiresInSeconds.contains(input.expiresInSeconds) else {
            throw PlazaError.invalid(
                "poll.expiresInSeconds",
                "poll.expiresInSeconds must be from \(expiresInSeconds.lowerBound) (5 minutes) to \(expiresInSeconds.upperBound) (a month)."
            )
        }
        return Draft(options: options, multiple: input.multiple ?? false, expiresInSeconds: input.expiresInSeconds)
    }

    /// The chosen options of a vote in a poll of `count` options: at least one, each once, in
    /// range, and only one unless `multiple`.
    static func choices(_ choices: [Int], count: Int, multiple: Bool) throws -> [Int] {
        guard !choices.isEmpty else { throw PlazaError.invalid("choices", "Choose at least one option.") }
        guard choices.allSatisfy({ (0..<count).contains($0) }) else {
            throw PlazaError.invalid("choices", "choices are option indexes from 0 to \(count - 1).")
        }
        guard Set(choices).count == choices.count else {
            throw PlazaError.invalid("choices", "An option is chosen twice.")
        }
        guard multiple || choices.count == 1 else {
            throw PlazaError.invalid("choices", "This poll takes one choice.")
        }
        return choices.sorted()
    }
}
