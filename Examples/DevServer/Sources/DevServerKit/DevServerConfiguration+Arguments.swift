// SPDX-License-Identifier: Apache-2.0

/// A command line the dev server cannot follow, with what to do instead.
public struct DevServerUsageError: Error, Equatable, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}

extension DevServerConfiguration {
    /// The options that take no value.
    static let flags: Set<String> = ["--insecure-development-cookie", "--conformance-control"]
    /// The options that take one.
    static let options: Set<String> = [
        "--port", "--host", "--store", "--database-url", "--tls-cert", "--tls-key", "--rate-limit",
        "--rate-limit-refill", "--pool-size", "--pool-wait", "--statement-timeout", "--operation-timeout",
        "--prune-every", "--connect-timeout",
    ]

    /// Reads the command line (without the program's name): see `tilecast-dev-server --help`.
    public init(arguments: [String]) throws(DevServerUsageError) {
        self.init()
        var remaining = arguments[...]
        var storeName = "memory"
        var databaseURL: String?
        while let argument = remaining.popFirst() {
            if Self.flags.contains(argument) {
                switch argument {
                case "--insecure-development-cookie": insecureDevelopmentCookie = true
                default: conformanceControl = true
                }
                continue
            }
            guard Self.options.contains(argument) else {
                throw DevServerUsageError("unknown option \(argument)")
            }
            guard let value = remaining.popFirst() else { throw DevServerUsageError("\(argument) needs a value") }
            switch argument {
            case "--port":
                guard let port = UInt16(value) else { throw DevServerUsageError("--port needs a port number") }
                self.port = port
            case "--host": host = value
            case "--store": storeName = value
            case "--database-url": databaseURL = value
            case "--tls-cert": tlsCertificatePath = value
            case "--tls-key": tlsKeyPath = value
            case "--rate-limit":
                guard let count = Int(value), count >= 1 else {
                    throw DevServerUsageError("--rate-limit takes a count ≥ 1")
                }
                rateLimit.capacity = count
            case "--connect-timeout":
                guard let seconds = Int(value), seconds >= 1 else {
                    throw DevServerUsageError("--connect-timeout takes whole seconds ≥ 1")
                }
                connectTimeoutSeconds = seconds
            case "--pool-size":
                guard let count = Int(value), count >= 1 else {
                    throw DevServerUsageError("--pool-size takes a count ≥ 1")
                }
                poolSize = count
            default:
                guard let seconds = Double(value), seconds.isFinite, seconds >= 0 else {
                    throw DevServerUsageError("\(argument) takes seconds")
                }
                switch argument {
                case "--rate-limit-refill":
                    guard seconds > 0 else { throw DevServerUsageError("--rate-limit-refill takes seconds > 0") }
                    rateLimit.refillSeconds = seconds
                case "--pool-wait": poolWaitSeconds = seconds
                case "--statement-timeout": statementTimeoutSeconds = seconds
                case "--operation-timeout": operationTimeoutSeconds = seconds
                default: pruneIntervalSeconds = seconds
                }
            }
        }
        switch storeName {
        case "memory": break
        case "postgres":
            guard let databaseURL else { throw DevServerUsageError("--store postgres needs --database-url") }
            store = .postgres(databaseURL: databaseURL)
        default: throw DevServerUsageError("--store takes memory or postgres")
        }
        if (tlsCertificatePath == nil) != (tlsKeyPath == nil) {
            throw DevServerUsageError("--tls-cert and --tls-key go together")
        }
        if insecureDevelopmentCookie && usesTLS {
            throw DevServerUsageError(
                "--insecure-development-cookie is for plain HTTP; over TLS the server keeps the production cookie"
            )
        }
    }
}
