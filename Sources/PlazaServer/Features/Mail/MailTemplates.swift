import Foundation
import PlazaAPI

/// The messages Plaza sends, in plain text and HTML, in the recipient's language (step 18's
/// catalogs; English when it has none), signed with the instance's name and linking to its
/// public address.
struct MailTemplates: Sendable {
    /// The instance's name as last read (`InstanceName`).
    let name: InstanceName
    var instanceName: String { name.current }
    /// `PLAZA_PUBLIC_URL` without a trailing slash, else the address Plaza listens on.
    let baseURL: String

    func verifyEmail(to address: String, name: String, token: String, change: Bool, language: Language)
        -> MailMessage
    {
        let t = texts(language)
        let link = "\(baseURL)/verify-email?token=\(token)"
        let why =
            change
            ? t("You asked to use this address for your {instance} account.", ["instance": instanceName])
            : t("Welcome to {instance}! Please confirm that this address is yours.", ["instance": instanceName])
        return message(
            .verifyEmail, to: address, t: t,
            subject: t("Confirm your email address for {instance}", ["instance": instanceName]), name: name,
            paragraphs: [why, t("The link works for 24 hours.")], action: (t("Confirm my address"), link),
            footer: t(
                "If you did not sign up for {instance}, ignore this email: nothing happens without a click.",
                ["instance": instanceName]))
    }

    func passwordReset(to address: String, name: String, token: String, language: Language) -> MailMessage {
        let t = texts(language)
        return message(
            .passwordReset, to: address, t: t, subject: t("Reset your {instance} password", ["instance": instanceName]),
            name: name,
            paragraphs: [
                t(
                    "Someone, hopefully you, asked to reset the password of your {instance} account.",
                    ["instance": instanceName]),
                t("The link works once, for one hour. Choosing a new password signs you out everywhere else."),
            ],
            action: (t("Choose a new password"), "\(baseURL)/reset-password?token=\(token)"),
            footer: t("If you did not ask for this, ignore this email: your password stays as it is."))
    }

    func emailChanged(to oldAddress: String, name: String, newAddress: String, language: Language) -> MailMessage {
        let t = texts(language)
        return message(
            .emailChanged, to: oldAddress, t: t,
            subject: t("Your {instance} email address was changed", ["instance": instanceName]), name: name,
            paragraphs: [
                t(
                    "The email address of your {instance} account is now {address}; mail will no longer come here.",
                    ["instance": instanceName, "address": newAddress])
            ],
            action: nil,
            footer: t("If you did not change it, reset your password from the sign-in page and tell the moderators."))
    }

    func providerLinked(to address: String, name: String, provider: String, language: Language) -> MailMessage {
        let t = texts(language)
        return message(
            .providerLinked, to: address, t: t,
            subject: t(
                "{provider} sign-in added to your {instance} account", ["provider": provider, "instance": instanceName]),
            name: name,
            paragraphs: [
                t(
                    "You can now sign in to {instance} with {provider}.",
                    ["instance": instanceName, "provider": provider])
            ],
            action: (t("Review your sign-in methods"), "\(baseURL)/settings"),
            footer: t("If this was not you, remove it in your settings and change your password."))
    }

    func deletionScheduled(to address: String, name: String, dueAt: Int64, language: Language) -> MailMessage {
        let t = texts(language)
        let day = t("{date} UTC", ["date": t.dateTime(Timestamp(milliseconds: dueAt))])
        return message(
            .deletionScheduled, to: address, t: t,
            subject: t("Your {instance} account will be deleted", ["instance": instanceName]), name: name,
            paragraphs: [
                t(
                    "You asked to delete your {instance} account. It is hidden now, and on {date} it goes for good, with your posts, comments, photos and collections.",
                    ["instance": instanceName, "date": day]),
                t("Changed your mind? Sign in before then and your account stays as it was."),
            ],
            action: (t("Sign in to keep my account"), "\(baseURL)/login"),
            footer: t("If you did not ask for this, sign in now, change your password and tell the moderators."))
    }

    func registrationDecided(to address: String, name: String, approved: Bool, language: Language) -> MailMessage {
        let t = texts(language)
        return approved
            ? message(
                .registrationApproved, to: address, t: t,
                subject: t("Welcome to {instance}: your account is ready", ["instance": instanceName]), name: name,
                paragraphs: [t("An administrator approved your sign-up. You can sign in now.")],
                action: (t("Sign in"), "\(baseURL)/login"), footer: t("You get this mail because you signed up."))
            : message(
                .registrationRejected, to: address, t: t,
                subject: t("Your sign-up to {instance} was not approved", ["instance": instanceName]), name: name,
                paragraphs: [
                    t(
                        "An administrator did not approve your sign-up, and the account was not made. Nothing of it is kept."
                    )
                ], action: nil, footer: t("You get this mail because you signed up."))
    }

    func signUpWaiting(to address: String, name: String, username: String, reason: String, language: Language)
        -> MailMessage
    {
        let t = texts(language)
        return message(
            .signUpWaiting, to: address, t: t,
            subject: t("{username} wants to join {instance}", ["username": username, "instance": instanceName]),
            name: name,
            paragraphs: [t("{username} signed up and waits for approval.", ["username": username])]
                + (reason.isEmpty ? [] : [t("Why they want to join: {reason}", ["reason": reason])]),
            action: (t("Review sign-ups"), "\(baseURL)/admin/instance#registrations"),
            footer: t("You get this mail because you administer {instance}.", ["instance": instanceName]))
    }

    private func texts(_ language: Language) -> Localizer { MessageCatalog.localizer(language) }

    private func message(
        _ kind: MailMessage.Kind, to address: String, t: Localizer, subject: String, name: String,
        paragraphs: [String], action: (label: String, url: String)?, footer: String
    ) -> MailMessage {
        let hello = t("Hello {name},", ["name": name])
        var text = [hello, ""]
        for paragraph in paragraphs { text += [paragraph, ""] }
        if let action { text += ["\(action.label):", action.url, ""] }
        text += [footer, "", "— \(instanceName)"]

        let e = HTMLText.escape
        let direction = t.language.isRightToLeft ? "rtl" : "ltr"
        var html = [
            "<!doctype html>",
            "<html lang=\"\(t.language.rawValue)\" dir=\"\(direction)\"><head><meta charset=\"utf-8\"><title>\(e(subject))</title></head>",
            "<body style=\"font-family: -apple-system, 'Segoe UI', sans-serif; line-height: 1.5; color: #1f2328; max-width: 36em; margin: 0 auto; padding: 1.5em;\">",
            "<p>\(e(hello))</p>",
        ]
        html += paragraphs.map { "<p>\(e($0))</p>" }
        if let action {
            html.append(
                "<p><a href=\"\(e(action.url))\" style=\"display: inline-block; background: #2f6fed; color: #fff; padding: 0.6em 1.2em; border-radius: 6px; text-decoration: none;\">\(e(action.label))</a></p>"
            )
            html.append(
                "<p style=\"font-size: 0.9em; color: #59636e;\">\(e(t("Or open this address: {url}", ["url": action.url])))</p>"
            )
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
