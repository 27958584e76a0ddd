package debug

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

type letter struct {
	MessageID string
	Body      []byte
	Headers   map[string]any
	Password  string
}

type wrapped struct {
	Letter letter
	Err    error
	When   time.Time
	Count  int
}

func TestDescribeRedactsSecretsAndBodies(t *testing.T) {
	msg := wrapped{
		Letter: letter{MessageID: "m-1", Body: []byte("card=4111"), Headers: map[string]any{"token": "abc"}, Password: "hunter2"},
		Err:    errors.New(`GET http://guest:hunter2@127.0.0.1:15672/api/queues: refused`),
		When:   time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC),
		Count:  3,
	}
	got := Describe(msg)
	for _, leak := range []string{"4111", "hunter2", "abc", "token"} {
		if strings.Contains(got, leak) {
			t.Fatalf("description leaks %q: %s", leak, got)
		}
	}
	for _, want := range []string{`MessageID:"m-1"`, "Body:[redacted]", "Password:[redacted]", "Headers:[redacted]", "REDACTED@127.0.0.1", "Count:3", "2024-05-01T12:00:00Z"} {
		if !strings.Contains(got, want) {
			t.Fatalf("description lacks %q: %s", want, got)
		}
	}
}

func TestDescribeEscapesControlCharacters(t *testing.T) {
	got := Describe(struct{ Name string }{Name: "evil\x1b[2J"})
	if strings.ContainsRune(got, 0x1b) {
		t.Fatalf("escape reached the log: %q", got)
	}
}

func TestLogWritesOneStampedLinePerMessage(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf, func() time.Time { return time.Date(2024, 5, 1, 3, 4, 5, 0, time.UTC) })
	l.Log(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	l.Log(tea.WindowSizeMsg{Width: 120, Height: 40})
	want := "03:04:05.000 tea.KeyMsg {key \"q\"}\n" +
		"03:04:05.000 tea.WindowSizeMsg {Width:120 Height:40}\n"
	if buf.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

func TestNilLoggerLogsNothing(t *testing.T) {
	var l *Logger = New(nil, nil)
	l.Log(tea.QuitMsg{})
}
