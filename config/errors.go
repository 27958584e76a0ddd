package config

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Error is a config error in one sentence: the file and line, the key,
// what was expected and what was found ("warren.toml:3:
// contexts.x.amqp_url must be a string (…), found the integer 5672").
type Error struct {
	Path string
	Line int    // 0 when unknown
	Key  string // dotted; "" for a fault in the TOML syntax itself
	// Msg continues the sentence after the key: "must be …, found …".
	Msg string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(" ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// syntaxError words a fault in the TOML text itself.
func syntaxError(path string, data []byte, err error) error {
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		return &Error{Path: path, Msg: "not valid TOML: " + strings.TrimPrefix(err.Error(), "toml: ")}
	}
	line := pe.Position.Line
	// The parser counts a newline it stopped at as the next line; the
	// byte offset says where the fault really is.
	if off := pe.Position.Start; off > 0 && off <= len(data) {
		line = 1 + strings.Count(string(data[:off]), "\n")
	}
	return &Error{Path: path, Line: line, Msg: "not valid TOML: " + pe.Message}
}

// lineOfKey reads the library's "line N (last key "a.b")" prefix.
var lineOfKey = regexp.MustCompile(`^toml: (?:line (\d+) )?\(last key "([^"]*)"\): `)

// shapeError words a value the decoder drops without a word: a
// non-table where the contexts table or a context belongs.
func shapeError(path string, data []byte, raw map[string]any) error {
	v, ok := raw["contexts"]
	if !ok {
		return nil
	}
	key := toml.Key{"contexts"}
	ctxs, isTable := v.(map[string]any)
	if isTable {
		names := make([]string, 0, len(ctxs))
		for n := range ctxs {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if _, isTable := ctxs[n].(map[string]any); !isTable {
				v, key = ctxs[n], toml.Key{"contexts", n}
				break
			}
		}
		if len(key) == 1 {
			return nil
		}
	}
	return &Error{Path: path, Line: locate(data, key), Key: key.String(),
		Msg: "must be a table ([" + key.String() + "]), found " + describe(v)}
}

// valueError words a value of the wrong type (or one a key's own parser
// refused) after the text parsed as TOML; raw is that text decoded
// without a schema, where the value that was found is read back.
func valueError(path string, data []byte, raw map[string]any, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		// A value the key's own parser refused (a duration): its message
		// already says what was expected and found.
		key := splitKey(pe.LastKey)
		line := pe.Position.Line
		if line == 0 {
			line = locate(data, key)
		}
		msg := pe.Message
		// A number where a duration string belongs reaches the parser
		// as its digits; name what was really written.
		w := expected(reflect.TypeOf(File{}), key)
		if found, ok := lookup(raw, key, w); ok {
			msg = "must be " + w.words + ", found " + describe(found)
		}
		return &Error{Path: path, Line: line, Key: key.String(), Msg: msg}
	}
	m := lineOfKey.FindStringSubmatch(err.Error())
	if m == nil {
		return &Error{Path: path, Msg: "could not be read: " + strings.TrimPrefix(err.Error(), "toml: ")}
	}
	key := splitKey(m[2])
	line, _ := strconv.Atoi(m[1])
	if line == 0 {
		line = locate(data, key)
	}
	want := expected(reflect.TypeOf(File{}), key)
	found, ok := lookup(raw, key, want)
	msg := "must be " + want.words
	if ok {
		msg += ", found " + describe(found)
	}
	return &Error{Path: path, Line: line, Key: key.String(), Msg: msg}
}

// splitKey turns the library's dotted key back into its parts.
func splitKey(s string) toml.Key {
	if s == "" {
		return nil
	}
	return toml.Key(strings.Split(s, "."))
}

// want is what a key's field takes: words for the sentence and a test a
// found value passes.
type want struct {
	words string
	fits  func(any) bool
}

// hints add what a string key means to "a string".
var hints = map[string]string{
	"amqp_url":        "a URL such as amqp://host:5672/",
	"management_url":  "a URL such as http://host:15672",
	"metrics_url":     `a URL such as http://host:15692, or "off"`,
	"password_env":    "the name of an environment variable",
	"audit_dsn_env":   "the name of an environment variable",
	"dsn_env":         "the name of an environment variable",
	"password_file":   "a file's path",
	"dsn_file":        "a file's path",
	"environment":     `"dev", "staging" or "prod"`,
	"current_context": "a context's name",
	"logical_id":      "message_id, header:NAME or json:PATH",
	"audit":           `"file", "file:PATH", "postgres" or "postgres:TABLE"`,

	"fallback_amqp_urls":       `the other nodes' URLs, such as ["amqp://rabbit-2:5672/"]`,
	"fallback_management_urls": `the other nodes' URLs, such as ["http://rabbit-2:15672"]`,
}

