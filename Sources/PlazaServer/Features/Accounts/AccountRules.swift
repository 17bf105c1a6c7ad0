/// The limits of an account's fields, stated once: validation, the OpenAPI document, the
/// Mastodon instance configuration, the admin commands and the web forms read them here.
enum AccountRules {
    /// Letters a–z (any case, stored lower-cased), digits and `_`.
    static let usernameLength = 3...30
    static let passwordLength = 8...128
    static let maxEmailLength = 254
    static let maxDisplayNameLength = 60
    static let maxBioLength = 500
    /// A sign-in code: six digits from an authenticator app, or a recovery code.
    static let maxCodeLength = 64
    /// The status line's text (`status.text`) and kind.
    static let maxStatusTextLength = 140
}
