// Package debug writes the --debug log: one line per message the UI
// handles, with its type and a short description. Message bodies, headers
// and anything that looks like a secret never reach the file.
package debug

import (
	"fmt"
	"io"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/warrenops/warren/text/sanitize"
)

// Logger writes the message log. A nil *Logger logs nothing, so callers
// need no check.
type Logger struct {
	mu  sync.Mutex
	w   io.Writer
	now func() time.Time
}

// New returns a logger writing to w, or nil when w is nil. now stamps the
// lines; nil means time.Now.
func New(w io.Writer, now func() time.Time) *Logger {
	if w == nil {
		return nil
	}
	if now == nil {
		now = time.Now
	}
	return &Logger{w: w, now: now}
}

// Log writes one line describing msg. Write errors are ignored: the log
// must never take the UI down.
func (l *Logger) Log(msg tea.Msg) {
	if l == nil || msg == nil {
		return
	}
	line := fmt.Sprintf("%s %T %s\n", l.now().Format("15:04:05.000"), msg, Describe(msg))
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = io.WriteString(l.w, line)
}

// maxDepth and maxString keep a line short and the walk cheap.
const (
	maxDepth  = 3
	maxString = 120
)

// secretField matches field names whose values are never written.
var secretField = regexp.MustCompile(`(?i)body|payload|password|passwd|secret|token|credential|authorization|cookie|dsn|headers|properties`)

// Describe summarises a message: scalar fields with their values, strings
// sanitised and shortened, collections by their size, secret-looking
// fields and URLs' credentials redacted.
func Describe(msg tea.Msg) string {
	switch m := msg.(type) {
	case tea.KeyMsg:
		return fmt.Sprintf("{key %q}", m.String())
	case error:
		return fmt.Sprintf("{%s}", clean(m.Error()))
	}
	return describe(reflect.ValueOf(msg), 0)
}

func describe(v reflect.Value, depth int) string {
	if !v.IsValid() {
		return "nil"
	}
	if (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && v.IsNil() {
		return "nil"
	}
	if v.CanInterface() {
		switch x := v.Interface().(type) {
		case error:
			return clean(x.Error())
		case time.Time:
			return x.Format(time.RFC3339)
		case time.Duration:
			return x.String()
		}
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return describe(v.Elem(), depth)
	case reflect.String:
		return fmt.Sprintf("%q", clean(v.String()))
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return fmt.Sprintf("[%d bytes]", v.Len())
		}
		return fmt.Sprintf("[%d items]", v.Len())
	case reflect.Map:
		return fmt.Sprintf("{%d keys}", v.Len())
	case reflect.Func, reflect.Chan:
		return v.Type().String()
	case reflect.Struct:
		if depth >= maxDepth {
			return "{…}"
		}
		return describeStruct(v, depth)
	case reflect.Bool:
		return fmt.Sprint(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return fmt.Sprint(v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprint(v.Uint())
	case reflect.Float32, reflect.Float64:
		return fmt.Sprint(v.Float())
	}
	return v.Type().String()
}

func describeStruct(v reflect.Value, depth int) string {
	t := v.Type()
	parts := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		// Unexported fields are internal state, and reflection may not
		// read them as interfaces anyway.
		if !f.IsExported() {
			continue
		}
		if secretField.MatchString(f.Name) {
			parts = append(parts, f.Name+":[redacted]")
			continue
		}
		parts = append(parts, f.Name+":"+describe(v.Field(i), depth+1))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// urlish finds URLs with credentials inside free text such as an error.
var urlish = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"']+`)

// clean sanitises s for a log line, removes credentials from URLs in it,
// and shortens it.
func clean(s string) string {
	s = urlish.ReplaceAllStringFunc(s, func(raw string) string {
		u, err := url.Parse(raw)
		if err != nil || u.User == nil {
			return raw
		}
		u.User = url.User("REDACTED")
		return u.String()
	})
	s = sanitize.Text(s)
	if len(s) > maxString {
		s = s[:maxString] + "…"
	}
	return s
}
