import Foundation
import PlazaAPI

extension PlazaAPI.Notification {
    /// What happened, in the reader's language, as the web app's list and the push texts say it:
    /// whole sentences, so that a translation may put the name where its language wants it.
    func sentence(_ t: Localizer) -> String {
        switch kind {
        case .like, .boost, .edited, .comment, .reply: postSentence(t)
        case .poll: t("A poll you made or voted in has ended")
        case .follow, .mention, .followRequest, .reportResolved, .recommendation: personSentence(t)
        }
    }

    /// What someone did to a post of mine, or to one I boosted or commented on.
    private func postSentence(_ t: Localizer) -> String {
        let others = actorCount - 1
        let name = actorName
        return switch kind {
        case .like:
            others > 0
                ? t.plural(
                    others, one: "{name} and {count} other liked your post",
                    other: "{name} and {count} others liked your post", ["name": name])
                : t("{name} liked your post", ["name": name])
        case .boost:
            others > 0
                ? t.plural(
                    others, one: "{name} and {count} other boosted your post",
                    other: "{name} and {count} others boosted your post", ["name": name])
                : t("{name} boosted your post", ["name": name])
        case .edited: t("{name} edited a post you boosted or commented on", ["name": name])
        case .comment:
            others > 0
                ? t.plural(
                    others, one: "{name} and {count} other commented on your post",
                    other: "{name} and {count} others commented on your post", ["name": name])
                : t("{name} commented on your post", ["name": name])
        case .reply:
            others > 0
                ? t.plural(
                    others, one: "{name} and {count} other replied in a thread you are in",
                    other: "{name} and {count} others replied in a thread you are in", ["name": name])
                : t("{name} replied in a thread you are in", ["name": name])
        default: ""
        }
    }

    /// What someone did to me.
    private func personSentence(_ t: Localizer) -> String {
        let others = actorCount - 1
        let name = actorName
        return switch kind {
        case .follow:
            others > 0
                ? t.plural(
                    others, one: "{name} and {count} other followed you",
                    other: "{name} and {count} others followed you", ["name": name])
                : t("{name} followed you", ["name": name])
        case .mention:
            others > 0
                ? t.plural(
                    others, one: "{name} and {count} other mentioned you",
                    other: "{name} and {count} others mentioned you", ["name": name])
                : t("{name} mentioned you", ["name": name])
        case .followRequest:
            others > 0
                ? t.plural(
                    others, one: "{name} and {count} other asked to follow you",
                    other: "{name} and {count} others asked to follow you", ["name": name])
                : t("{name} asked to follow you", ["name": name])
        case .reportResolved:
            others > 0
                ? t.plural(
                    others, one: "{name} and {count} other resolved your report",
                    other: "{name} and {count} others resolved your report", ["name": name])
                : t("{name} resolved your report", ["name": name])
        case .recommendation:
            others > 0
                ? t.plural(
                    others, one: "{name} and {count} other recommended a post to you",
                    other: "{name} and {count} others recommended a post to you", ["name": name])
                : t("{name} recommended a post to you", ["name": name])
        default: ""
        }
    }

    /// Who acted: their display name (the first 120 bytes of it), else their username.
    var actorName: String {
        let trimmed = actor.displayName.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? actor.username : PushMessage.prefix(trimmed, bytes: 120)
    }
}
