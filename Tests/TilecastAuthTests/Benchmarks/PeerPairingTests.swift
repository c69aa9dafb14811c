// SPDX-License-Identifier: Apache-2.0

import Testing

@testable import TilecastAuthBenchmarks

/// The benchmark's advantage over a peer, round by round: each peer run against our run of the round it
/// followed.
struct PeerPairingTests {
    /// One run of a peer, as `PeerBenchmark.run` returns it, measured after `round`.
    private static func peerRun(exchange: Double, refresh: Double, afterRound round: Int) -> PeerBenchmark.Result {
        PeerBenchmark.Result(library: "authlib", codeExchangeRuns: [exchange], refreshRuns: [refresh])
            .measured(afterRound: round)
    }

    @Test("Each peer run is divided by ours in the round it followed: a machine changing speed cancels out")
    func pairsRounds() throws {
        // Ours in a fast and a slow state, and the peer 12 times slower in whichever state its round was;
        // the slow state falls on four of our seven rounds but only three of the peer's.
        let ours = [4.0, 8.0, 4.1, 8.2, 4.2, 8.1, 7.9]
        let peerTimes = ours.enumerated().map { round, time in round == 6 ? 4.0 * 12 : time * 12 }
        var combined = Self.peerRun(exchange: peerTimes[0], refresh: peerTimes[0], afterRound: 0)
        for round in 1..<ours.count {
            let run = Self.peerRun(exchange: peerTimes[round], refresh: peerTimes[round], afterRound: round)
            combined = combined.adding(run)
        }
        #expect(combined.rounds == Array(0..<7))
        let exchange = try #require(combined.pairedCodeExchangeAdvantage(over: ours))
        let refresh = try #require(combined.pairedRefreshAdvantage(over: ours))
        #expect(abs(exchange - 12) < 1e-9)
        #expect(abs(refresh - 12) < 1e-9)
        // The medians alone fall in different states: 4.2 × 12 against 8.0, about 6.3×.
        let ratioOfMedians = combined.codeExchange / BenchmarkMeasurement.median(of: ours)
        #expect(ratioOfMedians < 7)
    }

    @Test("A round the peer missed is skipped, not shifted onto the next; unpaired runs give no ratio")
    func missingRounds() throws {
        // The peer's script failed after round 1: its later runs must still meet rounds 2 and 3.
        let ours = [2.0, 3.0, 5.0, 7.0]
        let combined = Self.peerRun(exchange: 20, refresh: 10, afterRound: 0)
            .adding(Self.peerRun(exchange: 50, refresh: 25, afterRound: 2))
            .adding(Self.peerRun(exchange: 70, refresh: 35, afterRound: 3))
        #expect(try #require(combined.pairedCodeExchangeAdvantage(over: ours)) == 10)
        #expect(try #require(combined.pairedRefreshAdvantage(over: ours)) == 5)

        // Runs with no rounds recorded (the peers run on their own) pair with nothing.
        let unpaired = PeerBenchmark.Result(library: "oauthlib", codeExchangeRuns: [40, 50], refreshRuns: [20, 30])
        #expect(unpaired.pairedCodeExchangeAdvantage(over: ours) == nil)
        // Nor do rounds we have no run for.
        #expect(Self.peerRun(exchange: 1, refresh: 1, afterRound: 9).pairedRefreshAdvantage(over: ours) == nil)
    }
}
