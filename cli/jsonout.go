package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"
)

// writeJSON prints v as indented JSON. Values are exact, but the
// characters a terminal could obey that encoding/json leaves raw (DEL, the
// C1 controls such as the 8-bit CSI U+009B, bidirectional overrides) are
// written as \u escapes: still the same JSON value, never a command to
// the terminal it is printed on.
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(escapeTerminal(buf.Bytes()))
	return err
}

func escapeTerminal(b []byte) []byte {
	if bytes.IndexFunc(b, needsEscape) < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+32)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if needsEscape(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return out
}

func needsEscape(r rune) bool {
	return (r >= 0x7f && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}