var durationType = reflect.TypeOf(Duration{})

// walkKey walks t along key's parts to the type of the field the last
// part names; false when a part names no field warren reads.
func walkKey(t reflect.Type, key toml.Key) (reflect.Type, bool) {
	for _, part := range key {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Map:
			t = t.Elem()
		case reflect.Struct:
			f, ok := fieldByTag(t, part)
			if !ok {
				return nil, false
			}
			t = f.Type
		}
	}
	return t, true
}

// expected walks t along key to the field the key names and says what it
// takes.
func expected(t reflect.Type, key toml.Key) want {
	t, ok := walkKey(t, key)
	if !ok {
		return want{words: "a key warren reads", fits: func(any) bool { return false }}
	}
	leaf := ""
	if len(key) > 0 {
		leaf = key[len(key)-1]
	}
	switch {
	case t == durationType:
		return want{`a duration such as "2s" or "500ms"`, func(v any) bool { _, ok := v.(string); return ok }}
	case t.Kind() == reflect.String:
		w := "a string"
		if h, ok := hints[leaf]; ok {
			w += " (" + h + ")"
		}
		return want{w, func(v any) bool { _, ok := v.(string); return ok }}
	case t.Kind() == reflect.Bool:
		return want{"true or false", func(v any) bool { _, ok := v.(bool); return ok }}
	case t.Kind() == reflect.Int:
		return want{"a whole number", func(v any) bool { _, ok := v.(int64); return ok }}
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		w := "an array of strings"
		if h, ok := hints[leaf]; ok {
			w += " (" + h + ")"
		}
		return want{w, func(v any) bool {
			items, ok := v.([]any)
			for _, item := range items {
				if _, isString := item.(string); !isString {
					return false
				}
			}
			return ok
		}}
	case t.Kind() == reflect.Slice:
		return want{"an array of tables ([[" + key.String() + "]])", func(v any) bool { _, ok := v.([]map[string]any); return ok }}
	default:
		return want{"a table ([" + key.String() + "])", func(v any) bool { _, ok := v.(map[string]any); return ok }}
	}
}

func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if strings.Split(f.Tag.Get("toml"), ",")[0] == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// lookup finds the value at key in raw that does not fit w: in an array
// of tables, the first entry whose value is wrong.
func lookup(raw any, key toml.Key, w want) (any, bool) {
	if len(key) == 0 {
		if w.fits(raw) {
			return nil, false
		}
		return raw, true
	}
	switch v := raw.(type) {
	case map[string]any:
		next, ok := v[key[0]]
		if !ok {
			return nil, false
		}
		return lookup(next, key[1:], w)
	case []map[string]any:
		for _, entry := range v {
			if found, ok := lookup(entry, key, w); ok {
				return found, true
			}
		}
	}
	return nil, false
}

// describe words a TOML value found where another was expected.
func describe(v any) string {
	switch v := v.(type) {
	case string:
		return "the string " + strconv.Quote(v)
	case int64:
		return fmt.Sprintf("the integer %d", v)
	case float64:
		return "the number " + strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		return fmt.Sprintf("%t", v)
	case time.Time:
		return "the date " + v.Format(time.RFC3339)
	case map[string]any:
		return "a table"
	case []map[string]any, []any:
		return "an array"
	}
	return fmt.Sprintf("a %T", v)
}

// unknownKey words a key warren does not read, naming the nearest one
// it does when that is a likely typo.
func unknownKey(path string, data []byte, key toml.Key) error {
	msg := "is not a key warren reads"
	if near := nearestKey(key); near != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", near)
	}
	msg += "; config.example.toml lists every key"
	return &Error{Path: path, Line: locate(data, key), Key: key.String(), Msg: msg}
}

// nearestKey is the key of key's table closest to its last part, when at
// most two edits away.
func nearestKey(key toml.Key) string {
	if len(key) == 0 {
		return ""
	}
	t, ok := walkKey(reflect.TypeOf(File{}), key[:len(key)-1])
	if !ok {
		return ""
	}
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == durationType {
		return ""
	}
	var names []string
	for i := 0; i < t.NumField(); i++ {
		if n := strings.Split(t.Field(i).Tag.Get("toml"), ",")[0]; n != "" && n != "-" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	best, bestD := "", 3
	for _, n := range names {
		if d := editDistance(key[len(key)-1], n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
