// SPDX-License-Identifier: Apache-2.0

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The system's wall clock.
public struct SystemTimeSource: TimeSource {
    public init() {}

    public func now() -> Date {
        Date()
    }
}
