import PlazaAPI

/// A hashtag: its key, folded as search folds text (`#Café`, `#CAFE` and `#café` are one tag),
/// and a form people wrote it in, which pages show.
package struct Hashtag: Sendable, Hashable {
    package let key: String
    package let name: String

    /// The most tags one post may carry (a tag's page and followers are reached through each).
    static let maxPerPost = 10

    /// The tag `name` (as written, without `#`), or nil when it is not one (`PostText`'s rules).
    package init?(_ name: String) {
        guard PostText.segments(of: "#" + name) == [.hashtag(name)] else { return nil }
        self.init(written: name)
    }

    /// A name `PostText` read as a tag.
    private init?(written name: String) {
        let key = SearchFolding.fold(name)
        guard !key.isEmpty else { return nil }
        self.key = key
        self.name = name
    }

    /// The tags of `texts`, each once by key (first written form kept), in order.
    package static func tags(in texts: String?...) -> [Hashtag] {
        var seen = Set<String>()
        var tags: [Hashtag] = []
        for text in texts {
            for name in PostText.hashtags(in: text) {
                guard let tag = Hashtag(written: name), seen.insert(tag.key).inserted else { continue }
                tags.append(tag)
            }
        }
        return tags
    }

    /// The keys of the tags of a post's title and text, as `Post.tags` gives them.
    static func keys(title: String?, body: String?) -> [String] {
        guard title?.unicodeScalars.contains("#") == true || body?.unicodeScalars.contains("#") == true else {
            return []
        }
        return tags(in: title, body).map(\.key)
    }
}
