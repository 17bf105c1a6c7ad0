import Crypto
import Foundation
import NIOConcurrencyHelpers
import PlazaAPI

/// Capability URLs for media that are not public: `/media/{id}/{variant}?k={key}&r={reader}&e={expiry}&s={mac}`,
/// for apps whose image loaders send no credentials (Mastodon apps). The MAC (HMAC-SHA256, under
/// a key kept in the database, `ServerKeyStore`'s `media-url`, so every app server signs alike)
/// binds the media, the variant, the reader and the expiry. A valid URL makes its request act as
/// the reader, so the post's visibility is checked again at every fetch: the URL stops working
/// once the reader may no longer read the post (unfollowed, blocked, out of the space, the post
/// deleted or narrowed) and once it expires.
///
/// The window: a URL handed out is valid for 24 to 30 hours. Expiries are rounded up to the end
/// of a 6-hour bucket, so one reader gets the same URL for a media item for 6 hours, and clients'
/// image caches hit; 24 hours covers an app that keeps the statuses it loaded for a day. Past
/// that, the app loads the status again and gets a new URL.
package final class MediaCapabilities: Sendable {
    /// The shortest validity of a URL handed out, in seconds.
    static let lifetime: Int64 = 24 * 3600
    /// Expiries are rounded up to a multiple of this (seconds), so URLs stay the same that long.
    static let bucket: Int64 = 6 * 3600
    /// The longest validity any URL can have.
    static var longest: Int64 { lifetime + bucket }

    private let keys: ServerKeyStore
    private let cached = NIOLockedValueBox<SymmetricKey?>(nil)

    init(keys: ServerKeyStore) { self.keys = keys }

    private func key() async throws -> SymmetricKey {
        if let key = cached.withLockedValue({ $0 }) { return key }
        let key = SymmetricKey(data: try await keys.key("media-url"))
        cached.withLockedValue { $0 = key }
        return key
    }

    /// The expiry of URLs handed out at `now` (unix seconds).
    static func expiry(now: Int64) -> Int64 { (now + lifetime + bucket - 1) / bucket * bucket }

    /// Signs URLs for `reader`, handed out at `now` (unix seconds; `expires` overrides the expiry).
    package func signer(for reader: Int64, now: Int64 = Int64(Date().timeIntervalSince1970), expires: Int64? = nil)
        async throws -> MediaURLSigner
    {
        MediaURLSigner(key: try await key(), reader: reader, expires: expires ?? Self.expiry(now: now))
    }

    /// The reader a presented capability names, when it is valid for media `id`'s `variant` at
    /// `now`, with the seconds it has left; nil when it is not (tampered, expired, for other media).
    func reader(of capability: MediaCapability, id: Int64, variant: String, now: Int64) async throws -> (
        reader: Int64, remaining: Int64
    )? {
        Self.reader(of: capability, id: id, variant: variant, now: now, key: try await key())
    }

    /// The check itself, under `key`. The MAC is compared in constant time.
    static func reader(of capability: MediaCapability, id: Int64, variant: String, now: Int64, key: SymmetricKey)
        -> (reader: Int64, remaining: Int64)?
    {
        guard capability.expires > now, capability.expires - now <= longest else { return nil }
        let message = MediaURLSigner.message(
            id: String(id), variant: variant, reader: capability.reader, expires: capability.expires)
        guard HMAC<SHA256>.isValidAuthenticationCode(capability.mac, authenticating: message, using: key) else {
            return nil
        }
        return (capability.reader, capability.expires - now)
    }
}

/// Signs media URLs for one reader until one expiry (`MediaCapabilities.signer`).
package struct MediaURLSigner: Sendable {
    let key: SymmetricKey
    package let reader: Int64
    /// Unix seconds.
    package let expires: Int64

    static func message(id: String, variant: String, reader: Int64, expires: Int64) -> Data {
        Data("plaza-media-v1\n\(id)\n\(variant)\n\(reader)\n\(expires)".utf8)
    }

    /// `url` (`/media/{id}/{variant}?k={key}`) with the reader, expiry and MAC appended.
    func sign(_ url: String, id: String, variant: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(
            for: Self.message(id: id, variant: variant, reader: reader, expires: expires), using: key)
        return url + "&r=\(reader)&e=\(expires)&s=" + ByteText.base64url(mac)
    }

    /// `media` with every URL a capability of the reader's.
    package func sign(_ media: Media) -> Media {
        var signed = media
        signed.variants = Media.Variants(
            thumbnail: sign(media.variants.thumbnail, id: media.id, variant: "thumbnail"),
            medium: sign(media.variants.medium, id: media.id, variant: "medium"),
            original: sign(media.variants.original, id: media.id, variant: "original"))
        signed.url = media.url == media.variants.original ? signed.variants.original : media.url
        return signed
    }
}

/// The capability a media request presents in its query (`r`, `e`, `s`), parsed strictly: the
/// query is untrusted, so anything not of the issued shape is refused without trapping.
struct MediaCapability: Sendable, Equatable {
    var reader: Int64
    /// Unix seconds.
    var expires: Int64
    var mac: [UInt8]

    /// What a request's query says: no capability, a well-formed one, or a malformed one (a 404).
    enum Presented: Sendable, Equatable {
        case none
        case malformed
        case capability(MediaCapability)
    }

    /// `reader`, `expires` and `mac` as the query carries them (nil: absent).
    static func parse(reader: String?, expires: String?, mac: String?) -> Presented {
        if reader == nil, expires == nil, mac == nil { return .none }
        guard let reader, let expires, let mac,
            let readerID = digits(reader, max: 19), readerID > 0,
            let expiry = digits(expires, max: 12),
            mac.utf8.count == 43, let bytes = ByteText.bytes(base64url: mac), bytes.count == 32
        else { return .malformed }
        return .capability(MediaCapability(reader: readerID, expires: expiry, mac: bytes))
    }

    /// A positive decimal number of at most `max` digits, without sign or leading zero.
    private static func digits(_ text: String, max: Int) -> Int64? {
        let utf8 = text.utf8
        guard (1...max).contains(utf8.count), utf8.first != UInt8(ascii: "0"),
            utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        return Int64(text)
    }
}
