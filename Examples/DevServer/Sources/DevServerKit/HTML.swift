// SPDX-License-Identifier: Apache-2.0

/// The dev server's pages: escaping, and one layout around them.
enum HTML {
    /// `text` with the five characters that matter in HTML escaped, for element content and quoted
    /// attribute values. It walks Unicode scalars, not `Character`s: a grapheme cluster can join `<` to
    /// a prepended mark (U+0600 + `<` is one `Character`), and a walk by `Character` would let it through
    /// unescaped.
    static func escape(_ text: String) -> String {
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped.append(contentsOf: "&amp;".unicodeScalars)
            case "<": escaped.append(contentsOf: "&lt;".unicodeScalars)
            case ">": escaped.append(contentsOf: "&gt;".unicodeScalars)
            case "\"": escaped.append(contentsOf: "&quot;".unicodeScalars)
            case "'": escaped.append(contentsOf: "&#39;".unicodeScalars)
            default: escaped.append(scalar)
            }
        }
        return String(escaped)
    }

    /// A hidden form field.
    static func hidden(_ name: String, _ value: String) -> String {
        #"<input type="hidden" name="\#(escape(name))" value="\#(escape(value))">"#
    }

    /// The site's name, in every page's title.
    static let site = "Tilecast dev server"

    /// A whole page around `body`, which the caller has escaped.
    static func page(title: String, _ body: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>\(escape(title == site ? site : "\(title) · \(site)"))</title>
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <style>
        body { font: 16px/1.5 system-ui, sans-serif; max-width: 44rem; margin: 2rem auto; padding: 0 1rem; }
        table { border-collapse: collapse; width: 100%; } td, th { border-bottom: 1px solid #ddd; padding: .3rem; text-align: left; }
        code { background: #f3f3f3; padding: 0 .2rem; } .note { color: #666; font-size: .9rem; }
        button { font: inherit; padding: .3rem .9rem; } form.inline { display: inline; }
        code { overflow-wrap: anywhere; } label.choice { display: block; padding: .2rem 0; }
        @media (max-width: 36rem) {
          body { margin: 1rem auto; }
          table, tbody, tr, td { display: block; width: 100%; } tr.head { display: none; }
          tr { border-bottom: 1px solid #ddd; padding: .4rem 0; } td { border: 0; padding: .1rem 0; }
          td[data-label]::before { content: attr(data-label) ": "; font-weight: 600; }
        }
        </style></head>
        <body><p class="note">Tilecast auth — local development server. Not for production.</p>
        <h1>\(escape(title))</h1>
        \(body)
        <p class="note"><a href="/">Home</a> · <a href="/studio">Studio</a> · <a href="/account">Accounts and grants</a></p>
        </body></html>
        """
    }
}
