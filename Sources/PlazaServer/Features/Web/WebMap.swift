import Foundation
import PlazaAPI

/// Where the web app's maps get their tiles: a URL template with `{z}`, `{x}` and `{y}`
/// (`PLAZA_MAP_TILES`, OpenStreetMap's by default), or none (`off`: maps show their markers on a
/// plain ground). The tile server's origin is added to the pages' image policy.
public struct MapSettings: Sendable, Equatable {
    public static let openStreetMap = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
    public var tiles: String? = MapSettings.openStreetMap
    /// Shown under every map, as tile servers ask (`PLAZA_MAP_ATTRIBUTION`).
    public var attribution = "© OpenStreetMap contributors"
    public init() {}

    /// `tiles` checked: http(s), a host, and the three placeholders in its path or query; "off" is none.
    static func tiles(_ value: String) throws -> String? {
        guard value.lowercased() != "off" else { return nil }
        let filled = value.replacingOccurrences(of: "{z}", with: "0").replacingOccurrences(of: "{x}", with: "0")
            .replacingOccurrences(of: "{y}", with: "0")
        // Exactly the three placeholders, none in the host (no `{s}` subdomains: the page fills in only these).
        guard ["{z}", "{x}", "{y}"].allSatisfy(value.contains), !filled.contains("{"), !filled.contains("}"),
            let url = URL(string: filled), ["https", "http"].contains(url.scheme?.lowercased() ?? ""),
            let host = url.host, !host.isEmpty,
            URL(
                string: value.replacingOccurrences(of: "{", with: "")
                    .replacingOccurrences(of: "}", with: ""))?.host == host,
            !value.contains("\""), !value.contains("'"), !value.contains(" ")
        else {
            throw ConfigurationError(
                "map-tiles must be off or an http(s) URL with {z}, {x} and {y}, such as \(openStreetMap).")
        }
        return value
    }

    /// The tile server's origin (`https://tile.openstreetmap.org`), for the content security policy.
    var origin: String? {
        guard let tiles,
            let url = URL(
                string: tiles.replacingOccurrences(of: "{", with: "").replacingOccurrences(of: "}", with: "")),
            let scheme = url.scheme?.lowercased(), let host = url.host
        else { return nil }
        return "\(scheme)://\(host)" + (url.port.map { ":\($0)" } ?? "")
    }
}

/// `map.mustache`: a map centred on a point with markers, drawn by the page's script from the
/// tile server (`data-tiles`; none when tiles are off). Each marker is a link, so the list of
/// places stays usable without the script.
struct MapView: Sendable {
    struct Marker: Sendable {
        let latitude: String
        let longitude: String
        let label: String
        let href: String?
        /// The viewer's own position (search near me), drawn apart.
        let here: Bool
    }

    let latitude: String
    let longitude: String
    let zoom: Int
    let tiles: String?
    let attribution: String
    let markers: [Marker]
    let label: String

    /// A post's place, close up; none without one.
    init?(post: Post, settings: MapSettings, t: Localizer) {
        guard let location = post.location else { return nil }
        self.init(
            latitude: location.latitude, longitude: location.longitude, zoom: 15, settings: settings,
            markers: [
                Marker(
                    latitude: location.latitude.jsonText, longitude: location.longitude.jsonText,
                    label: location.name ?? t("Pinned place"), href: nil, here: false)
            ],
            label: location.name.map { t("Map of {place}", ["place": $0]) } ?? t("Map of the post's place"))
    }

    /// Search results around a point: the point, and each result that has a place.
    init(
        near latitude: Double, _ longitude: Double, radiusKm: Double, posts: [Post], settings: MapSettings,
        t: Localizer
    ) {
        let here = Marker(
            latitude: latitude.jsonText, longitude: longitude.jsonText, label: t("Searched from here"), href: nil,
            here: true)
        let places = posts.compactMap { post in
            post.location.map {
                Marker(
                    latitude: $0.latitude.jsonText, longitude: $0.longitude.jsonText,
                    label: $0.name ?? post.title ?? t("Pinned place"), href: PublicLinks.paths.postPage(post.id),
                    here: false)
            }
        }
        self.init(
            latitude: latitude, longitude: longitude,
            zoom: Self.zoom(showing: radiusKm, at: latitude), settings: settings, markers: [here] + places,
            label: t("Map of the results"))
    }

    private init(
        latitude: Double, longitude: Double, zoom: Int, settings: MapSettings, markers: [Marker], label: String
    ) {
        self.latitude = latitude.jsonText
        self.longitude = longitude.jsonText
        self.zoom = zoom
        tiles = settings.tiles
        attribution = settings.attribution
        self.markers = markers
        self.label = label
    }

    /// The closest zoom (1…17) at which a circle of `radiusKm` fits in 120 pixels from the centre
    /// (a 256-pixel tile spans the world at zoom 0: 156,543 m a pixel at the equator).
    static func zoom(showing radiusKm: Double, at latitude: Double) -> Int {
        let metresPerPixel = max(radiusKm, 0.01) * 1000 / 120
        let scale = 156_543.034 * cos(min(abs(latitude), 85) * .pi / 180) / metresPerPixel
        return min(17, max(1, Int(log2(max(scale, 1)).rounded(.down))))
    }
}
