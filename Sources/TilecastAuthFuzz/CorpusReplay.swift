// SPDX-License-Identifier: Apache-2.0

#if !TILECAST_FUZZ
import Foundation
import TilecastAuthVerification

/// Without the fuzzer (a normal build), the fuzz target replays corpus files: every file under the given
/// folders runs once through the same harness. With `-DTILECAST_FUZZ` libFuzzer supplies `main` instead.
@main
struct CorpusReplay {
    static func main() async {
        let paths = CommandLine.arguments.dropFirst()
        var files: [String] = []
        for path in paths {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
                print("no such file or folder: \(path)")
                exit(2)
            }
            if isFolder.boolValue {
                let names = (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? []).sorted()
                files += names.map { "\(path)/\($0)" }.filter { !$0.hasSuffix("/") }
            } else {
                files.append(path)
            }
        }
        var failures = 0
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else { continue }
            if let violation = await FuzzHarness.run(Array(data)) {
                failures += 1
                print("FAIL \(file): \(violation)")
            }
        }
        print("\(files.count) corpus inputs replayed, \(failures) broke a property")
        exit(failures == 0 ? 0 : 1)
    }
}
#endif
