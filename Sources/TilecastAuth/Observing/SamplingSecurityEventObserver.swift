// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A ``SecurityEventObserver`` that passes on the first events of each kind of flood in a window and
/// counts the rest, so that a flood of refused requests cannot flood the log.
///
/// Three kinds of event come in floods a client controls, and only those are sampled:
/// ``SecurityEvent/rateLimited(key:retryAfterSeconds:)``, ``SecurityEvent/requestRefused(_:peerAddress:)``
/// (by HTTP status and `error` code, so the first refusal of every sort still gets through) and
/// ``SecurityEvent/backendFailed(operation:error:)`` (by operation). Within each `window`, the first
/// `eventsPerWindow` of a kind pass; later ones are counted, and when the next event of that kind
/// arrives after the window — or when ``flush()`` is called — the count goes on as one
/// ``SecurityEvent/eventsSuppressed(kind:count:)``. Every other event — a replay, a reuse, a revocation, a
/// grant created — always passes, at once: they are what alerting is for.
///
/// ```swift
/// let observer = SamplingSecurityEventObserver(wrapping: MyLogObserver(), window: .seconds(60))
/// let engine = try AuthEngine(store: store, accounts: accounts, observer: observer)
/// // and now and then, say every minute, so a flood's tail is reported even if the flood stops:
/// observer.flush()
/// ```
public final class SamplingSecurityEventObserver: SecurityEventObserver, Sendable {
    private struct Tally {
        var windowStart: Date
        var passed: Int
        var suppressed: Int
    }

    /// The observer events are passed on to.
    public let base: any SecurityEventObserver
    /// How long a window lasts.
    public let window: Duration
    /// How many events of a kind pass in one window.
    public let eventsPerWindow: Int

    private let timeSource: any TimeSource
    private let tallies = LockedValue([String: Tally]())

    /// - Parameters:
    ///   - base: Where the events go.
    ///   - window: How long a window lasts; at least a millisecond.
    ///   - eventsPerWindow: How many events of a kind pass in each window; at least 1.
    ///   - timeSource: The clock windows are measured on.
    public init(
        wrapping base: any SecurityEventObserver,
        window: Duration = .seconds(60),
        eventsPerWindow: Int = 1,
        timeSource: any TimeSource = SystemTimeSource()
    ) {
        precondition(window >= .milliseconds(1), "window must be at least 1 ms")
        precondition(eventsPerWindow >= 1, "eventsPerWindow must be at least 1")
        self.base = base
        self.window = window
        self.eventsPerWindow = eventsPerWindow
        self.timeSource = timeSource
    }

    public func observe(_ event: SecurityEvent) {
        guard let kind = Self.floodKind(of: event) else {
            base.observe(event)
            return
        }
        let now = timeSource.now()
        let length = window.timeInterval
        let (summary, passes) = tallies.withLock { tallies -> (SecurityEvent?, Bool) in
            var summary: SecurityEvent?
            var tally = tallies[kind] ?? Tally(windowStart: now, passed: 0, suppressed: 0)
            // A clock that steps back starts a new window too, so a window never stretches.
            if now.timeIntervalSince(tally.windowStart) >= length || now < tally.windowStart {
                if tally.suppressed > 0 {
                    summary = .eventsSuppressed(kind: kind, count: tally.suppressed)
                }
                tally = Tally(windowStart: now, passed: 0, suppressed: 0)
            }
            let passes = tally.passed < eventsPerWindow
            if passes {
                tally.passed += 1
            } else {
                tally.suppressed += 1
            }
            tallies[kind] = tally
            return (summary, passes)
        }
        if let summary {
            base.observe(summary)
        }
        if passes {
            base.observe(event)
        }
    }

    /// Reports every count of suppressed events now, and forgets the windows whose time is up.
    public func flush() {
        let now = timeSource.now()
        let length = window.timeInterval
        let summaries = tallies.withLock { tallies -> [SecurityEvent] in
            var summaries: [SecurityEvent] = []
            for kind in tallies.keys.sorted() {
                guard var tally = tallies[kind] else { continue }
                if tally.suppressed > 0 {
                    summaries.append(.eventsSuppressed(kind: kind, count: tally.suppressed))
                    tally.suppressed = 0
                }
                tallies[kind] = now.timeIntervalSince(tally.windowStart) >= length ? nil : tally
            }
            return summaries
        }
        for summary in summaries {
            base.observe(summary)
        }
    }

    /// The kind an event is sampled under, or `nil` for an event that always passes.
    static func floodKind(of event: SecurityEvent) -> String? {
        if event.kind == .rateLimited {
            return "rateLimited"
        }
        if event.kind == .requestRefused, let refusal = event.refusal {
            return "requestRefused \(refusal.status) \(refusal.code)"
        }
        if event.kind == .backendFailed, let operation = event.backendOperation {
            return "backendFailed \(operation.rawValue)"
        }
        // Every other kind — replays, reuse, revocations, grants, sessions, and any kind a later release
        // adds — always passes.
        return nil
    }
}
