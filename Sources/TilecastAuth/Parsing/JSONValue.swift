// SPDX-License-Identifier: Apache-2.0

/// A member value of the request's top-level JSON object.
///
/// Only strings and booleans are ever read; nested objects and arrays are validated — well-formed, no
/// duplicate names, not too deep — and then skipped, since RFC 6749 §3.2 has the server ignore
/// parameters it does not recognise.
enum JSONValue: Equatable {
    case string(JSONText)
    case number
    case bool(Bool)
    case null
    case object
    case array

}
