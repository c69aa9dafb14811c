// SPDX-License-Identifier: Apache-2.0

/// Typed reads of a scenario object's members, with errors that say where.
struct ScenarioReader {
    let members: [String: ScenarioJSON]
    let path: String

    init(_ members: [String: ScenarioJSON], path: String) {
        self.members = members
        self.path = path
    }

    func requireKeys(_ allowed: Set<String>) throws(ScenarioFormatError) {
        for key in members.keys where !allowed.contains(key) {
            throw ScenarioFormatError(path: join(key), message: "unknown key")
        }
    }

    func string(_ key: String) throws(ScenarioFormatError) -> String? {
        switch members[key] {
        case nil, .null: return nil
        case .string(let text): return text
        default: throw ScenarioFormatError(path: join(key), message: "must be a string")
        }
    }

    func number(_ key: String) throws(ScenarioFormatError) -> Double? {
        switch members[key] {
        case nil: return nil
        case .number(let number): return number
        default: throw ScenarioFormatError(path: join(key), message: "must be a number")
        }
    }

    func bool(_ key: String) throws(ScenarioFormatError) -> Bool? {
        switch members[key] {
        case nil: return nil
        case .bool(let flag): return flag
        default: throw ScenarioFormatError(path: join(key), message: "must be true or false")
        }
    }

    func object(_ key: String) throws(ScenarioFormatError) -> [String: ScenarioJSON]? {
        switch members[key] {
        case nil: return nil
        case .object(let object): return object
        default: throw ScenarioFormatError(path: join(key), message: "must be an object")
        }
    }

    func strings(_ key: String) throws(ScenarioFormatError) -> [String]? {
        switch members[key] {
        case nil: return nil
        case .array(let items):
            var strings: [String] = []
            for item in items {
                guard case .string(let text) = item else {
                    throw ScenarioFormatError(path: join(key), message: "must be an array of strings")
                }
                strings.append(text)
            }
            return strings
        default: throw ScenarioFormatError(path: join(key), message: "must be an array of strings")
        }
    }

    private func join(_ key: String) -> String {
        path.isEmpty ? key : "\(path).\(key)"
    }
}
