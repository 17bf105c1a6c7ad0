// swift-tools-version:6.0
import PackageDescription

// PlazaKit, the Swift SDK of Plaza: the client and the API's types, on Foundation alone. An app
// adds this package (its own repository, published from the `sdk/` folder of Plaza's) and
// resolves nothing of the server's. Plaza's server builds on the same `PlazaAPI` types.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "PlazaKit",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "PlazaKit", targets: ["PlazaKit"]),
        .library(name: "PlazaKitCore", targets: ["PlazaKitCore"]),
        .library(name: "PlazaAPI", targets: ["PlazaAPI"]),
    ],
    dependencies: [
        // `swift package generate-documentation` (the DocC catalogue); a build-time plugin, linked into nothing.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0")
    ],
    targets: [
        // The API's request and response types, shared with the server.
        .target(name: "PlazaAPI", swiftSettings: swiftSettings),
        // The client without a transport of its own (the `plaza` command line uses it over
        // AsyncHTTPClient, so the server binary does not link FoundationNetworking).
        .target(name: "PlazaKitCore", dependencies: ["PlazaAPI"], swiftSettings: swiftSettings),
        // The client for iOS, macOS and Linux apps: PlazaKitCore over URLSession.
        .target(name: "PlazaKit", dependencies: ["PlazaKitCore"], swiftSettings: swiftSettings),
    ]
)
