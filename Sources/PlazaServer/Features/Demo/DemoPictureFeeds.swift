import Foundation
import PlazaAPI

/// The meme page (seed app 003) and the food feed (seed app 004): photo posts whose pictures
/// Plaza draws as it seeds, food with places and prices, and a video when ffmpeg is here.
enum DemoPictureFeeds {
    static func seed(_ world: DemoWorld) async throws {
        try await memes(world)
        try await food(world)
    }

    private static func memes(_ world: DemoWorld) async throws {
        let memes: [(caption: String, body: String, from: String, to: String, daysAgo: Double, likes: [String])] = [
            (
                "WHEN THE CODE WORKS\nON THE FIRST TRY", "…and you have no idea why.", "#1d2b64", "#f8cdda", 20,
                ["marcus", "jon", "demo", "leo"]
            ),
            ("MONDAY\n0% BATTERY", "Send coffee.", "#232526", "#ff7a59", 13, ["priya", "noor", "sofia"]),
            (
                "ME: ONE MORE EPISODE\nALSO ME AT 3 AM", "Every single night.", "#41295a", "#2f0743", 8,
                ["marcus", "emily", "demo"]
            ),
            ("CODE REVIEW:\nLGTM", "Looks good to me (did not read it).", "#0f2027", "#2c5364", 3, ["leo", "jon"]),
            (
                "MY PLANTS WHEN I\nREMEMBER TO WATER THEM", "Once a month is enough, right?", "#134e5e", "#71b280",
                1, ["priya", "demo"]
            ),
        ]
        for (n, meme) in memes.enumerated() {
            let picture = DemoPictures.Picture(from: meme.from, to: meme.to, caption: meme.caption, seed: n)
            let draft = try await world.photos("memerly", [picture], body: meme.body)
            try await world.post(
                "memerly", draft, daysAgo: meme.daysAgo,
                comments: n == 0 ? [("marcus", "every single time"), ("leo", "this is me")] : [], likedBy: meme.likes)
        }
    }

    private static func food(_ world: DemoWorld) async throws {
        let dishes:
            [(
                dish: String, body: String, place: Location, price: String?, colours: [(String, String)],
                daysAgo: Double
            )] = [
                (
                    "PORK BELLY BAO", "Crispy pork belly bao, worth the queue.",
                    Location(latitude: 40.7190, longitude: -73.9880, name: "Bao Haus, Lower East Side"), "$9",
                    [("#f7971e", "#ffd200"), ("#c94b4b", "#4b134f")], 16
                ),
                (
                    "SHAKSHUKA", "Homemade shakshuka with too much feta (there is no such thing).",
                    Location(latitude: 40.6782, longitude: -73.9442, name: "Home kitchen"), nil,
                    [("#cb2d3e", "#ef473a")], 11
                ),
                (
                    "MATCHA SOFT SERVE", "Matcha soft serve on a rainy day. #matcha #dessert",
                    Location(latitude: 40.7081, longitude: -73.9571, name: "Tea Lab, Williamsburg"), "$6",
                    [("#56ab2f", "#a8e063")], 7
                ),
                (
                    "MARGHERITA", "Wood-fired margherita, blistered just right. #pizza #nyc",
                    Location(latitude: 40.7306, longitude: -73.9866, name: "Forno Rosso, East Village"), "$16",
                    [("#e52d27", "#b31217"), ("#f2994a", "#f2c94c"), ("#ffffff", "#56ab2f")], 4
                ),
                (
                    "RAMEN NIGHT", "Tonkotsu with an extra egg. The broth took them 18 hours. #ramen #nyc",
                    Location(latitude: 40.7291, longitude: -73.9904, name: "Menya Koji, NoHo"), "$18",
                    [("#3e5151", "#decba4")], 2
                ),
            ]
        for (n, dish) in dishes.enumerated() {
            let pictures = dish.colours.enumerated().map { index, colours in
                DemoPictures.Picture(
                    from: colours.0, to: colours.1, caption: index == 0 ? dish.dish : nil, width: 1080, height: 1350,
                    seed: n * 3 + index)
            }
            let draft = try await world.photos(
                "eatstagram", pictures, body: dish.body, place: dish.place, price: dish.price)
            try await world.post(
                "eatstagram", draft, daysAgo: dish.daysAgo,
                comments: n == 0 ? [("demo", "Adding this to my list!"), ("sofia", "The queue is worth it.")] : [],
                likedBy: ["demo", "priya", "sofia"].suffix(1 + n % 3))
        }
        try await video(world)
    }

    /// Noodles in motion: a clip ffmpeg makes, uploaded and transcoded like any video.
    private static func video(_ world: DemoWorld) async throws {
        guard let ffmpeg = world.services.ingest.video?.ffmpeg,
            let clip = await DemoPictures.clip(ffmpeg: ffmpeg, workDirectory: world.services.uploadDirectory)
        else {
            world.logger.notice("ffmpeg is not here: the demo world has no video.")
            return
        }
        let media = try await world.upload(
            "eatstagram", clip, description: "Five seconds of slowly moving colour gradients, with a steady tone.")
        // Transcoded now, as the server's worker would, so the post is everyone's at once.
        if let videos = world.services.videoService(logger: world.logger) {
            while await videos.runOnce() {}
        }
        try await world.post(
            "eatstagram",
            PostStore.Draft(
                kind: .photo, body: "Hand-pulled noodles, in motion. Sound on!",
                location: Location(latitude: 40.7158, longitude: -73.9970, name: "Noodle Bar, Chinatown"),
                price: "$12", mediaIDs: [media]),
            daysAgo: 0.5, likedBy: ["demo", "jon", "marcus"])
    }
}
