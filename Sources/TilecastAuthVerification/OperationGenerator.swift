// SPDX-License-Identifier: Apache-2.0

/// Generates random operation sequences, weighted towards the operations that reach deep states —
/// exchanges and refreshes of things that exist — with every kind of invalid request, replay,
/// revocation, clock jump and failure mixed in.
///
/// Concurrent refresh bursts are generated with and without a reuse leeway: with one, a burst's successes
/// are retries of one another, and which of them rotated last depends on scheduling, so the checker reads
/// it from the store and requires it to be one of the answers.
public struct OperationGenerator: Sendable {
    public init() {}

    /// A sequence of `length` operations from `seed`.
    public func sequence(seed: UInt64, length: Int) -> [ModelOperation] {
        var random = SplitMixGenerator(seed: seed)
        return (0..<length).map { _ in operation(&random) }
    }

    private func operation(_ random: inout SplitMixGenerator) -> ModelOperation {
        let index = Int.random(in: 0..<16, using: &random)
        let variant =
            Int.random(in: 0..<10, using: &random) < 7
            ? ModelOperation.Variant.valid
            : ModelOperation.Variant.allCases.randomElement(using: &random)!
        // Mostly the newest code or token, so sequences go deep; sometimes an older one, for replays.
        let pick = [0, 0, 0, 0, 0, 1, 1, 2, Int.random(in: 0..<8, using: &random)].randomElement(using: &random)!
        let studio: Bool? = [nil, false, true, true].randomElement(using: &random)!
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<15: return .issueCode(account: index % 4 == 0 ? 1 : 0, forWeb: index == 15)
        case 15..<33: return .exchange(code: pick, variant: variant)
        case 33..<63: return .refresh(token: pick, studioSession: studio, variant: variant)
        case 63..<65: return .concurrentExchange(code: pick, count: Int.random(in: 2...6, using: &random))
        case 65..<67:
            return .concurrentRefresh(
                token: pick,
                count: Int.random(in: 2...6, using: &random),
                studioSession: studio == true
            )
        case 67..<70: return .revokeGrant(grant: pick)
        case 70..<73: return .signOut(session: pick)
        case 73..<75: return .signOutWithToken(token: pick)
        case 75..<80: return .setAccount(account: index % 2, active: index % 3 != 0)
        case 80..<91:
            let seconds: [Double] = [1, 1, 5, 5, 11, 30, 59, 61, 300, 901, 3600, 86_400, 14 * 86_400, 31 * 86_400]
            return .advanceClock(seconds: seconds.randomElement(using: &random)!)
        case 91..<94: return .failNextSessionStart
        case 94..<97: return .createWebGrant(account: index % 2)
        default: return .removeExpired
        }
    }
}
