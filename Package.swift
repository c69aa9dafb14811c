// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "TilecastAuth",
    products: [
        .library(name: "TilecastAuth", targets: ["TilecastAuth"]),
        // For tests of code that embeds TilecastAuth, and of GrantStore implementations.
        .library(name: "TilecastAuthTesting", targets: ["TilecastAuthTesting"]),
        // A GrantStore and a RateLimiter on PostgreSQL, through libpq: built with the trait PostgreSQL only, so
        // that nothing needs libpq unless it asks for PostgreSQL (see Docs/PostgreSQL.md, Setup).
        .library(name: "TilecastAuthPostgres", targets: ["TilecastAuthPostgres"]),
        // The conformance scenarios' world and runner, and the control API a server embeds to be checked
        // over HTTP (Docs/Conformance/ControlAPI.md).
        .library(name: "TilecastAuthConformance", targets: ["TilecastAuthConformance"]),
        .executable(name: "tilecast-auth", targets: ["TilecastAuthTool"]),
        // The libFuzzer target; a normal build makes it a corpus replayer (see Docs/Reliability.md).
        .executable(name: "tilecast-auth-fuzz", targets: ["TilecastAuthFuzz"]),
    ],
    traits: [
        // SE-0450 (https://github.com/swiftlang/swift-evolution/blob/main/proposals/0450-swiftpm-package-traits.md).
        // Off by default: a fresh clone builds, runs and tests on a machine without libpq. A server enables
        // it on its dependency (`traits: ["PostgreSQL"]`); here, `--traits PostgreSQL`.
        .trait(
            name: "PostgreSQL",
            description: "PostgresGrantStore and PostgresRateLimiter in TilecastAuthPostgres, on libpq"
        )
    ],
    targets: [
        // SHA-256 on the processor's SHA instructions where it has them (x86-64 SHA extensions); our own C,
        // no library. TilecastAuth checks for them once and otherwise runs its portable Swift SHA-256.
        .target(name: "CTilecastSHA256"),
        // A prefetch hint for the in-memory store's index, which Swift has no way to say.
        .target(name: "CTilecastMemory"),
        // The kernel's CSPRNG through its vDSO `getrandom` (Linux 6.11 and later), without a system call;
        // SystemRandomSource falls back to getentropy wherever it is missing.
        .target(name: "CTilecastRandom"),
        // Base64url of a 32-byte secret on SSSE3's byte shuffle where the processor has it; our own C, no
        // library. TilecastAuth checks once and otherwise runs its portable Swift encoder.
        .target(name: "CTilecastBase64"),
        .target(
            name: "TilecastAuth",
            dependencies: ["CTilecastSHA256", "CTilecastMemory", "CTilecastRandom", "CTilecastBase64"]
        ),
        .target(name: "TilecastAuthTesting", dependencies: ["TilecastAuth"]),
        // libpq, PostgreSQL's C client library. Only the trait PostgreSQL brings it in: without the trait,
        // TilecastAuthPostgres compiles to a module that says how to enable it (its sources are `#if PostgreSQL`).
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        .target(
            name: "TilecastAuthPostgres",
            dependencies: ["TilecastAuth", .target(name: "CLibPQ", condition: .when(traits: ["PostgreSQL"]))]
        ),
        // The runner of the language-neutral conformance scenarios, behind `tilecast-auth conformance`.
        .target(name: "TilecastAuthConformance", dependencies: ["TilecastAuth", "TilecastAuthTesting"]),
        // Model-based randomized testing, the fuzz harness and fault sweeps, behind `tilecast-auth soak`.
        .target(
            name: "TilecastAuthVerification",
            dependencies: ["TilecastAuth", "TilecastAuthTesting", "TilecastAuthPostgres"]
        ),
        .executableTarget(name: "TilecastAuthFuzz", dependencies: ["TilecastAuthVerification"]),
        // The benchmark behind `tilecast-auth bench`.
        .target(name: "TilecastAuthBenchmarks", dependencies: ["TilecastAuth", "TilecastAuthPostgres"]),
        .executableTarget(
            name: "TilecastAuthTool",
            dependencies: [
                "TilecastAuth", "TilecastAuthConformance", "TilecastAuthVerification", "TilecastAuthBenchmarks",
                "TilecastAuthPostgres",
            ]
        ),
        .testTarget(
            name: "TilecastAuthTests",
            dependencies: [
                "TilecastAuth", "TilecastAuthTesting", "TilecastAuthConformance", "TilecastAuthVerification",
                "TilecastAuthPostgres", "TilecastAuthBenchmarks",
            ]
        ),
    ]
)

for target in package.targets
where [.regular, .test, .executable].contains(target.type) && !target.name.hasPrefix("C") {
    var settings = target.swiftSettings ?? []
    // SE-0335 (https://github.com/swiftlang/swift-evolution/blob/main/proposals/0335-existential-any.md):
    // existentials are spelled `any P`.
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    // SE-0444 (https://github.com/swiftlang/swift-evolution/blob/main/proposals/0444-member-import-visibility.md):
    // a file sees only the members of the modules it imports itself.
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    // SE-0409 (https://github.com/swiftlang/swift-evolution/blob/main/proposals/0409-access-level-on-imports.md):
    // an `import` is internal unless it is written `public import`.
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    // SE-0461 (https://github.com/swiftlang/swift-evolution/blob/main/proposals/0461-async-function-isolation.md):
    // nonisolated async functions run on the caller's executor.
    settings.append(.enableUpcomingFeature("NonisolatedNonsendingByDefault"))
    // Strict checks only when CI asks for them (TILECAST_STRICT=1): warning-control settings in a manifest
    // conflict with `-suppress-warnings`, which Xcode and SwiftPM pass when building a dependency.
    if Context.environment["TILECAST_STRICT"] != nil {
        settings.append(.treatAllWarnings(as: .error))
        if target.type == .regular {
            // Every public type must say whether it is Sendable.
            settings.append(.treatWarning("ExplicitSendable", as: .error))
        }
    }
    target.swiftSettings = settings
}
