package format

import (
	"fmt"
	"unicode/utf8"
)

// HeaderTextLimit is how many characters of a header value the command
// line's text shows; the dashboard fits its cut to the screen.
const HeaderTextLimit = 1024

// Cut returns s whole when it has at most n characters; otherwise its
// first n characters and, to follow them, the note that says how long s
// is and where to read it whole: a header of 120 000 characters is one
// line no one can read, and it must not bury the rest of the message.
func Cut(s string, n int) (shown, note string) {
	count := utf8.RuneCountInString(s)
	if count <= n {
		return s, ""
	}
	i := 0
	for range max(n, 0) {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i], fmt.Sprintf("… (%d characters, warren dlq show --json gives it whole)", count)
}
