import Foundation

/// The recommendation model (docs/recommendations.md): for each person, the words of the posts
/// they viewed and, weighted by recency, of the posts they picked from search results. A viewed
/// post scores by how much likelier its words are under the person's click model than under
/// their view model (a smoothed log-likelihood ratio per word), minus an age penalty.
enum TermModel {
    /// Words: lower-cased, accents folded, 3–32 letters or digits, not only digits.
    static func terms(of text: String) -> [String: Double] {
        var counts: [String: Double] = [:]
        var word = ""
        func end() {
            if (3...32).contains(word.count), !word.allSatisfy(\.isNumber) { counts[word, default: 0] += 1 }
            word = ""
        }
        for character in text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil) {
            if character.isLetter || character.isNumber { word.append(character) } else { end() }
        }
        end()
        guard counts.count > maxTermsPerPost else { return counts }
        return Dictionary(
            uniqueKeysWithValues: counts.sorted { $0.value > $1.value || ($0.value == $1.value && $0.key < $1.key) }
                .prefix(maxTermsPerPost).map { ($0.key, $0.value) })
    }

    static let maxTermsPerPost = 200

    /// A click's words count double after `clickHalfLife` more time has passed, so recent
    /// interests outweigh old ones without rewriting the model: weights are stored scaled by
    /// 2^(t / halfLife), and only ratios of weights are ever used.
    static let clickHalfLifeMillis: Double = 30 * 86_400_000
    /// A viewed post's score falls by ln 2 for every `viewHalfLife` since it was last viewed.
    static let viewHalfLifeMillis: Double = 14 * 86_400_000
    /// Dirichlet smoothing: how many words of the view model a click model is worth at first.
    static let mu: Double = 50

    static func clickScale(at millis: Int64) -> Double {
        exp2(Double(millis) / clickHalfLifeMillis)
    }

    /// The score of a post with words `post`: the mean over its words of
    /// log( P(word | clicks, smoothed by views) / P(word | views) ), plus the age penalty.
    static func score(
        post: [String: Double], clicks: [String: Double], clickTotal: Double, views: [String: Double],
        viewTotal: Double,
        lastViewedAgoMillis: Double
    ) -> Double {
        let length = post.values.reduce(0, +)
        guard length > 0, viewTotal > 0 else { return -.infinity }
        var sum = 0.0
        for (term, count) in post {
            // Every word of a viewed post is in the view model; +1 guards against rounding.
            let background = (views[term, default: 0] + 1) / (viewTotal + Double(views.count))
            let clicked = (clicks[term, default: 0] + mu * background) / (clickTotal + mu)
            sum += count * log(clicked / background)
        }
        return sum / length - lastViewedAgoMillis / viewHalfLifeMillis * M_LN2
    }
}
