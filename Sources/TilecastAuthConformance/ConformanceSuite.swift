// SPDX-License-Identifier: Apache-2.0

import Foundation

/// A set of scenario files, loaded from files and folders.
public struct ConformanceSuite: Sendable {
    /// The scenarios, in path order.
    public let scenarios: [Scenario]
    /// The files that are not valid scenarios — or repeat another file's name — each with its path and
    /// what is wrong. They are not run; a runner reports them as failures.
    public let invalidFiles: [ScenarioFormatError]

    /// Loads every `.json` file at the given paths; a folder is searched recursively.
    ///
    /// - Throws: ``ScenarioFormatError`` for a path that does not exist.
    public init(paths: [String]) throws(ScenarioFormatError) {
        var files: [String] = []
        let manager = FileManager.default
        for path in paths {
            var isFolder: ObjCBool = false
            guard manager.fileExists(atPath: path, isDirectory: &isFolder) else {
                throw ScenarioFormatError(path: path, message: "no such file or folder")
            }
            if isFolder.boolValue {
                let found = (manager.enumerator(atPath: path)?.allObjects as? [String] ?? [])
                    .filter { $0.hasSuffix(".json") }
                    .sorted()
                    .map { (path as NSString).appendingPathComponent($0) }
                files += found
            } else {
                files.append(path)
            }
        }
        var scenarios: [Scenario] = []
        var invalidFiles: [ScenarioFormatError] = []
        var names: [String: String] = [:]
        for file in files {
            guard let data = manager.contents(atPath: file) else {
                invalidFiles.append(ScenarioFormatError(path: file, message: "cannot be read"))
                continue
            }
            let scenario: Scenario
            do {
                scenario = try Scenario(data: data, source: file)
            } catch {
                invalidFiles.append(ScenarioFormatError(path: file, message: error.description))
                continue
            }
            if let other = names[scenario.name] {
                invalidFiles.append(
                    ScenarioFormatError(path: file, message: "the name \(scenario.name) is also used by \(other)")
                )
                continue
            }
            names[scenario.name] = file
            scenarios.append(scenario)
        }
        self.scenarios = scenarios
        self.invalidFiles = invalidFiles
    }

    /// The rule ids of a specification: every `**X-n**` that opens a list item.
    public static func ruleIDs(inSpecification text: String) -> [String] {
        text.split(separator: "\n").compactMap { line in
            line.firstMatch(of: /^- \*\*([A-Z]-[0-9]+)\*\*/).map { String($0.1) }
        }
    }
}
