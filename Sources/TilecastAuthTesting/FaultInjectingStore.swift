// SPDX-License-Identifier: Apache-2.0

public import Foundation
public import TilecastAuth

/// Wraps a `GrantStore` and makes chosen calls throw, the way a database that went away would — to
/// test that every backend failure is a clean 503 with nothing half-done.
///
/// A call chosen to fail throws ``InjectedFault`` *instead of* reaching the wrapped store, so it writes
/// nothing: exactly the contract a real store must keep when it throws.
public final class FaultInjectingStore: GrantStore, Sendable {
    /// A `GrantStore` requirement.
    public enum Operation: String, Hashable, Sendable, CaseIterable {
        case client, insertCode, authorizationCode, redeemCode, createGrant, refreshToken, rotateRefreshToken
        case replaceSession, revokeGrant, revokeGrants, accessToken, session, grant, grants, removeExpired
    }

    /// The error an injected failure throws.
    public struct InjectedFault: BackendAvailabilityError, CustomStringConvertible {
        /// The call that failed.
        public let operation: Operation
        /// Whether the failure says the backend was unavailable: asked for with
        /// ``failNextAsUnavailable(_:)``.
        public let backendWasUnavailable: Bool

        init(operation: Operation, backendWasUnavailable: Bool = false) {
            self.operation = operation
            self.backendWasUnavailable = backendWasUnavailable
        }

        public var description: String {
            "injected failure of \(operation.rawValue)\(backendWasUnavailable ? ", the backend unavailable" : "")"
        }
    }

    /// Calls to fail, once, whichever of them comes first.
    private struct AwaitedFailure {
        var operations: Set<Operation>
        var backendWasUnavailable: Bool
    }

    private struct State {
        /// Each set fails the next call of any of its operations, once.
        var failNext: [AwaitedFailure] = []
        var failCallNumber: Int?
        var calls = 0
        var retainedSessions: [SecretDigest: SessionLookup] = [:]
        var failAfterCommitting: [(operation: Operation, meanwhile: (@Sendable () async -> Void)?)] = []
        var sessionStartFailures = 0
        var injected: [Operation] = []
        var rotationHook: (@Sendable (Int) async -> Void)?
        var rotations = 0
        var rememberedCodes: [SecretDigest: AuthorizationCode] = [:]
        var rememberedRefreshTokens: [SecretDigest: RefreshTokenLookup] = [:]
    }

    /// The wrapped store.
    public let base: any GrantStore
    /// Whether this store answers `nil` to every rotation that starts a session, as a store that starts
    /// sessions separately does, whatever the wrapped store would answer.
    public let startsSessionsSeparately: Bool
    /// Whether this store remembers nothing while a failure of the matching read waits, so that the read
    /// a scenario asks to fail happens on a wrapped store that would otherwise skip it.
    public let readsWhenAReadFailureWaits: Bool
    private let state = LockedValue(State())

    /// Wraps `base`; with `startsSessionsSeparately`, as a store without a rotation that starts a session
    /// (``rotateRefreshToken(_:replacing:successor:accessToken:startingSession:at:)`` answers `nil`).
    ///
    /// With `readsWhenAReadFailureWaits`, ``rememberedAuthorizationCode(_:)`` and
    /// ``rememberedRefreshToken(_:)`` answer `nil` while a ``failNext(_:)`` of ``Operation/authorizationCode``
    /// or ``Operation/refreshToken`` waits: a conformance scenario that fails the lookup means the lookup.
    /// Off, a test of the engine's remembered path can fail its reads too.
    public init(
        _ base: any GrantStore,
        startsSessionsSeparately: Bool = false,
        readsWhenAReadFailureWaits: Bool = false
    ) {
        self.base = base
        self.startsSessionsSeparately = startsSessionsSeparately
        self.readsWhenAReadFailureWaits = readsWhenAReadFailureWaits
    }

    /// Makes the next call of `operation` throw.
    public func failNext(_ operation: Operation) {
        failNext(anyOf: [operation])
    }

