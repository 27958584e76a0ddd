package format

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/warrenops/warren/text/sanitize"
)

// Kinds of body, as BodyText names them.
const (
	KindJSON  = "json"
	KindText  = "text"
	KindBytes = "bytes"
)

// Body limits: a body is never shown whole when large, and what was left
// out is always stated.
const (
	// HexLimit is how many bytes a hex dump shows.
	HexLimit = 4 << 10
	// TextLimit is how many bytes of text or indented JSON are shown.
	TextLimit = 64 << 10
	// prettyLimit: a larger JSON body is shown as the text it is, since
	// indenting it would cost more than anyone reads.
	prettyLimit = 1 << 20
)

// Body is a message body made fit for a terminal: one implementation for
// `warren dlq show` and the inspector, so both show a body the same way.
type Body struct {
	// Kind is KindJSON (indented, keys in their order), KindText or
	// KindBytes (a hex dump with an ASCII column).
	Kind string
	// Lines are what to show, sanitised; a hex dump is safe by
	// construction.
	Lines []string
	// Note says why a body is shown other than its content type suggests
	// ("content encoding gzip, shown as bytes"); empty when it is not.
	Note string
	// More says how much was left out and where to get it; empty when
	// the body is shown whole.
	More string
}

// BodyText decodes body for reading: bytes that are not valid UTF-8, that
// hold control characters other than tab and line breaks, or that carry a
// content encoding (gzip, …) become a hex dump of the first HexLimit
// bytes; valid JSON is indented; anything else is text. asBytes asks for
// the hex dump whatever the body holds.
func BodyText(body []byte, contentType, contentEncoding string, asBytes bool) Body {
	encoded := contentEncoding != "" && contentEncoding != "identity" && !strings.EqualFold(contentEncoding, "utf-8")
	if asBytes || encoded || !Printable(body) {
		b := Body{Kind: KindBytes}
		if encoded {
			b.Note = "content encoding " + sanitize.Text(contentEncoding) + ", shown as bytes"
		}
		shown := body[:min(len(body), HexLimit)]
		b.Lines = strings.Split(strings.TrimRight(hex.Dump(shown), "\n"), "\n")
		if len(shown) == 0 {
			b.Lines = []string{"(empty)"}
		}
		b.More = more(len(body)-len(shown), !utf8.Valid(body))
		return b
	}
	text := string(body)
	kind := KindText
	if looksJSON(body, contentType) {
		switch {
		case len(body) > prettyLimit:
			// Shown as the text it is.
		case json.Valid(body):
			var out bytes.Buffer
			// Indent keeps the keys in the body's own order and leaves
			// escapes in strings as they are; sanitising follows.
			if json.Indent(&out, body, "", "  ") == nil {
				text, kind = out.String(), KindJSON
			}
		case strings.Contains(contentType, "json"):
			// Not valid, so decoding it names the first fault.
			var v any
			err := json.Unmarshal(body, &v)
			return textBody(KindText, text, "not valid JSON ("+sanitize.Text(err.Error())+"), shown as text")
		}
	}
	return textBody(kind, text, "")
}

func textBody(kind, text, note string) Body {
	b := Body{Kind: kind, Note: note}
	n := len(text)
	if n > TextLimit {
		n = TextLimit
		for n > 0 && !utf8.RuneStart(text[n]) {
			n--
		}
	}
	b.More = more(len(text)-n, false)
	text = strings.TrimRight(text[:n], "\n")
	if text == "" {
		text = "(empty)"
	}
	b.Lines = strings.Split(sanitize.Block(text), "\n")
	for i, l := range b.Lines {
		b.Lines[i] = expandTabs(l)
	}
	return b
}

// tabStop is the terminal's: a tab moves to the next multiple of 8.
const tabStop = 8

// expandTabs turns a line's tabs into the spaces a terminal would show,
// so that what measures a line (wrapping, the screen's width) counts the
// columns it takes: a tab measures zero, and a line indented with tabs
// (a stack trace's "\tat …") would run past the edge.
func expandTabs(line string) string {
	if !strings.Contains(line, "\t") {
		return line
	}
	var b strings.Builder
	col := 0
	for _, g := range line {
		if g == '\t' {
			n := tabStop - col%tabStop
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		b.WriteRune(g)
		col += ansi.StringWidth(string(g))
	}
	return b.String()
}

// more is the line under a body cut short; text and JSON count the bytes
// of what is shown (indented JSON is longer than the body).
func more(left int, base64 bool) string {
	if left <= 0 {
		return ""
	}
	how := "the whole body"
	if base64 {
		how += " in base64"
	}
	return fmt.Sprintf("… %d more bytes not shown (warren dlq show --json gives %s)", left, how)
}

// Printable reports whether b reads as text: valid UTF-8 with no control
// character but tab, line feed and carriage return.
func Printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if r == '\t' || r == '\n' || r == '\r' {
			continue
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return false
		}
	}
	return true
}

func looksJSON(body []byte, contentType string) bool {
	if strings.Contains(contentType, "json") {
		return true
	}
	t := bytes.TrimSpace(body)
	return len(t) > 0 && (t[0] == '{' || t[0] == '[')
}

// TextBlock is untrusted multi-line text (a stack trace) as a body of
// text is shown: sanitised, tabs expanded, cut at TextLimit with the
// rest counted, whatever control characters it holds.
func TextBlock(s string) Body { return textBody("text", s, "") }
