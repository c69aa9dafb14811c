// SPDX-License-Identifier: Apache-2.0

/// The dev server's pages: escaping, and one layout around them.
enum HTML {
    /// `text` with the five characters that matter in HTML escaped, for element content and quoted
    /// attribute values.
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// A hidden form field.
    static func hidden(_ name: String, _ value: String) -> String {
        #"<input type="hidden" name="\#(escape(name))" value="\#(escape(value))">"#
    }

    /// A whole page around `body`, which the caller has escaped.
    static func page(title: String, _ body: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>\(escape(title)) · Tilecast dev server</title>
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <style>
        body { font: 16px/1.5 system-ui, sans-serif; max-width: 44rem; margin: 2rem auto; padding: 0 1rem; }
        table { border-collapse: collapse; width: 100%; } td, th { border-bottom: 1px solid #ddd; padding: .3rem; text-align: left; }
        code { background: #f3f3f3; padding: 0 .2rem; } .note { color: #666; font-size: .9rem; }
        button { font: inherit; padding: .3rem .9rem; } form.inline { display: inline; }
        </style></head>
        <body><p class="note">Tilecast auth — local development server. Not for production.</p>
        <h1>\(escape(title))</h1>
        \(body)
        <p class="note"><a href="/">Home</a> · <a href="/studio">Studio</a> · <a href="/account">Accounts and grants</a></p>
        </body></html>
        """
    }
}
