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
/// addresses are keyed by a prefix — /64 by default (``EngineConfiguration/rateLimitIPv6PrefixLength``):
/// one subscriber usually holds a whole /64, and keying each address separately would give a client
/// 2^64 buckets; a provider that hands out /56 or /48 calls for the wider key. An IPv6 address that
/// embeds an IPv4 one is keyed as that IPv4 address, so that many IPv4 clients do not share one IPv6
/// bucket: IPv4-mapped `::ffff:0:0/96` (RFC 4291 §2.5.5.2), IPv4-translated `::ffff:0:0:0/96`
/// (RFC 2765 §2.1) and the NAT64 well-known prefix `64:ff9b::/96` (RFC 6052 §2.1). A port, if the server
/// left one on, and a zone (`%eth0`) are dropped. Addresses are kept as numbers, so a key costs no
/// allocation and hashes quickly on every request.
public struct RateLimitKey: Hashable, Sendable {
    private enum Storage: Hashable, Sendable {
        case ipv4(UInt32)
        case ipv6Prefix(UInt64, length: UInt8)
        case other(String)
    }

    private let storage: Storage

    private init(_ storage: Storage) {
        self.storage = storage
    }

    /// A key of the limiter's own choosing, such as an account or a tenant.
    public init(rawValue: String) {
        self.storage = .other(rawValue)
    }

    /// The key as text, for example `ip:192.0.2.7`, `ip6:2001:db8:0:1::/64`, `ip6:2001:db8:0:100::/56` or
    /// `peer:…`.
    public var rawValue: String {
        switch storage {
        case .ipv4(let address):
            return "ip:\(address >> 24).\((address >> 16) & 0xFF).\((address >> 8) & 0xFF).\(address & 0xFF)"
        case .ipv6Prefix(let prefix, let length):
            let groups = stride(from: 48, through: 0, by: -16).map {
                String((prefix >> UInt64($0)) & 0xFFFF, radix: 16)
            }
            return "ip6:\(groups.joined(separator: ":"))::/\(length)"
        case .other(let text):
            return text
        }
    }

    /// The key for a peer address; all requests without an address share one key.
    ///
    /// - Parameters:
    ///   - address: The trusted peer address: IPv4 or IPv6, with or without a port or zone; `nil` or empty
    ///     when the server has none.
    ///   - ipv6PrefixLength: The bits of an IPv6 address that make its key, 32 to 64.
    public static func peer(_ address: String?, ipv6PrefixLength: Int = 64) -> RateLimitKey {
        guard let address, !address.isEmpty else { return RateLimitKey(.other("ip:unknown")) }
        if let ipv4 = parseIPv4(address) {
            return RateLimitKey(.ipv4(ipv4))
        }
        let host = hostPart(of: address)
        if let ipv4 = parseIPv4(host) {
            return RateLimitKey(.ipv4(ipv4))
        }
        if let bytes = parseIPv6(host) {
            if embedsIPv4(bytes) {
                return RateLimitKey(.ipv4(bytes[12...].reduce(0) { $0 << 8 | UInt32($1) }))
            }
            let length = min(64, max(32, ipv6PrefixLength))
            let mask = UInt64.max << UInt64(64 - length)
            let prefix = bytes[0..<8].reduce(0) { $0 << 8 | UInt64($1) } & mask
            return RateLimitKey(.ipv6Prefix(prefix, length: UInt8(length)))
        }
        // Not an address: a Unix socket path or a name the server chose. Keep it as given.
        return RateLimitKey(.other("peer:\(address)"))
    }

    /// A dotted-quad IPv4 address, with or without a `:port`, as a number — parsed by hand, since this
    /// runs on every request; `nil` for anything else.
    private static func parseIPv4(_ text: String) -> UInt32? {
        text.withLentUTF8 { bytes -> UInt32? in
            var address: UInt32 = 0
            var octet: UInt32 = 0
            var digits = 0
            var dots = 0
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"):
                    octet = octet * 10 + UInt32(byte - UInt8(ascii: "0"))
                    digits += 1
                    guard digits <= 3, octet <= 255 else { return nil }
                case UInt8(ascii: "."):
                    guard digits > 0, dots < 3 else { return nil }
                    address = address << 8 | octet
                    (octet, digits, dots) = (0, 0, dots + 1)
                case UInt8(ascii: ":"):
                    // A port follows the fourth octet; stop reading.
                    guard dots == 3, digits > 0 else { return nil }
                    return address << 8 | octet
                default:
                    return nil
                }
            }
            guard dots == 3, digits > 0 else { return nil }
            return address << 8 | octet
        }
    }

    /// Whether the last 32 bits of an IPv6 address are an IPv4 address the first 96 bits only wrap:
    /// `::ffff:0:0/96` (mapped), `::ffff:0:0:0/96` (translated) or `64:ff9b::/96` (NAT64).
    private static func embedsIPv4(_ bytes: [UInt8]) -> Bool {
        let zeroThroughSeven = bytes[0..<8].allSatisfy { $0 == 0 }
        let mapped = zeroThroughSeven && bytes[8] == 0 && bytes[9] == 0 && bytes[10] == 0xFF && bytes[11] == 0xFF
        let translated = zeroThroughSeven && bytes[8] == 0xFF && bytes[9] == 0xFF && bytes[10] == 0 && bytes[11] == 0
        let nat64 =
            bytes[0] == 0x00 && bytes[1] == 0x64 && bytes[2] == 0xFF && bytes[3] == 0x9B
            && bytes[4..<12].allSatisfy { $0 == 0 }
        return mapped || translated || nat64
    }

    /// Strips a port (`[2001:db8::1]:443`) and an IPv6 zone (`fe80::1%eth0`).
    private static func hostPart(of address: String) -> String {
        var host = Substring(address)
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            host = host[host.index(after: host.startIndex)..<close]
        }
        if let percent = host.firstIndex(of: "%") {
            host = host[..<percent]
        }
        return String(host)
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
