// SPDX-License-Identifier: Apache-2.0

import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a program and returns its standard output and error.
enum Shell {
    /// Runs `executable` with `arguments`, its environment this process's plus `environment`; `nil` when it
    /// cannot start or exits unsuccessfully.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, added in added }
        }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        // A child inherits the spawning thread's signal mask, and Dispatch's threads block SIGALRM —
        // which `openssl speed` needs to stop. Unblock it around the spawn.
        var alarm = sigset_t()
        var previous = sigset_t()
        sigemptyset(&alarm)
        sigaddset(&alarm, SIGALRM)
        pthread_sigmask(SIG_UNBLOCK, &alarm, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        do {
            try process.run()
        } catch {
            return nil
        }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return process.terminationStatus == 0 ? String(decoding: data, as: UTF8.self) : nil
    }
}
