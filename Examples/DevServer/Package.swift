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
        .package(name: "TilecastAuth", path: "../..")
    ],
    targets: [
        // GNU libmicrohttpd from Debian's libmicrohttpd-dev.
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .target(
            name: "DevServerKit",
            dependencies: [
                "CMicroHTTPD",
                .product(name: "TilecastAuth", package: "TilecastAuth"),
                .product(name: "TilecastAuthPostgres", package: "TilecastAuth"),
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
