// SPDX-License-Identifier: Apache-2.0

public import TilecastAuth

/// A scenario's configuration overrides, applied to the engine's defaults.
public struct ScenarioConfiguration: Sendable {
    /// The engine configuration with the overrides applied (not yet validated).
    public var engine = EngineConfiguration()
    /// The rate limiter's capacity and refill interval in seconds.
    public var rateLimit = (capacity: 100, refillSeconds: 1.0)

    public init() {}

    /// Reads the overrides of a scenario's `configuration` object, as the control API's `reset` receives
    /// them.
    public init(overrides: [String: ScenarioJSON]) throws(ScenarioFormatError) {
        try self.init(overrides, path: "configuration")
    }

    /// The configuration keys a scenario may set.
    public static let keys: Set<String> = [
        "servedClient", "callbackUri", "lifetimes", "refreshTokenReuseLeeway", "cookie", "issuesNativeCredential",
        "allowedOrigins", "maximumBodyBytes", "rateLimit",
    ]

    /// Reads the overrides of a scenario's `configuration` object.
    init(_ json: [String: ScenarioJSON], path: String) throws(ScenarioFormatError) {
        for key in json.keys where !Self.keys.contains(key) {
            throw ScenarioFormatError(path: "\(path).\(key)", message: "unknown configuration key")
        }
        let reader = ScenarioReader(json, path: path)
        if let value = try reader.string("servedClient") { engine.servedClient = ClientID(value) }
        if let value = try reader.string("callbackUri") { engine.callbackURI = value }
        if let value = try reader.number("refreshTokenReuseLeeway") {
            engine.refreshTokenReuseLeeway = .milliseconds(Int64(value * 1000))
        }
        if let value = try reader.bool("issuesNativeCredential") { engine.issuesNativeCredential = value }
        if let value = try reader.strings("allowedOrigins") { engine.allowedOrigins = Set(value) }
        if let value = try reader.number("maximumBodyBytes") { engine.maximumBodyBytes = Int(value) }
        if let lifetimes = try reader.object("lifetimes") {
            let nested = ScenarioReader(lifetimes, path: "\(path).lifetimes")
            try nested.requireKeys([
                "authorizationCode", "accessToken", "refreshTokenIdle", "refreshTokenAbsolute", "studioSession",
            ])
            func seconds(_ key: String) throws(ScenarioFormatError) -> Duration? {
                try nested.number(key).map { .milliseconds(Int64($0 * 1000)) }
            }
            if let value = try seconds("authorizationCode") { engine.lifetimes.authorizationCode = value }
            if let value = try seconds("accessToken") { engine.lifetimes.accessToken = value }
            if let value = try seconds("refreshTokenIdle") { engine.lifetimes.refreshTokenIdle = value }
            if let value = try seconds("refreshTokenAbsolute") { engine.lifetimes.refreshTokenAbsolute = value }
            if let value = try seconds("studioSession") { engine.lifetimes.studioSession = value }
        }
        if let cookie = try reader.object("cookie") {
            let nested = ScenarioReader(cookie, path: "\(path).cookie")
            try nested.requireKeys(["name", "secure", "path", "domain", "sameSite"])
            if let value = try nested.string("name") { engine.cookie.name = value }
            if let value = try nested.bool("secure") { engine.cookie.secure = value }
            if let value = try nested.string("path") { engine.cookie.path = value }
            if cookie["domain"] != nil { engine.cookie.domain = try nested.string("domain") }
            if let value = try nested.string("sameSite") {
                guard let sameSite = SameSite(rawValue: value) else {
                    throw ScenarioFormatError(path: "\(path).cookie.sameSite", message: "must be Strict, Lax or None")
                }
                engine.cookie.sameSite = sameSite
            }
        }
        if let rateLimit = try reader.object("rateLimit") {
            let nested = ScenarioReader(rateLimit, path: "\(path).rateLimit")
            try nested.requireKeys(["capacity", "refillSeconds"])
            if let value = try nested.number("capacity") { self.rateLimit.capacity = max(1, Int(value)) }
            if let value = try nested.number("refillSeconds") { self.rateLimit.refillSeconds = max(0.001, value) }
        }
    }
}
