// SPDX-License-Identifier: Apache-2.0

import Testing
import TilecastAuth

/// A revocation reason is what a store keeps; a newer release's reason must read back on an older one.
struct RevocationReasonTests {
    @Test("Known reasons round-trip through their raw value; a newer release's snake-case reason reads back")
    func rawValues() {
        for reason in [RevocationReason.codeReplayed, .refreshTokenReused, .signedOut, .revokedByServer] {
            #expect(RevocationReason(rawValue: reason.rawValue) == reason)
        }
        #expect(RevocationReason.signedOut.rawValue == "signed_out")
        let newer = RevocationReason(rawValue: "password_reset")
        #expect(newer?.rawValue == "password_reset")
        #expect(newer != .revokedByServer)
    }

    @Test("What no release writes does not read back", arguments: ["", "Signed_Out", "signed-out", "x y", "é"])
    func invalidRawValues(rawValue: String) {
        #expect(RevocationReason(rawValue: rawValue) == nil)
    }
}