    /// Makes the next call of any of `operations` throw — once, whichever comes first. For example, the
    /// next Studio session start is `redeemCode` in a code exchange and `replaceSession` in a refresh.
    public func failNext(anyOf operations: Set<Operation>) {
        state.withLock { $0.failNext.append(AwaitedFailure(operations: operations, backendWasUnavailable: false)) }
    }

    /// Makes the next call of `operation` throw an error saying the backend was unavailable
    /// (`BackendAvailabilityError`): nothing of it was sent, and nothing else could have been then — as
    /// a store whose connections all stayed busy, or whose server accepted none, throws.
    public func failNextAsUnavailable(_ operation: Operation) {
        state.withLock { $0.failNext.append(AwaitedFailure(operations: [operation], backendWasUnavailable: true)) }
    }

    /// Makes the next Studio session start throw: the next ``Operation/redeemCode`` of a code the wrapped
    /// store holds unredeemed — a redemption that would find its code used or gone starts no session, and
    /// an instance going forward on a code it remembers may attempt one — or the next
    /// ``Operation/replaceSession``, whichever comes first. While one waits, the rotation that starts a
    /// session answers `nil`, so that a refresh's session starts with ``replaceSession(of:with:at:)``
    /// after its rotation, and fails there.
    public func failNextSessionStart() {
        state.withLock { $0.sessionStartFailures += 1 }
    }

    /// Makes the `number`-th call from now (1 is the next call), of whatever operation, throw.
    public func failCall(number: Int) {
        state.withLock {
            $0.failCallNumber = $0.calls + number
        }
    }

    /// Lets the next call of `operation` reach the wrapped store, then throws as if the connection was
    /// lost before the answer came back: a write that committed although its caller was told it failed.
    /// The contract asks a store to make sure a throw wrote nothing; a database cannot always, and the
    /// engine must not make matters worse when it happens (`GrantStore`'s "Errors"). Taken by
    /// ``Operation/redeemCode`` and ``Operation/rotateRefreshToken`` (either rotation); no other operation
    /// takes it. `meanwhile` runs between the commit and the throw: what other requests did before the
    /// lost answer would have arrived.
    public func failNextAfterCommitting(_ operation: Operation, meanwhile: (@Sendable () async -> Void)? = nil) {
        state.withLock { $0.failAfterCommitting.append((operation, meanwhile)) }
    }

    /// How many failures asked for with ``failNext(_:)``, ``failNext(anyOf:)``, ``failNextAsUnavailable(_:)``,
    /// ``failNextAfterCommitting(_:meanwhile:)`` or ``failNextSessionStart()`` still wait for their call.
    public var waitingFailures: Int {
        state.withLock { $0.failNext.count + $0.failAfterCommitting.count + $0.sessionStartFailures }
    }

    /// Runs `hook` before each rotation from now on (either kind) reaches the wrapped store, with the
    /// rotation's number (1 for the first): what other requests do between a request's first look at a
    /// token and its rotation.
    public func beforeEachRotation(_ hook: @escaping @Sendable (_ rotation: Int) async -> Void) {
        state.withLock { state in
            state.rotationHook = hook
            state.rotations = 0
        }
    }

    /// Runs the hook ``beforeEachRotation(_:)`` set, if any.
    private func rotating() async {
        let hook = state.withLock { state -> (@Sendable (Int) async -> Void, Int)? in
            guard let hook = state.rotationHook else { return nil }
            state.rotations += 1
            return (hook, state.rotations)
        }
        if let (hook, number) = hook { await hook(number) }
    }

    /// The operations whose calls this store made throw so far, in order.
    public var injectedFaults: [Operation] { state.withLock { $0.injected } }

    /// How many calls the store has received.
    public var callCount: Int { state.withLock { $0.calls } }

    /// Keeps answering ``session(_:)`` for `lookup` after the wrapped store has dropped it: a store that
    /// marks replaced sessions instead of deleting them. The engine must not let such a session in.
    public func keepAnsweringForReplacedSession(_ lookup: SessionLookup) {
        state.withLock { $0.retainedSessions[lookup.session.digest] = lookup }
    }

