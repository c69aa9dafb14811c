// SPDX-License-Identifier: Apache-2.0

import Synchronization
import TilecastAuth

/// Single-use tokens for the pages' forms — the synchronizer-token pattern against cross-site request
/// forgery. A page that shows a form mints one, bound to what the form does ("approve this
/// authorization request", "sign this session out", "revoke this grant"); the post must bring it back,
/// and it works once, within ten minutes. Another site can make a browser post, but cannot read a page of
/// this server to learn a token.
///
/// What a token is bound to is kept as a keyed hash of its UTF-8 bytes, not as text: a long `state` costs
/// no memory, and canonically equivalent strings — equal to Swift's `==` — do not match.
final class FormTokens: Sendable {
    private struct Entry {
        let binding: Int
        let payload: String?
        let expires: ContinuousClock.Instant
    }

    /// How long a form may stay open before its post is refused.
    static let lifetime = Duration.seconds(600)
    /// At most this many tokens are held; minting beyond drops expired ones, then the oldest.
    static let capacity = 10_000

    private let state = Mutex<(entries: [String: Entry], order: [String])>(([:], []))

    /// A fresh token for a form bound to `purpose`: 256 random bits, in hex. `payload` is kept with it
    /// and handed back by ``take(_:boundTo:)`` (the try page keeps its PKCE verifier so).
    func mint(for purpose: String, payload: String? = nil) -> String {
        let token = Self.randomHex()
        let now = ContinuousClock.now
        let entry = Entry(binding: Self.binding(purpose), payload: payload, expires: now.advanced(by: Self.lifetime))
        state.withLock { state in
            // Expired tokens go first; they are the oldest, at the front.
            while let oldest = state.order.first, (state.entries[oldest]?.expires ?? now) <= now {
                state.entries[state.order.removeFirst()] = nil
            }
            state.entries[token] = entry
            state.order.append(token)
            while state.order.count > Self.capacity {
                state.entries[state.order.removeFirst()] = nil
            }
        }
        return token
    }

    /// Whether `token` was minted for `purpose`, unused and unexpired; it is used up if so. A token
    /// presented for another purpose stays: someone else's attempt must not spend it.
    func redeem(_ token: String?, for purpose: String) -> Bool {
        take(token, boundTo: purpose) != nil
    }

    /// The payload of `token` (empty when it has none) if it was minted for `purpose`, unused and
    /// unexpired; it is used up if so.
    func take(_ token: String?, boundTo purpose: String) -> String? {
        guard let token else { return nil }
        let binding = Self.binding(purpose)
        let entry = state.withLock { state -> Entry? in
            guard let entry = state.entries[token], entry.binding == binding else { return nil }
            state.entries[token] = nil
            return entry
        }
        guard let entry, ContinuousClock.now < entry.expires else { return nil }
        return entry.payload ?? ""
    }

    /// 256 bits from the operating system's CSPRNG, as 64 hex digits: every token, nonce and key the dev
    /// server makes.
    static func randomHex() -> String {
        var bytes = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeMutableBytes { SystemRandomSource().fill($0) }
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
    }

    /// A keyed hash of `purpose`'s UTF-8 bytes (SipHash with this process's random seed).
    private static func binding(_ purpose: String) -> Int {
        var hasher = Hasher()
        Array(purpose.utf8).withUnsafeBytes { hasher.combine(bytes: $0) }
        return hasher.finalize()
    }
}
