import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import PlazaAPI
@testable import PlazaMastodon
@testable import PlazaServer

@Suite("Mastodon's error shape and the apps' profile form")
struct MastodonErrorsAndProfileTests {
    /// Mastodon's error body: one `error` string, nothing else.
    static func isMastodonError(_ response: TestResponse) throws -> Bool {
        guard case .object(let object) = try response.json(), object.count == 1,
            case .string = object["error"]
        else { return false }
        return true
    }

    @Test func pathsMastodonOwnsAnswerItsErrorShapeMatchedOrNot() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let token = try await api.mastodonToken(ana)
            for path in [
                "/api/v1/nonexistent_but_not_plaza", "/api/v1/accounts/1/nope", "/api/v1/statuses/abc/what",
                "/api/v2/anything", "/api/v1/timelines/nothing/here", "/oauth/unknown",
                "/api/v1/push/subscription/x",
            ] {
                let response = try await api.mastodon(.get, path, token: token)
                #expect(response.status == .notFound, "\(path)")
                if path != "/api/v1/nonexistent_but_not_plaza" {
                    #expect(try Self.isMastodonError(response), "\(path): \(response.text)")
                }
            }
            // A method the path does not take.
            let wrongMethod = try await api.mastodon(.delete, "/api/v1/instance", token: token)
            #expect(wrongMethod.status == .methodNotAllowed)
            #expect(try Self.isMastodonError(wrongMethod), "\(wrongMethod.text)")
            // Mastodon's errors from its routes keep their message; a token makes them uncacheable.
            let missing = try await api.mastodon(.get, "/api/v1/statuses/123", token: token)
            #expect(try missing.json()["error"]?.stringValue == "Record not found")
            #expect(missing.headers[.cacheControl] == "no-store")
        }
    }

    @Test func plazasOwnPathsKeepPlazasErrorShape() async throws {
        try await withApp { api async throws in
            for path in [
                "/api/v1/posts/abc", "/api/v1/nonexistent_but_not_plaza", "/api/v1/admin/nothing", "/api/v3/x",
            ] {
                let response = try await api.mastodon(.get, path)
                #expect(response.status == .notFound || response.status == .unauthorized, "\(path)")
                let error = try response.json()["error"]
                #expect(error?["code"]?.stringValue != nil, "\(path): \(response.text)")
            }
        }
    }

    /// `POST /api/v1/reports` is Plaza's and Mastodon's: the door takes the requests naming an
    /// `account_id`, in the body or the query; the rest stay Plaza's, whatever the token.
    @Test func theSharedReportsPathServesBothShapes() async throws {
        try await withApp { api async throws in
            let (ana, bea) = try await api.register("ana", "bea")
            let token = try await api.mastodonToken(ana)
            let post = try await api.post(bea, CreatePostRequest(kind: .text, body: "Buy cheap pills"))
            let plaza = try await api.call(
                .post, "/reports", as: ana,
                json: CreateReportRequest(targetType: .post, targetId: post.id, reason: .spam))
            #expect(plaza.status == .created, "\(plaza.text)")
            #expect(try plaza.json()["targetType"]?.stringValue == "post")
            let plazaWithAppToken = try await api.call(
                .post, "/reports", token: token,
                json: CreateReportRequest(targetType: .user, targetId: bea.id, reason: .spam))
            #expect(plazaWithAppToken.status == .created, "\(plazaWithAppToken.text)")
            let plazaBad = try await api.call(.post, "/reports", as: ana, raw: #"{"reason": "spam"}"#)
            #expect(plazaBad.status.code >= 400 && plazaBad.status.code < 500)
            #expect(try !Self.isMastodonError(plazaBad))
            let form = try await api.mastodon(
                .post, "/api/v1/reports", token: token, form: [("account_id", bea.id), ("category", "other")])
            #expect(form.status == .ok, "\(form.text)")
            #expect(try form.json()["target_account"]?["id"]?.stringValue == bea.id)
            let json = try await api.mastodon(
                .post, "/api/v1/reports", token: token, json: #"{"account_id": "\#(bea.id)", "comment": "spam"}"#)
            #expect(json.status == .ok, "\(json.text)")
            let query = try await api.mastodon(
                .post, "/api/v1/reports/?account_id=\(bea.id)&category=spam", token: token)
            #expect(query.status == .ok, "\(query.text)")
            let unknown = try await api.mastodon(
                .post, "/api/v1/reports", token: token, form: [("account_id", "123456789")])
            #expect(unknown.status == .notFound)
            #expect(try Self.isMastodonError(unknown))
        }
    }

    @Test func ownershipOfPathsFollowsMastodonsRoutes() {
        for path in [
            "/api/v2/search", "/oauth/token", "/api/v1/bookmarks", "/api/v1/lists/1/accounts",
            "/api/v1/push/subscription",
        ] {
            #expect(MastodonError.owns(path: path), "\(path)")
        }
        for path in [
            "/api/v1/posts", "/api/v1/me/media", "/api/v1/push/web-push-key", "/api/v1/reports", "/api/v1/admin/users",
            "/", "/media/1/original", "/api", "/api/v1", "/apiv2", "/api/v1/", "/@ana",
        ] {
            #expect(!MastodonError.owns(path: path), "\(path)")
        }
    }

    // MARK: mentions

    @Test func statusesListThePeopleTheyMentionWithTheirIDs() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let bob = try await api.register("bob")
            let token = try await api.mastodonToken(ana)
            let post = try await api.post(
                ana, CreatePostRequest(kind: .text, body: "Run with @Bob and @nobody_here, and @bob again #fun"))
            let status = try await api.mastodon(.get, "/api/v1/statuses/\(post.id)", token: token).json()
            let mentions = status["mentions"]?.array ?? []
            #expect(mentions.count == 1)
            #expect(mentions.first?["id"]?.stringValue == bob.id)
            #expect(mentions.first?["acct"]?.stringValue == "bob")
            #expect(mentions.first?["url"]?.stringValue?.hasSuffix("/@bob") == true)
            // The text links the same person and the tag.
            let content = status["content"]?.stringValue ?? ""
            #expect(content.contains("/@bob\" class=\"u-url mention\""))
            #expect(content.contains("class=\"mention hashtag\""))
            // Apps complete hashtags from what follows the `#`, from the first letter.
            for q in ["f", "fu", "%23fu"] {
                let found = try await api.mastodon(.get, "/api/v2/search?type=hashtags&q=\(q)", token: token).json()
                #expect(found["hashtags"]?.array.first?["name"]?.stringValue == "fun", "\(q)")
            }
            // Timelines and replies (comments) too.
            let reply = try await api.mastodon(
                .post, "/api/v1/statuses", token: token,
                form: [("status", "@bob see you there"), ("in_reply_to_id", post.id)])
            #expect(reply.status == .ok, "\(reply.text)")
            let context = try await api.mastodon(.get, "/api/v1/statuses/\(post.id)/context", token: token).json()
            #expect(context["descendants"]?.array.first?["mentions"]?.array.first?["id"]?.stringValue == bob.id)
            let timeline = try await api.mastodon(.get, "/api/v1/accounts/\(ana.id)/statuses", token: token).json()
            #expect(timeline.array.first?["mentions"]?.array.count == 1)
            // A person one blocked is no mention to open.
            _ = try await api.mastodon(.post, "/api/v1/accounts/\(bob.id)/block", token: token)
            let blocked = try await api.mastodon(.get, "/api/v1/statuses/\(post.id)", token: token).json()
            #expect(blocked["mentions"]?.array.isEmpty == true)
        }
    }

    // MARK: update_credentials

    func multipart(_ parts: [(name: String, file: [UInt8]?, text: String?)]) -> (ByteBuffer, String) {
        let boundary = "AppBoundary42"
        var body = ByteBuffer()
        for part in parts {
            if let file = part.file {
                body.writeString(
                    "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(part.name)\"; filename=\"p.jpg\"\r\n"
                        + "Content-Type: image/jpeg\r\n\r\n")
                body.writeBytes(file)
                body.writeString("\r\n")
            } else {
                body.writeString(
                    "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(part.name)\"\r\n\r\n\(part.text ?? "")\r\n"
                )
            }
        }
        body.writeString("--\(boundary)--\r\n")
        return (body, "multipart/form-data; boundary=\(boundary)")
    }

    func patchCredentials(_ api: TestAPI, token: String, _ form: (ByteBuffer, String)) async throws -> TestResponse {
        let response = try await api.client.execute(
            uri: "/api/v1/accounts/update_credentials", method: .patch,
            headers: [.authorization: "Bearer \(token)", .contentType: form.1], body: form.0)
        return TestResponse(status: response.status, headers: response.headers, body: response.body)
    }

    @Test func theAppsMultipartFormChangesTheAvatarAndTheProfile() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let token = try await api.mastodonToken(ana)
            let before = try await api.mastodon(.get, "/api/v1/accounts/verify_credentials", token: token).json()
            let photo = try MediaFixtures.jpegWithEXIF(width: 64, height: 64)
            // Ice Cubes sends the avatar alone.
            let avatar = try await patchCredentials(api, token: token, multipart([("avatar", photo, nil)]))
            #expect(avatar.status == .ok, "\(avatar.text)")
            let changed = try avatar.json()
            #expect(changed["avatar"]?.stringValue != before["avatar"]?.stringValue)
            #expect(changed["avatar"]?.stringValue?.contains("/media/") == true)
            let me = try await api.get("/me", as: ana).json()
            #expect(me["avatar"]?["id"]?.stringValue != nil)
            // The official app sends the text fields with it.
            let both = try await patchCredentials(
                api, token: token,
                multipart([
                    ("display_name", nil, "Ana Lima"), ("note", nil, "Runner"), ("avatar", photo, nil),
                    ("fields_attributes[0][name]", nil, "Web"),
                ]))
            #expect(both.status == .ok, "\(both.text)")
            #expect(try both.json()["display_name"]?.stringValue == "Ana Lima")
            // Text alone, as a multipart form.
            let text = try await patchCredentials(api, token: token, multipart([("display_name", nil, "Ana L.")]))
            #expect(try text.json()["display_name"]?.stringValue == "Ana L.")
        }
    }

    @Test func aHeaderPictureOrABadFormChangesNothing() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let token = try await api.mastodonToken(ana)
            let photo = try MediaFixtures.jpegWithEXIF(width: 64, height: 64)
            let header = try await patchCredentials(
                api, token: token, multipart([("display_name", nil, "Changed"), ("header", photo, nil)]))
            #expect(header.status == .unprocessableContent)
            #expect(try header.json()["error"]?.stringValue?.hasPrefix("Validation failed") == true)
            // Wherever the header comes; and a photo refused changes no text either.
            let headerLast = try await patchCredentials(
                api, token: token,
                multipart([("display_name", nil, "Changed"), ("avatar", photo, nil), ("header", photo, nil)]))
            #expect(headerLast.status == .unprocessableContent)
            let refused = try await patchCredentials(
                api, token: token,
                multipart([("display_name", nil, "Changed"), ("avatar", Array("not a photo at all".utf8), nil)]))
            #expect(refused.status.code >= 400 && refused.status.code < 500)
            let me = try await api.mastodon(.get, "/api/v1/accounts/verify_credentials", token: token).json()
            #expect(me["display_name"]?.stringValue != "Changed")
            // Not a photo.
            let notPhoto = try await patchCredentials(
                api, token: token, multipart([("avatar", Array("hello, world, not an image".utf8), nil)]))
            #expect(notPhoto.status.code >= 400 && notPhoto.status.code < 500, "\(notPhoto.text)")
            #expect(try Self.isMastodonError(notPhoto))
            // An empty file, a broken form, no token.
            let empty = try await patchCredentials(api, token: token, multipart([("avatar", [], nil)]))
            #expect(empty.status == .unprocessableContent)
            let broken = try await patchCredentials(
                api, token: token,
                (ByteBuffer(string: "--AppBoundary42\r\nnot a part"), "multipart/form-data; boundary=AppBoundary42"))
            #expect(broken.status == .badRequest)
            #expect(try Self.isMastodonError(broken))
            let anonymous = try await api.client.execute(
                uri: "/api/v1/accounts/update_credentials", method: .patch,
                headers: [.contentType: multipart([("avatar", photo, nil)]).1],
                body: multipart([("avatar", photo, nil)]).0)
            #expect(anonymous.status == .unauthorized)
        }
    }
}