    /// Answers ``rememberedAuthorizationCode(_:)`` with `code` from now on, as a store that wrote it and
    /// remembers it would — stale once the wrapped store's code changes, which is what a test of the
    /// engine's use of remembered records needs (`GrantStore`'s "Remembered records").
    public func remember(_ code: AuthorizationCode) {
        state.withLock { $0.rememberedCodes[code.digest] = code }
    }

    /// Answers ``rememberedRefreshToken(_:)`` with `lookup` from now on, stale once the wrapped store's
    /// token or grant changes.
    public func remember(_ lookup: RefreshTokenLookup) {
        state.withLock { $0.rememberedRefreshTokens[lookup.token.digest] = lookup }
    }

    /// Throws when a failure after committing is waiting for `operation`, taking it, once what it lets
    /// happen meanwhile has run.
    private func leave(_ operation: Operation) async throws {
        let waiting = state.withLock { state -> (@Sendable () async -> Void)?? in
            guard let index = state.failAfterCommitting.firstIndex(where: { $0.operation == operation }) else {
                return .none
            }
            return .some(state.failAfterCommitting.remove(at: index).meanwhile)
        }
        guard case .some(let meanwhile) = waiting else { return }
        await meanwhile?()
        state.withLock { $0.injected.append(operation) }
        throw InjectedFault(operation: operation)
    }

    /// Throws when a session start's failure waits, taking it.
    private func takeSessionStartFailure(_ operation: Operation) throws {
        let fail = state.withLock { state -> Bool in
            guard state.sessionStartFailures > 0 else { return false }
            state.sessionStartFailures -= 1
            state.injected.append(operation)
            return true
        }
        if fail { throw InjectedFault(operation: operation) }
    }

    private func enter(_ operation: Operation) throws {
        let fault = state.withLock { state -> InjectedFault? in
            state.calls += 1
            if state.failCallNumber == state.calls {
                state.failCallNumber = nil
                state.injected.append(operation)
                return InjectedFault(operation: operation)
            }
            guard let index = state.failNext.firstIndex(where: { $0.operations.contains(operation) }) else {
                return nil
            }
            let failure = state.failNext.remove(at: index)
            state.injected.append(operation)
            return InjectedFault(operation: operation, backendWasUnavailable: failure.backendWasUnavailable)
        }
        if let fault {
            throw fault
        }
    }

    public func client(_ id: ClientID) async throws -> Client? {
        try enter(.client)
        return try await base.client(id)
    }

    public func insertCode(_ code: AuthorizationCode) async throws {
        try enter(.insertCode)
        try await base.insertCode(code)
    }

    public func authorizationCode(_ digest: SecretDigest) async throws -> AuthorizationCode? {
        try enter(.authorizationCode)
        return try await base.authorizationCode(digest)
    }

    /// The code a test planted with `remember(_:)`, else what the wrapped store remembers — or `nil`
    /// while a failure of ``Operation/authorizationCode`` waits, with ``readsWhenAReadFailureWaits``.
    /// Never fails: the requirement has no I/O.
    public func rememberedAuthorizationCode(_ digest: SecretDigest) -> AuthorizationCode? {
        guard !failureWaits(for: .authorizationCode) else { return nil }
        return state.withLock { $0.rememberedCodes[digest] } ?? base.rememberedAuthorizationCode(digest)
    }

    /// Whether a failure of `operation` asked for with `failNext` waits and makes this store read.
    private func failureWaits(for operation: Operation) -> Bool {
        readsWhenAReadFailureWaits && state.withLock { $0.failNext.contains { $0.operations.contains(operation) } }
    }

    public func redeemCode(
        _ digest: SecretDigest,
        issuing issuance: GrantIssuance,
        at now: Date
    ) async throws
        -> CodeRedemption
    {
        try enter(.redeemCode)
        if state.withLock({ $0.sessionStartFailures > 0 }),
            let code = try await base.authorizationCode(digest), code.redemption == nil
        {
            try takeSessionStartFailure(.redeemCode)
        }
        let outcome = try await base.redeemCode(digest, issuing: issuance, at: now)
        try await leave(.redeemCode)
        return outcome
    }

