import Foundation
import Testing

@testable import PlazaAPI
@testable import PlazaServer

@Suite("Web app: language and time zone in settings")
struct WebLanguageSettingsTests {
    /// Settings offer the web app's languages by their own names and every time zone; what is
    /// chosen through the preferences is shown chosen, and the pages' times are in that zone.
    @Test func settingsChooseTheLanguageAndTheTimeZone() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            let fresh = try await api.page(.get, "/settings", cookie: ana.cookie)
            #expect(fresh.text.contains(#"data-api="PATCH /api/v1/me/preferences""#))
            #expect(fresh.text.contains(#"<option value="" selected>Automatic — from the browser</option>"#))
            #expect(
                fresh.text.contains(#"<option value="de" lang="de">Deutsch</option>"#)
                    && fresh.text.contains(#"<option value="ar" lang="ar">العربية</option>"#))
            // No zone yet: UTC, which the script replaces with the browser's.
            #expect(
                fresh.text.contains("data-browser-time-zone") && fresh.text.contains("<option selected>UTC</option>"))
            #expect(fresh.text.contains("<option>Europe/Berlin</option>"))

            let post = try await api.textPost(ana, "hello")
            #expect(try await api.call(.put, "/posts/\(post.id)/like", as: bob).status == .ok)
            let notification = try #require(
                try await api.page("/me/notifications?limit=5", as: ana, of: PlazaAPI.Notification.self).items.first)

            let patched = try await api.call(
                .patch, "/me/preferences", as: ana, raw: #"{"language":"de","timeZone":"Asia/Tokyo"}"#)
            #expect(patched.status == .ok)
            let chosen = try await api.page(.get, "/settings", cookie: ana.cookie)
            #expect(chosen.text.contains(#"<html lang="de""#))
            let menuStart = try #require(chosen.text.range(of: #"<select name="language">"#))
            let menuEnd = try #require(
                chosen.text.range(of: "</select>", range: menuStart.upperBound..<chosen.text.endIndex))
            let languageMenu = chosen.text[menuStart.upperBound..<menuEnd.lowerBound]
            #expect(languageMenu.contains(#"<option value="de" lang="de" selected>Deutsch<"#))
            #expect(languageMenu.components(separatedBy: " selected>").count == 2)
            #expect(
                !chosen.text.contains("data-browser-time-zone")
                    && chosen.text.contains("<option selected>Asia/Tokyo</option>"))

            // Times as German writes them, in Tokyo.
            let german = Localizer(
                catalog: MessageCatalog(language: .de, entries: [:]),
                timeZone: try #require(TimeZone(identifier: "Asia/Tokyo")))
            let notifications = try await api.page(.get, "/notifications", cookie: ana.cookie)
            #expect(
                notifications.text.contains(
                    #"<time datetime="\#(notification.createdAt.description)">\#(german.dateTime(notification.createdAt))</time>"#
                ))

            // Automatic again.
            _ = try await api.call(.patch, "/me/preferences", as: ana, raw: #"{"language":null}"#)
            let automatic = try await api.page(.get, "/settings", cookie: ana.cookie)
            #expect(automatic.text.contains(#"<html lang="en""#))
            #expect(automatic.text.contains(#"<option value="" selected>Automatic — from the browser</option>"#))
        }
    }

    /// Notifications are sentences with the name in them, one person's or a group's.
    @Test func notificationsNameWhoActed() async throws {
        try await withApp { api async throws in
            let (ana, bob, cyd, dee) = try await api.register("ana", "bob", "cyd", "dee")
            let post = try await api.textPost(ana, "hello")
            #expect(try await api.call(.put, "/posts/\(post.id)/like", as: bob).status == .ok)
            #expect(try await api.page(.get, "/notifications", cookie: ana.cookie).text.contains("bob liked your post"))
            #expect(try await api.call(.put, "/posts/\(post.id)/like", as: cyd).status == .ok)
            #expect(
                try await api.page(.get, "/notifications", cookie: ana.cookie).text.contains(
                    "cyd and 1 other liked your post"))
            #expect(try await api.call(.put, "/posts/\(post.id)/like", as: dee).status == .ok)
            #expect(
                try await api.page(.get, "/notifications", cookie: ana.cookie).text.contains(
                    "dee and 2 others liked your post"))
        }
    }

    /// The sign-up form carries the browser's time zone (filled in by `app.js`).
    @Test func signUpAsksTheBrowsersTimeZone() async throws {
        try await withApp { api async throws in
            let signup = try await api.page(.get, "/signup")
            #expect(signup.text.contains(#"<input type="hidden" name="timeZone" value="">"#))
        }
    }
}
