// SPDX-License-Identifier: Apache-2.0

import Foundation

/// The checks on a request's framing that GNU libmicrohttpd 0.9.75 does not make: it accepts
/// `Content-Length` together with `Transfer-Encoding`, and two `Content-Length` fields that disagree.
/// A server behind a proxy that frames such a request differently can be made to read the rest of one
/// request as the start of another — request smuggling. TilecastAuth assumes the HTTP server in front of
/// it has framed every request unambiguously (see `Docs/Embedding.md`); this is how the dev server does.
enum MessageFraming {
    /// Why the request's framing is ambiguous, or `nil` when it is not.
    static func problem(in headers: [(name: String, value: String)]) -> String? {
        let lengths = headers.filter { $0.name.lowercased() == "content-length" }.map(\.value)
        let encodings = headers.filter { $0.name.lowercased() == "transfer-encoding" }.map(\.value)
        if !encodings.isEmpty && !lengths.isEmpty {
            // RFC 9112 §6.1: may be rejected, "ought to be handled as an error".
            return "Content-Length and Transfer-Encoding together are not accepted."
        }
        if lengths.count > 1 || lengths.contains(where: { $0.contains(",") }) {
            // RFC 9112 §6.3 and RFC 9110 §8.6: more than one length is an invalid framing.
            return "More than one Content-Length is not accepted."
        }
        if let length = lengths.first, length.isEmpty || !length.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            return "Content-Length must be a decimal number."
        }
        if !encodings.isEmpty {
            // RFC 9112 §6.3: chunked must be the final coding of a request, and the only one this accepts.
            let codings = encodings.joined(separator: ",").split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces).lowercased()
            }
            guard codings == ["chunked"] else { return "Only Transfer-Encoding: chunked is accepted." }
        }
        return nil
    }
}
