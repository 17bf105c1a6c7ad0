import Foundation

/// The messages Plaza sends, in plain text and HTML, signed with the instance's name and linking
/// to its public address.
struct MailTemplates: Sendable {
    let instanceName: String
    /// `PLAZA_PUBLIC_URL` without a trailing slash, else the address Plaza listens on.
    let baseURL: String

    func verifyEmail(to address: String, name: String, token: String, change: Bool) -> MailMessage {
        let link = "\(baseURL)/verify-email?token=\(token)"
        let why =
            change
            ? "You asked to use this address for your \(instanceName) account."
            : "Welcome to \(instanceName)! Please confirm that this address is yours."
        return message(
            .verifyEmail, to: address, subject: "Confirm your email address for \(instanceName)", name: name,
            paragraphs: [why, "The link works for 24 hours."], action: ("Confirm my address", link),
            footer: "If you did not sign up for \(instanceName), ignore this email: nothing happens without a click.")
    }

    func passwordReset(to address: String, name: String, token: String) -> MailMessage {
        message(
            .passwordReset, to: address, subject: "Reset your \(instanceName) password", name: name,
            paragraphs: [
                "Someone, hopefully you, asked to reset the password of your \(instanceName) account.",
                "The link works once, for one hour. Choosing a new password signs you out everywhere else.",
            ],
            action: ("Choose a new password", "\(baseURL)/reset-password?token=\(token)"),
            footer: "If you did not ask for this, ignore this email: your password stays as it is.")
    }

    func emailChanged(to oldAddress: String, name: String, newAddress: String) -> MailMessage {
        message(
            .emailChanged, to: oldAddress, subject: "Your \(instanceName) email address was changed", name: name,
            paragraphs: [
                "The email address of your \(instanceName) account is now \(newAddress); mail will no longer come here."
            ],
            action: nil,
            footer: "If you did not change it, reset your password from the sign-in page and tell the moderators.")
    }

    func providerLinked(to address: String, name: String, provider: String) -> MailMessage {
        message(
            .providerLinked, to: address, subject: "\(provider) sign-in added to your \(instanceName) account",
            name: name,
            paragraphs: ["You can now sign in to \(instanceName) with \(provider)."],
            action: ("Review your sign-in methods", "\(baseURL)/settings"),
            footer: "If this was not you, remove it in your settings and change your password.")
    }

    func deletionScheduled(to address: String, name: String, dueAt: Int64) -> MailMessage {
        // "2026-12-27 09:41 UTC"
        let day =
            Date(timeIntervalSince1970: Double(dueAt) / 1000).ISO8601Format().prefix(16).replacing("T", with: " ")
            + " UTC"
        return message(
            .deletionScheduled, to: address, subject: "Your \(instanceName) account will be deleted", name: name,
            paragraphs: [
                "You asked to delete your \(instanceName) account. It is hidden now, and on \(day) it goes for good, with your posts, comments, photos and collections.",
                "Changed your mind? Sign in before then and your account stays as it was.",
            ],
            action: ("Sign in to keep my account", "\(baseURL)/login"),
            footer: "If you did not ask for this, sign in now, change your password and tell the moderators.")
    }

    func registrationDecided(to address: String, name: String, approved: Bool) -> MailMessage {
        approved
            ? message(
                .registrationApproved, to: address, subject: "Welcome to \(instanceName): your account is ready",
                name: name, paragraphs: ["An administrator approved your sign-up. You can sign in now."],
                action: ("Sign in", "\(baseURL)/login"), footer: "You get this mail because you signed up.")
            : message(
                .registrationRejected, to: address, subject: "Your sign-up to \(instanceName) was not approved",
                name: name,
                paragraphs: [
                    "An administrator did not approve your sign-up, and the account was not made. Nothing of it is kept."
                ], action: nil, footer: "You get this mail because you signed up.")
    }

    func signUpWaiting(to address: String, name: String, username: String, reason: String) -> MailMessage {
        message(
            .signUpWaiting, to: address, subject: "\(username) wants to join \(instanceName)", name: name,
            paragraphs: ["\(username) signed up and waits for approval."]
                + (reason.isEmpty ? [] : ["Why they want to join: \(reason)"]),
            action: ("Review sign-ups", "\(baseURL)/admin/instance#registrations"),
            footer: "You get this mail because you administer \(instanceName).")
    }

    private func message(
        _ kind: MailMessage.Kind, to address: String, subject: String, name: String, paragraphs: [String],
        action: (label: String, url: String)?, footer: String
    ) -> MailMessage {
        var text = ["Hello \(name),", ""]
        for paragraph in paragraphs { text += [paragraph, ""] }
        if let action { text += ["\(action.label):", action.url, ""] }
        text += [footer, "", "— \(instanceName)"]

        let e = HTMLText.escape
        var html = [
            "<!doctype html>",
            "<html><head><meta charset=\"utf-8\"><title>\(e(subject))</title></head>",
            "<body style=\"font-family: -apple-system, 'Segoe UI', sans-serif; line-height: 1.5; color: #1f2328; max-width: 36em; margin: 0 auto; padding: 1.5em;\">",
            "<p>Hello \(e(name)),</p>",
        ]
        html += paragraphs.map { "<p>\(e($0))</p>" }
        if let action {
            html.append(
                "<p><a href=\"\(e(action.url))\" style=\"display: inline-block; background: #2f6fed; color: #fff; padding: 0.6em 1.2em; border-radius: 6px; text-decoration: none;\">\(e(action.label))</a></p>"
            )
            html.append("<p style=\"font-size: 0.9em; color: #59636e;\">Or open this address: \(e(action.url))</p>")
        }
        html += [
            "<p style=\"font-size: 0.9em; color: #59636e;\">\(e(footer))</p>",
            "<p>— \(e(instanceName))</p>",
            "</body></html>",
        ]
        return MailMessage(
            kind: kind, to: address, subject: subject, text: text.joined(separator: "\n"),
            html: html.joined(separator: "\n"))
    }
}

package enum HTMLText {
    package static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
