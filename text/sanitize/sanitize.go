// Package sanitize makes untrusted text (anything that came from the broker
// or a database) safe to put on a terminal: escape sequences, control
// characters, bidirectional overrides and invalid UTF-8 become visible
// escapes such as \x1b, so nothing reaches the terminal as a command.
package sanitize

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Text sanitises a single-line value (a name, a header, a table cell):
// every control character, newlines and tabs included, is escaped.
func Text(s string) string { return clean(s, false) }

// Block sanitises multi-line text (a message body): newlines and tabs
// are kept, everything else is escaped as in Text.
func Block(s string) string { return clean(s, true) }

// Bytes is Block for a byte slice.
func Bytes(b []byte) string { return clean(string(b), true) }

// Message sanitises a message made of parts some of which were
// sanitised already (an error wrapping others): as Block, but a
// backslash is left as it is, so an escape made before is not escaped
// again. Nothing reaches the terminal as a command either way.
func Message(s string) string { return cleanAs(s, true, false) }

func clean(s string, keepLayout bool) string { return cleanAs(s, keepLayout, true) }

func cleanAs(s string, keepLayout, markBackslash bool) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepLayout && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f, isBidiControl(r), isInvisible(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		case markBackslash && r == '\\' && i+1 < len(s) && (s[i+1] == 'x' || s[i+1] == 'u'):
			// A literal backslash before x/u is doubled so that it cannot
			// be mistaken for an escape this package produced.
			b.WriteString(`\\`)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '\\' {
			return false
		}
	}
	return true
}

// isInvisible reports a character that draws nothing and joins
// nothing (zero width space, word joiner, byte order mark): two names
// that differ by one would look the same.
func isInvisible(r rune) bool { return r == 0x200b || r == 0x2060 || r == 0xfeff }

func isBidiControl(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}
