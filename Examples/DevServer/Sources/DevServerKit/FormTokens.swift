// SPDX-License-Identifier: Apache-2.0

import Synchronization
import TilecastAuth

/// Single-use tokens for the pages' forms — the synchronizer-token pattern against cross-site request
/// forgery. A page that shows a form mints one, bound to what the form does ("approve this
/// authorization request", "revoke this grant"); the post must bring it back, and it works once, within
/// ten minutes. Another site can make a browser post, but cannot read a page of this server to learn a
/// token.
final class FormTokens: Sendable {
    private struct Entry {
        let purpose: String
        let expires: ContinuousClock.Instant
    }

    /// How long a form may stay open before its post is refused.
    static let lifetime = Duration.seconds(600)
    /// At most this many tokens are held; minting beyond drops the oldest.
    static let capacity = 10_000

    private let state = Mutex<(entries: [String: Entry], order: [String])>(([:], []))

    /// A fresh token for a form that does `purpose`: 256 random bits, in hex.
    func mint(for purpose: String) -> String {
        var bytes = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeMutableBytes { SystemRandomSource().fill($0) }
        let token = bytes.map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
        }.joined()
        let now = ContinuousClock.now
        state.withLock { state in
            state.entries[token] = Entry(purpose: purpose, expires: now.advanced(by: Self.lifetime))
            state.order.append(token)
            while state.order.count > Self.capacity {
                state.entries[state.order.removeFirst()] = nil
            }
        }
        return token
    }

    /// The purpose `token` was minted for, if it is unused and unexpired; it is used up either way. The try
    /// page mints its state with the PKCE verifier as the purpose, and takes it back here.
    func take(_ token: String) -> String? {
        let entry = state.withLock { state in state.entries.removeValue(forKey: token) }
        guard let entry, ContinuousClock.now < entry.expires else { return nil }
        return entry.purpose
    }

    /// Whether `token` was minted for `purpose`, unused and unexpired; it is used up either way.
    func redeem(_ token: String?, for purpose: String) -> Bool {
        guard let token else { return false }
        let entry = state.withLock { state in state.entries.removeValue(forKey: token) }
        guard let entry else { return false }
        return entry.purpose == purpose && ContinuousClock.now < entry.expires
    }
}