    public func createGrant(_ issuance: GrantIssuance) async throws -> GrantCreation {
        try enter(.createGrant)
        return try await base.createGrant(issuance)
    }

    public func refreshToken(_ digest: SecretDigest) async throws -> RefreshTokenLookup? {
        try enter(.refreshToken)
        return try await base.refreshToken(digest)
    }

    /// The token a test planted with `remember(_:)`, else what the wrapped store remembers — or `nil`
    /// while a failure of ``Operation/refreshToken`` waits, with ``readsWhenAReadFailureWaits``. Never
    /// fails: the requirement has no I/O.
    public func rememberedRefreshToken(_ digest: SecretDigest) -> RefreshTokenLookup? {
        guard !failureWaits(for: .refreshToken) else { return nil }
        return state.withLock { $0.rememberedRefreshTokens[digest] } ?? base.rememberedRefreshToken(digest)
    }

    public func rotateRefreshToken(
        _ presented: SecretDigest,
        replacing current: SecretDigest,
        successor: RefreshToken,
        accessToken: AccessToken,
        at now: Date
    ) async throws -> RefreshRotation {
        await rotating()
        try enter(.rotateRefreshToken)
        let outcome = try await base.rotateRefreshToken(
            presented,
            replacing: current,
            successor: successor,
            accessToken: accessToken,
            at: now
        )
        try await leave(.rotateRefreshToken)
        return outcome
    }

    /// The wrapped store's rotation that starts the session with it, failing as a rotation does — or
    /// `nil` while a failure of ``Operation/replaceSession`` is waiting: then the engine rotates and
    /// starts the session in two calls, and the session start fails where a test asked for it.
    public func rotateRefreshToken(
        _ presented: SecretDigest,
        replacing current: SecretDigest,
        successor: RefreshToken,
        accessToken: AccessToken,
        startingSession session: StudioSession,
        at now: Date
    ) async throws -> RefreshRotation? {
        guard !startsSessionsSeparately,
            !state.withLock({
                $0.failNext.contains { $0.operations.contains(.replaceSession) } || $0.sessionStartFailures > 0
            })
        else {
            return nil
        }
        await rotating()
        try enter(.rotateRefreshToken)
        let outcome = try await base.rotateRefreshToken(
            presented,
            replacing: current,
            successor: successor,
            accessToken: accessToken,
            startingSession: session,
            at: now
        )
        try await leave(.rotateRefreshToken)
        return outcome
    }

    public func replaceSession(
        of grant: GrantID,
        with session: StudioSession,
        at now: Date
    ) async throws
        -> SessionReplacement
    {
        try enter(.replaceSession)
        try takeSessionStartFailure(.replaceSession)
        return try await base.replaceSession(of: grant, with: session, at: now)
    }

    public func revokeGrant(_ id: GrantID, reason: RevocationReason, at now: Date) async throws -> GrantRevocation {
        try enter(.revokeGrant)
        return try await base.revokeGrant(id, reason: reason, at: now)
    }

    public func revokeGrants(of account: AccountID, reason: RevocationReason, at now: Date) async throws -> [Grant] {
        try enter(.revokeGrants)
        return try await base.revokeGrants(of: account, reason: reason, at: now)
    }

    public func accessToken(_ digest: SecretDigest) async throws -> AccessTokenLookup? {
        try enter(.accessToken)
        return try await base.accessToken(digest)
    }

    public func session(_ digest: SecretDigest) async throws -> SessionLookup? {
        try enter(.session)
        if let lookup = try await base.session(digest) {
            return lookup
        }
        guard let kept = state.withLock({ $0.retainedSessions[digest] }),
            let grant = try await base.grant(kept.grant.id)
        else { return nil }
        return SessionLookup(session: kept.session, grant: grant)
    }

    public func grant(_ id: GrantID) async throws -> Grant? {
        try enter(.grant)
        return try await base.grant(id)
    }

    public func grants(of account: AccountID) async throws -> [Grant] {
        try enter(.grants)
        return try await base.grants(of: account)
    }

    public func removeExpired(at now: Date) async throws -> Int {
        try enter(.removeExpired)
        return try await base.removeExpired(at: now)
    }
}
