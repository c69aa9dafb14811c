// SPDX-License-Identifier: Apache-2.0

import Foundation

extension FileHandle {
    /// Writes text as UTF-8.
    func write(_ text: String) {
        write(Data(text.utf8))
    }
}
