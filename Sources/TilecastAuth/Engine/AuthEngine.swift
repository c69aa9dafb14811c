// SPDX-License-Identifier: Apache-2.0

/// The engine of Tilecast's sign-in: the domain logic of `POST /api/v1/oauth/ios-session` and of
/// everything around its grants, for a Swift server to embed.
///
/// One value holds the configuration, the store, the account directory, the rate limiter, the observer,
/// the clock and the random source. It offers:
/// - ``handle(request:)``, the endpoint itself: HTTP request in, HTTP response out, never throwing and
///   never trapping on any input;
/// - the lifecycle of every grant, sharing the same store and clock — the iOS app's and those of the
///   server's other flows: ``issueCode(account:client:redirectURI:codeChallenge:codeChallengeMethod:scope:authenticatedAt:)``
///   for the authorize step, ``createGrant(account:client:scope:startsSession:authenticatedAt:)`` for the
///   web login or a device flow, ``revokeGrant(_:)``, ``revokeAllGrants(of:)``,
///   ``signOut(sessionCookieValue:)``;
/// - the checks on every later request: ``authenticateSession(cookieValue:)`` and
///   ``authenticateBearer(authorization:)``.
///
/// It was `IOSSessionEngine`, a name that described only the first of the three.
///
/// The engine is a value with no mutable state of its own; copies share the store and everything else.
public struct AuthEngine: Sendable {
    /// The configuration and the random source, held once for every exchange to share.
    let settings: ExchangeSettings
    let store: any GrantStore
    let accounts: any AccountDirectory
    let rateLimiter: any RateLimiter
    let observer: any SecurityEventObserver
    let timeSource: any TimeSource
    /// Whether ``observer`` is anything but the ``NoOpSecurityEventObserver``: without one, no event is
    /// built at all (``report(_:)``).
    let reportsEvents: Bool
    /// ``store``, ``rateLimiter`` and ``accounts`` where they are the in-memory ones, whose operations an
    /// exchange calls without suspending (`AuthEngine+Components.swift`).
    let inMemoryStore: InMemoryGrantStore?
    let inMemoryRateLimiter: InMemoryRateLimiter?
    let inMemoryAccounts: InMemoryAccountDirectory?

    /// The most rotations one refresh makes within a reuse leeway, each after another request's rotation
    /// superseded the one before, until it is told to retry (503): for the model checker's bound on how
    /// many rotations a burst must have seen commit before answering so.
    package static var rotationsBeforeContention: Int { Int(ExchangeStateMachine.maximumRotations) }

    /// The validated configuration.
    public var configuration: EngineConfiguration { settings.configuration }
    var randomSource: any RandomSource { settings.randomSource }

    /// Creates an engine.
    ///
    /// - Parameters:
    ///   - configuration: The endpoint's configuration; validated here.
    ///   - store: Where codes, grants, tokens and sessions live.
    ///   - accounts: The server's source of account status.
    ///   - rateLimiter: Decides whether an attempt may proceed; an ``InMemoryRateLimiter`` by default.
    ///   - observer: Receives security events; none by default, and then no event is even built.
    ///   - timeSource: The clock; the system clock by default.
    ///   - randomSource: Where secrets come from; the operating system's CSPRNG by default.
    /// - Throws: ``ConfigurationError`` for an impossible or unsafe configuration.
    public init(
        configuration: EngineConfiguration = EngineConfiguration(),
        store: any GrantStore,
        accounts: any AccountDirectory,
        rateLimiter: any RateLimiter = InMemoryRateLimiter(),
        observer: any SecurityEventObserver = NoOpSecurityEventObserver(),
        timeSource: any TimeSource = SystemTimeSource(),
        randomSource: any RandomSource = SystemRandomSource()
    ) throws(ConfigurationError) {
        try configuration.validate()
        self.settings = ExchangeSettings(configuration: configuration, randomSource: randomSource)
        self.store = store
        self.accounts = accounts
        self.rateLimiter = rateLimiter
        self.observer = observer
        self.timeSource = timeSource
        self.reportsEvents = !(observer is NoOpSecurityEventObserver)
        self.inMemoryStore = store as? InMemoryGrantStore
        self.inMemoryRateLimiter = rateLimiter as? InMemoryRateLimiter
        self.inMemoryAccounts = accounts as? InMemoryAccountDirectory
    }
}

extension AuthEngine {
    /// Hands `event` to the observer. With the default ``NoOpSecurityEventObserver`` the event is not
    /// built: building one copies its strings (a grant's client and account), retaining each, for an
    /// observer that drops it.
    @inline(__always)
    func report(_ event: @autoclosure () -> SecurityEvent) {
        if reportsEvents {
            observer.observe(event())
        }
    }
}
