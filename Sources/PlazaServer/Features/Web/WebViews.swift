import Foundation
import PlazaAPI

/// What the templates show beyond the API's own fields: flags Mustache cannot compute
/// (kind, ownership, completion), readable times, alt text and sentences.
enum WebViews {
    static func post(_ post: Post, viewer: Int64?) -> [String: Any] {
        var values = TemplateValue.object(post)
        values["is_\(post.kind.rawValue)"] = true
        values["mine"] = viewer.map { String($0) == post.author.id } ?? false
        values["initial"] = initial(post.author.displayName)
        values["when"] = TemplateValue.readableTime(values["createdAt"])
        values["edited"] = post.editedAt != nil
        let caption = [post.title, post.body].compactMap { $0 }.first { !$0.isEmpty }
        values["alt"] = caption ?? "\(post.kind == .photo ? "Photo" : "Post") by \(post.author.displayName)"
        if let first = post.media.first { values["cover"] = TemplateValue.object(first) }
        values["multiple"] = post.media.count > 1
        if let link = post.link {
            values["linkTitle"] = link.title ?? link.url
            values["linkHost"] = URL(string: link.url)?.host ?? link.url
        }
        if let location = post.location { values["placeName"] = location.name ?? "Pinned place" }
        if let activity = post.activity {
            values["done"] = activity.progress >= 100
        }
        return values
    }

    /// The first letter of a name, shown where there is no photo.
    static func initial(_ name: String) -> String { name.first.map { String($0).uppercased() } ?? "?" }

    static func posts(_ page: Page<Post>, viewer: Int64?) -> [[String: Any]] {
        page.items.map { post($0, viewer: viewer) }
    }

    static func comment(_ comment: Comment, viewer: Int64?, postAuthor: String?) -> [String: Any] {
        var values = TemplateValue.object(comment)
        values["when"] = TemplateValue.readableTime(values["createdAt"])
        let mine = viewer.map { String($0) == comment.author.id } ?? false
        values["deletable"] = mine || (viewer.map { String($0) } == postAuthor && postAuthor != nil)
        return values
    }

    static func user(_ user: User, viewer: Int64?) -> [String: Any] {
        var values = TemplateValue.object(user)
        values["me"] = viewer.map { String($0) == user.id } ?? false
        values["initial"] = initial(user.displayName)
        values["since"] = String(TemplateValue.readableTime(values["createdAt"]).prefix(10))
        if let status = user.status { values["statusLabel"] = statusLabel(status) }
        return values
    }

    static func statusLabel(_ status: UserStatus) -> String {
        let kind = status.kind.prefix(1).uppercased() + status.kind.dropFirst()
        return status.text.isEmpty ? kind : "\(kind): \(status.text)"
    }

    static func notification(_ n: PlazaAPI.Notification) -> [String: Any] {
        var values = TemplateValue.object(n)
        let others = n.actorCount - 1
        let who =
            others > 0
            ? "\(n.actor.displayName) and \(others) \(others == 1 ? "other" : "others")" : n.actor.displayName
        let what =
            switch n.kind {
            case .like: "liked your post"
            case .comment: "commented on your post"
            case .reply: "replied in a thread you are in"
            case .follow: "followed you"
            case .mention: "mentioned you"
            }
        values["text"] = "\(who) \(what)"
        values["when"] = TemplateValue.readableTime(values["createdAt"])
        values["href"] = n.post.map { "/p/\($0.id)" } ?? "/u/\(n.actor.username)"
        values["excerpt"] = n.comment?.body ?? n.post.flatMap { $0.title ?? $0.body }
        return values
    }

    /// The activity heatmap as cells in week columns (Sunday first), each with a level 0–4.
    static func heatmap(_ map: ActivityHeatmap) -> [String: Any] {
        var cells: [[String: Any]] = []
        if let first = map.days.first, let offset = weekday(of: first.date) {
            cells += Array(repeating: ["pad": true], count: offset)
        }
        var active = 0
        var completed = 0
        for day in map.days {
            let total = day.completed + day.posted
            if total > 0 { active += 1 }
            completed += day.completed
            let level = total == 0 ? 0 : min(4, day.completed > 0 ? 2 + day.completed : 1)
            cells.append([
                "date": day.date, "level": level,
                "label": "\(day.date): \(day.posted) posted, \(day.completed) completed",
            ])
        }
        return [
            "cells": cells, "activeDays": active, "activeLabel": active == 1 ? "1 active day" : "\(active) active days",
            "completed": completed,
        ]
    }

    /// 0 for Sunday … 6 for Saturday, from `yyyy-mm-dd`.
    static func weekday(of date: String) -> Int? {
        let parts = date.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3 else { return nil }
        var (y, m) = (parts[0], parts[1])
        if m < 3 {
            y -= 1
            m += 12
        }
        let k = y % 100
        let j = y / 100
        let h = (parts[2] + 13 * (m + 1) / 5 + k + k / 4 + j / 4 + 5 * j) % 7  // Zeller: 0 = Saturday
        return (h + 6) % 7
    }
}
