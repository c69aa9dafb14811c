// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What a rate limiter counts attempts against.
///
/// The engine keys attempts by the trusted peer address (see ``EndpointRequest/peerAddress``). IPv6
/// addresses are keyed by their /64 prefix — one subscriber usually holds a whole /64, and keying each
/// address separately would give a client 2^64 buckets. An IPv4-mapped IPv6 address is keyed as the
/// IPv4 address, and a port, if the server left one on, is dropped.
public struct RateLimitKey: Hashable, Sendable {
    /// The key as text, for example `ip:192.0.2.7` or `ip6:2001:db8:0:1::/64`.
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The key for a peer address; all requests without an address share one key.
    public static func peer(_ address: String?) -> RateLimitKey {
        guard let address, !address.isEmpty else { return RateLimitKey(rawValue: "ip:unknown") }
        let host = Self.hostPart(of: address)
        if let octets = Self.parseIPv4(host) {
            return RateLimitKey(rawValue: "ip:\(octets.map(String.init).joined(separator: "."))")
        }
        if let bytes = Self.parseIPv6(host) {
            let isMapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
            if isMapped {
                return RateLimitKey(rawValue: "ip:\(bytes[12...].map(String.init).joined(separator: "."))")
            }
            let groups = stride(from: 0, to: 8, by: 2).map {
                String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16)
            }
            return RateLimitKey(rawValue: "ip6:\(groups.joined(separator: ":"))::/64")
        }
        // Not an address: a Unix socket path or a name the server chose. Keep it as given.
        return RateLimitKey(rawValue: "peer:\(address)")
    }

    /// Strips a port (`192.0.2.7:443`, `[2001:db8::1]:443`) and an IPv6 zone (`fe80::1%eth0`).
    private static func hostPart(of address: String) -> String {
        var host = Substring(address)
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            host = host[host.index(after: host.startIndex)..<close]
        } else if host.filter({ $0 == ":" }).count == 1, let colon = host.firstIndex(of: ":") {
            host = host[..<colon]
        }
        if let percent = host.firstIndex(of: "%") {
            host = host[..<percent]
        }
        return String(host)
    }

    private static func parseIPv4(_ text: String) -> [UInt8]? {
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        return withUnsafeBytes(of: &address) { Array($0) }
    }

    private static func parseIPv6(_ text: String) -> [UInt8]? {
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        return withUnsafeBytes(of: &address) { Array($0) }
    }
}

extension RateLimitKey: CustomStringConvertible {
    public var description: String { rawValue }
}
