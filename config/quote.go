package config

import (
	"fmt"
	"strings"
)

// Quote writes s as a TOML basic string, for the config files warren
// writes itself (`config init`, the demo's): quotes and backslashes are
// escaped, control characters written as \uXXXX.
func Quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
