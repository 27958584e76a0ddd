package config

import (
	"strings"

	"github.com/BurntSushi/toml"
)

// locate finds the line of a key in TOML text, so validation errors can
// point at it. BurntSushi/toml keeps no key positions, so this walks the
// lines tracking the current table header. It returns 0 when not found.
func locate(data []byte, key toml.Key) int {
	if len(key) == 0 {
		return 0
	}
	want := key[len(key)-1]
	table := strings.Join(key[:len(key)-1], ".")
	cur := ""
	fallback := 0
	for i, raw := range strings.Split(string(data), "\n") {
		line := strings.TrimSpace(raw)
		if strings.HasPrefix(line, "[") {
			name := strings.Trim(line, "[] \t")
			if j := strings.Index(name, "]"); j >= 0 {
				name = name[:j]
			}
			cur = strings.ReplaceAll(name, " ", "")
			cur = strings.ReplaceAll(cur, "\"", "")
			if cur == strings.Join(key, ".") {
				fallback = i + 1
			}
			continue
		}
		eq := strings.Index(line, "=")
		if eq < 0 {
			continue
		}
		k := strings.Trim(strings.TrimSpace(line[:eq]), "\"")
		if k == want && cur == table {
			return i + 1
		}
		if k == want && fallback == 0 && strings.HasPrefix(table, cur) {
			fallback = i + 1
		}
		if cur == table && strings.HasPrefix(strings.TrimSpace(line[eq+1:]), "{") && strings.Contains(line[eq+1:], want) && k == key[len(key)-2] {
			fallback = i + 1
		}
	}
	return fallback
}
