import Foundation
import Hummingbird
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// Names people can trust: display names and bios lose bidi controls and invisible
/// characters; usernames stay ASCII.
@Suite("Names")
struct NamesTests {
    @Test func bidiControlsAndInvisibleCharactersAreRemoved() {
        func name(_ text: String) -> String { Validate.trustworthy(text, lines: false) }
        #expect(name("\u{202E}elgoog\u{202C}") == "elgoog", "a right-to-left override")
        #expect(name("ad\u{200B}min\u{2066}\u{2069}") == "admin", "zero-width space, isolates")
        #expect(name("ad\u{200D}min") == "admin", "a joiner has no business in Latin text")
        #expect(name("Ana\u{00AD}Lima\u{FEFF}") == "AnaLima", "soft hyphen, BOM")
        #expect(name("\u{3164}\u{115F}") == "", "blank Hangul fillers")
        #expect(name("Tom\u{E0041}\u{E0042}") == "Tom", "tags")
        #expect(name("  Ana \t\n  Lima  ") == "Ana Lima", "white space runs become one space, none at the ends")
        #expect(name("👩\u{200D}💻 dev") == "👩\u{200D}💻 dev", "an emoji sequence keeps its joiner")
        #expect(name("می\u{200C}خواهم") == "می\u{200C}خواهم", "Persian keeps its non-joiner")
        #expect(name("\u{200D}👩") == "👩", "not at the start")
        #expect(name("مريم \u{200F}Ali") == "مريم Ali", "a right-to-left mark")
        #expect(
            Validate.trustworthy("line one\u{202E}\nline two\r\n", lines: true) == "line one\nline two\n",
            "a bio keeps its line breaks")
    }

    @Test func namesAndBiosAreCleanedWhereverTheyAreSet() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            try await api.call(
                .patch, "/me", as: ana,
                json: UpdateMeRequest(displayName: "\u{202E}nimda\u{202C} Ana", bio: "Hi\u{200B}!\n\u{2067}bye"))
            let user = try await api.get("/users/ana").decode(User.self)
            #expect(user.displayName == "nimda Ana")
            #expect(user.bio == "Hi!\nbye")
            let blank = try await api.call(
                .patch, "/me", as: ana, json: UpdateMeRequest(displayName: "\u{3164}\u{200B} "))
            #expect(blank.status == .unprocessableContent && blank.error?.field == "displayName")
            #expect(try await api.get("/users/ana").decode(User.self).displayName == "nimda Ana", "kept")

            let signup = try await api.call(
                .post, "/auth/register",
                json: RegisterRequest(
                    username: "bob", email: "bob@example.com", password: "correct horse battery",
                    displayName: "\u{200B}\u{202E}"))
            #expect(
                try signup.decode(AuthResponse.self).user.user.displayName == "bob", "nothing visible: the username")
            let cyrillic = try await api.call(
                .post, "/auth/register",
                json: RegisterRequest(
                    username: "\u{430}dmin", email: "a@example.com", password: "correct horse battery"))
            #expect(cyrillic.status == .unprocessableContent && cyrillic.error?.field == "username")

            // Mastodon apps set them too.
            let patched = try await api.call(
                .patch, "/accounts/update_credentials", as: ana, raw: "display_name=%E2%80%AEevil&note=a%E2%80%8Bb",
                headers: [.contentType: "application/x-www-form-urlencoded"])
            #expect(patched.status == .ok, "\(patched.text)")
            let after = try await api.get("/users/ana").decode(User.self)
            #expect(after.displayName == "evil" && after.bio == "ab")
        }
    }
}
