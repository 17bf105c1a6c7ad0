import Foundation

/// The player that plays a link's video inside a page: YouTube's privacy-enhanced player or
/// Vimeo's, on their own domains only, read from the link's own URL (no fetch). Anything else,
/// and any URL that does not name one video plainly, has none.
public enum VideoEmbed {
    /// The players' origins, which a page that shows them allows as frame sources.
    public static let origins = ["https://www.youtube-nocookie.com", "https://player.vimeo.com"]

    /// `https://www.youtube-nocookie.com/embed/ID[?start=S]` or
    /// `https://player.vimeo.com/video/ID[?h=HASH]` for a video page's URL; else nil.
    public static func playerURL(for link: String) -> String? {
        guard let link = Link(link) else { return nil }
        if let id = youTubeID(link) {
            let start = link.parameter("t").flatMap(seconds) ?? link.parameter("start").flatMap(seconds)
            return "https://www.youtube-nocookie.com/embed/\(id)" + (start.map { "?start=\($0)" } ?? "")
        }
        if let (id, hash) = vimeoID(host: link.host, path: link.path, h: link.parameter("h")) {
            return "https://player.vimeo.com/video/\(id)" + (hash.map { "?h=\($0)" } ?? "")
        }
        return nil
    }

    /// The id of the YouTube video a link names (`watch`, `youtu.be`, `shorts`, `live`, `embed`).
    public static func youTubeID(in link: String) -> String? { Link(link).flatMap(youTubeID) }

    /// An http(s) link's parts.
    private struct Link {
        let host: String
        let path: [Substring]
        let query: [URLQueryItem]

        init?(_ text: String) {
            guard text.utf8.count <= 2048, let url = URLComponents(string: text),
                let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
                let host = url.host?.lowercased()
            else { return nil }
            self.host = host
            path = url.percentEncodedPath.split(separator: "/", omittingEmptySubsequences: true)
            query = url.queryItems ?? []
        }

        func parameter(_ name: String) -> String? { query.first { $0.name == name }?.value }
    }

    private static func youTubeID(_ link: Link) -> String? {
        youTubeID(host: link.host, path: link.path, v: link.parameter("v"))
    }

    private static let youTubeHosts: Set<String> = [
        "youtube.com", "www.youtube.com", "m.youtube.com", "music.youtube.com", "youtube-nocookie.com",
        "www.youtube-nocookie.com",
    ]

    private static func youTubeID(host: String, path: [Substring], v: String?) -> String? {
        let candidate: Substring?
        if host == "youtu.be" {
            candidate = path.count == 1 ? path[0] : nil
        } else if youTubeHosts.contains(host) {
            if path.count == 1, path[0] == "watch" {
                candidate = v.map { Substring($0) }
            } else if path.count == 2, ["shorts", "live", "embed", "v"].contains(path[0]) {
                candidate = path[1]
            } else {
                candidate = nil
            }
        } else {
            candidate = nil
        }
        // Eleven characters of [A-Za-z0-9_-]: nothing else reaches the player's URL.
        guard let candidate, candidate.utf8.count == 11,
            candidate.utf8.allSatisfy({ isAlphanumeric($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") })
        else { return nil }
        return String(candidate)
    }

    private static func vimeoID(host: String, path: [Substring], h: String?) -> (String, String?)? {
        var id: Substring?
        var hash: Substring?
        switch host {
        case "vimeo.com", "www.vimeo.com":
            if path.count >= 1, isNumber(path[0]) {
                id = path[0]
                hash = path.count == 2 ? path[1] : nil
                if path.count > 2 { return nil }
            } else if path.count == 3, path[0] == "channels" {
                id = path[2]
            } else if path.count == 4, ["groups", "album", "showcase"].contains(path[0]),
                ["videos", "video"].contains(path[2])
            {
                id = path[3]
            }
        case "player.vimeo.com":
            if path.count == 2, path[0] == "video" {
                id = path[1]
                hash = h.map { Substring($0) }
            }
        default: return nil
        }
        guard let id, isNumber(id), id.utf8.count <= 12 else { return nil }
        if let hash, hash.isEmpty || hash.utf8.count > 20 || !hash.utf8.allSatisfy(isAlphanumeric) { return nil }
        return (String(id), hash.map(String.init))
    }

    /// `76`, `76s`, `1m16s` or `1h2m3s` as seconds (at most a day); nil for anything else.
    static func seconds(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 12 else { return nil }
        var total = 0
        var number = 0
        var digits = 0
        for byte in text.utf8 {
            if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                number = number * 10 + Int(byte - UInt8(ascii: "0"))
                digits += 1
                guard digits <= 6 else { return nil }
                continue
            }
            guard digits > 0 else { return nil }
            switch byte {
            case UInt8(ascii: "h"): total += number * 3600
            case UInt8(ascii: "m"): total += number * 60
            case UInt8(ascii: "s"): total += number
            default: return nil
            }
            number = 0
            digits = 0
        }
        total += number
        return total > 0 && total <= 86_400 ? total : nil
    }

    private static func isNumber(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
    }
}
