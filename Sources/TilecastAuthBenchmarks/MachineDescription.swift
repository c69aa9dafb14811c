// SPDX-License-Identifier: Apache-2.0

import Foundation

/// Which machine a run measured: its processor, how many processors the process may use, and which boot
/// of which machine it was.
///
/// The peers' figures change with the machine far more than ours: in the runs on the machines of
/// 2026-12-02 and 12-03 Authlib's exchange took 23–41 µs, and on the one booted on 2026-12-03 at 21:08
/// UTC it took 50–116 µs in every run over the nineteen hours it was measured, while ours took 3.24–5.60
/// and 4.16–9.35 µs (`Docs/Performance.md`, "Which machine a run measured"). What the page had called a
/// slow hour was that machine. The boot's identifier tells two runs on one machine from runs on two machines of one kind,
/// which the processor's name cannot: every one of them reported "AMD EPYC".
public struct MachineDescription: Sendable, Equatable {
    /// The processor's name (`model name` in `/proc/cpuinfo`), its family and model numbers.
    var processor: String
    var family: Int?
    var model: Int?
    /// Processors this process may run on.
    var processors: Int
    /// The kernel's identifier of this boot (`/proc/sys/kernel/random/boot_id`).
    var bootID: String?
    /// When the machine booted (`btime` in `/proc/stat`).
    var bootedAt: Date?

    init(
        processor: String,
        family: Int?,
        model: Int?,
        processors: Int,
        bootID: String?,
        bootedAt: Date?
    ) {
        self.processor = processor
        self.family = family
        self.model = model
        self.processors = processors
        self.bootID = bootID
        self.bootedAt = bootedAt
    }

    /// This machine, read from `/proc`; fields it cannot read are `nil`, and the processor `unknown`.
    public static func here() -> MachineDescription {
        func read(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }
        return parse(
            cpuinfo: read("/proc/cpuinfo") ?? "",
            stat: read("/proc/stat") ?? "",
            bootID: read("/proc/sys/kernel/random/boot_id") ?? "",
            processors: ProcessInfo.processInfo.activeProcessorCount
        )
    }

    /// The description the texts of `/proc/cpuinfo`, `/proc/stat` and the boot identifier's file give;
    /// only the first processor's entry of `cpuinfo` is read.
    static func parse(cpuinfo: String, stat: String, bootID: String, processors: Int) -> MachineDescription {
        func field(_ name: String) -> String? {
            for line in cpuinfo.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.isEmpty { break }  // the end of the first processor's entry
                let parts = line.split(separator: ":", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name else { continue }
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
            return nil
        }
        let bootSeconds = stat.split(separator: "\n").lazy
            .compactMap { line -> TimeInterval? in
                let fields = line.split(separator: " ")
                guard fields.count == 2, fields[0] == "btime" else { return nil }
                return TimeInterval(fields[1])
            }
            .first
        let identifier = bootID.trimmingCharacters(in: .whitespacesAndNewlines)
        return MachineDescription(
            processor: field("model name").flatMap { $0.isEmpty ? nil : $0 } ?? "unknown",
            family: field("cpu family").flatMap { Int($0) },
            model: field("model").flatMap { Int($0) },
            processors: processors,
            bootID: identifier.isEmpty ? nil : identifier,
            bootedAt: bootSeconds.map { Date(timeIntervalSince1970: $0) }
        )
    }

    /// `bench machine processor="…" family=… model=… processors=… boot_id=… booted_at=…`, an unknown field
    /// as `-`; the processor's name quoted, since it has spaces.
    public var outputLine: String {
        let booted = bootedAt.map { $0.formatted(.iso8601) } ?? "-"
        let name = processor.replacingOccurrences(of: "\"", with: "'")
        return "bench machine processor=\"\(name)\" family=\(family.map(String.init) ?? "-") "
            + "model=\(model.map(String.init) ?? "-") processors=\(processors) "
            + "boot_id=\(bootID ?? "-") booted_at=\(booted)"
    }
}
