// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import TilecastAuthVerification

/// The fuzz target's committed seed corpus, replayed through the same harness on every `swift test`.
struct FuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/corpus")

    @Test("Every corpus input keeps every fuzz property")
    func corpusHolds() async throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.corpus.path).sorted()
        #expect(files.count >= 25)
        for file in files {
            let input = try Data(contentsOf: Self.corpus.appendingPathComponent(file))
            let violation = await FuzzHarness.run(Array(input))
            #expect(violation == nil, "\(file): \(violation ?? "")")
        }
    }

    @Test(
        "Placeholders and options reach the deep paths: exchanges, replays, reuse, leeway, failures",
        arguments: [
            ("exchange-valid.txt", 200), ("exchange-replay.txt", 400), ("refresh-plain.txt", 200),
            ("refresh-studio-true.txt", 200), ("refresh-reuse.txt", 400), ("refresh-web-token.txt", 400),
            ("framed-get.txt", 405), ("framed-text-plain.txt", 415), ("framed-origin.txt", 400),
            ("option-leeway-retry.txt", 200), ("option-session-fails-exchange.txt", 503),
            ("option-session-fails-refresh.txt", 200), ("option-inactive-account.txt", 403),
            ("option-expired-code.txt", 400), ("option-no-native-credential.txt", 200),
        ]
    )
    func deepPaths(file: String, status: Int) async throws {
        let input = try Data(contentsOf: Self.corpus.appendingPathComponent(file))
        let outcome = await FuzzHarness.outcome(of: Array(input))
        #expect(outcome.status == status)
        #expect(outcome.violation == nil)
    }
}
