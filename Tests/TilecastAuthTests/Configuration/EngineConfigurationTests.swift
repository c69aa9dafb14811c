// SPDX-License-Identifier: Apache-2.0

import Testing

@testable import TilecastAuth

struct EngineConfigurationTests {
    @Test("The defaults are valid and describe the production endpoint")
    func defaults() throws {
        let configuration = EngineConfiguration()
        try configuration.validate()
        #expect(configuration.servedClient == "tilecast-ios")
        #expect(configuration.callbackURI == "tilecast-ios://oauth/callback")
        #expect(configuration.lifetimes.authorizationCode == .seconds(60))
        #expect(configuration.issuesNativeCredential)
        #expect(configuration.allowedOrigins.isEmpty)
    }

    @Test(
        "Origins must be scheme://host[:port]",
        arguments: ["https://studio.tilecast.test/", "studio.tilecast.test", "https://", "HTTPS://x.test"]
    )
    func badOrigins(origin: String) {
        #expect(throws: ConfigurationError.invalidOrigin(origin)) {
            try EngineConfiguration(allowedOrigins: [origin]).validate()
        }
    }

    @Test("Origins with ports and IPv6 hosts are accepted")
    func goodOrigins() throws {
        try EngineConfiguration(allowedOrigins: ["https://studio.tilecast.test:8443", "http://[::1]:8080"]).validate()
    }

    @Test("The body limit is 1 KiB to 1 MiB", arguments: [1023, 1_048_577, 0, -1])
    func bodyLimit(limit: Int) {
        #expect(throws: ConfigurationError.bodyLimitOutOfRange) {
            try EngineConfiguration(maximumBodyBytes: limit).validate()
        }
    }

    @Test("The client and callback must be printable and non-empty")
    func clientRegistration() {
        #expect(throws: ConfigurationError.invalidClientRegistration) {
            try EngineConfiguration(callbackURI: "").validate()
        }
        #expect(throws: ConfigurationError.invalidClientRegistration) {
            try EngineConfiguration(servedClient: "tilecast ios").validate()
        }
    }

    @Test("Identifiers compare byte for byte")
    func identifiersByBytes() {
        #expect(ClientID("\u{E9}") != ClientID("e\u{301}"))
        #expect(Set([ClientID("\u{E9}"), ClientID("e\u{301}")]).count == 2)
        #expect(AccountID("K") != AccountID("\u{212A}"))
    }
}
