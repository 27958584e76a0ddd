package dlqfile

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/warrenops/warren/domain"
)

func TestAReaderRefusesWhatIsNotAnExportAndNamesTheLine(t *testing.T) {
	for _, text := range []string{"", "{}\n", `{"format":"other"}` + "\n", `{"format":"warren-dlq-export","version":9}` + "\n"} {
		if _, err := NewReader(strings.NewReader(text)); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%q: %v, want a refusal naming line 1", text, err)
		}
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	e := NewEncoder(gz)
	if err := e.Header(Header{Queue: "q", Count: 2}); err != nil {
		t.Fatal(err)
	}
	m := Message{LogicalID: "E-1", Body: "Ym9keQ==", BodySHA256: Digest([]byte("body"))}
	if err := e.Message(m); err != nil {
		t.Fatal(err)
	}
	m.BodySHA256 = Digest([]byte("other"))
	if err := e.Message(m); err != nil {
		t.Fatal(err)
	}
	gz.Write([]byte("not json\n"))
	gz.Close()
	r, err := NewReader(&buf)
	if err != nil {
		t.Fatalf("a gzipped export: %v", err)
	}
	first, err := r.Next()
	if err != nil || string(first.Publishing.Body) != "body" || first.LogicalID != "E-1" {
		t.Errorf("line 2: %v %+v", err, first)
	}
	if _, err := r.Next(); err == nil || !strings.Contains(err.Error(), "line 3: body sha256") || !strings.Contains(err.Error(), "changed") {
		t.Errorf("a body whose sha256 does not match: %v, want it named with its line", err)
	}
	if _, err := r.Next(); err == nil || !strings.Contains(err.Error(), "line 4") {
		t.Errorf("a line that does not parse: %v, want it named", err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("after the last line: %v", err)
	}
}

// Large bodies are decoded and handed out a few at a time: a page holds
// the messages of about pageBytes of lines, not pageLines of them.
func TestASourceHoldsLargeMessagesAFewAtATime(t *testing.T) {
	const n, size = 24, 1 << 20
	body := bytes.Repeat([]byte{0xfe}, size)
	src := sourceOf(t, n, func(i int) Message {
		return Message{LogicalID: fmt.Sprint("E-", i), Body: base64.StdEncoding.EncodeToString(body), BodySHA256: Digest(body)}
	})
	var err error
	got := 0
	for end := false; !end; {
		var letters []domain.DeadLetter
		letters, end, err = src.Next(context.Background(), pageLines)
		if err != nil {
			t.Fatal(err)
		}
		if held := len(letters) * size; held > pageBytes {
			t.Fatalf("a page of %d MiB of bodies; want at most %d MiB", held>>20, pageBytes>>20)
		}
		for _, d := range letters {
			if d.LogicalID != fmt.Sprint("E-", got) || d.Position != got || !bytes.Equal(d.Body, body) {
				t.Fatalf("message %d read as %s at %d", got, d.LogicalID, d.Position)
			}
			got++
		}
	}
	if got != n {
		t.Errorf("%d messages handed out of %d", got, n)
	}
}

// A line that is refused ends the file at that line, after every line
// before it, however the lines were shared out to be decoded.
func TestASourceStopsAtTheFirstLineRefused(t *testing.T) {
	const n, bad = 5000, 3333
	src := sourceOf(t, n, func(i int) Message {
		m := Message{LogicalID: fmt.Sprint("E-", i), Body: "Ym9keQ==", BodySHA256: Digest([]byte("body"))}
		if i == bad || i == bad+700 {
			m.BodySHA256 = Digest([]byte("other"))
		}
		return m
	})
	got := 0
	for {
		letters, end, err := src.Next(context.Background(), 100)
		got += len(letters)
		if err != nil {
			if want := fmt.Sprintf("line %d: body sha256", bad+2); !strings.Contains(err.Error(), want) || got != bad {
				t.Fatalf("%v after %d messages; want %q after %d", err, got, want, bad)
			}
			return
		}
		if end {
			t.Fatalf("the file ended after %d messages with no error", got)
		}
	}
}

// sourceOf is a Source over an export of n messages, the i-th line
// written from line(i); it closes with the test.
func sourceOf(t *testing.T, n int, line func(i int) Message) *Source {
	t.Helper()
	var buf bytes.Buffer
	e := NewEncoder(&buf)
	if err := e.Header(Header{Queue: "q", Count: n}); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := e.Message(line(i)); err != nil {
			t.Fatal(err)
		}
	}
	src, err := NewSource(&buf, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}
