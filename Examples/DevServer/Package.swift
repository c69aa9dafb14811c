// swift-tools-version:6.2
import PackageDescription

// A local Tilecast auth server: TilecastAuth embedded in a real HTTP server (GNU libmicrohttpd), the way
// a production server embeds it. Its own package, so the library's build never needs libmicrohttpd.
let package = Package(
    name: "DevServer",
    products: [
        .executable(name: "tilecast-dev-server", targets: ["TilecastDevServer"])
    ],
    dependencies: [
        // With the package trait PostgreSQL, for `--store postgres`: the dev server needs libpq.
        .package(name: "TilecastAuth", path: "../..", traits: ["PostgreSQL"])
    ],
    targets: [
        // GNU libmicrohttpd: Debian's libmicrohttpd-dev, Homebrew's libmicrohttpd.
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"]), .brew(["libmicrohttpd"])]
        ),
        .target(
            name: "DevServerKit",
            dependencies: [
                "CMicroHTTPD",
                .product(name: "TilecastAuth", package: "TilecastAuth"),
                .product(name: "TilecastAuthPostgres", package: "TilecastAuth"),
                .product(name: "TilecastAuthConformance", package: "TilecastAuth"),
            ]
        ),
        .executableTarget(
            name: "TilecastDevServer",
            dependencies: ["DevServerKit", .product(name: "TilecastAuth", package: "TilecastAuth")],
            path: "Sources/tilecast-dev-server"
        ),
        .testTarget(
            name: "DevServerTests",
            dependencies: ["DevServerKit", .product(name: "TilecastAuth", package: "TilecastAuth")]
        ),
    ]
)

for target in package.targets where [.regular, .test, .executable].contains(target.type) {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    if Context.environment["TILECAST_STRICT"] != nil {
        settings.append(.treatAllWarnings(as: .error))
    }
    target.swiftSettings = settings
}
