package dlqfile

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

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
	gz.Write([]byte("not json\n \n"))
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
	if _, err := r.Next(); err == nil || !strings.Contains(err.Error(), "line 5: an empty line") {
		t.Errorf("a blank line: %v, want it named as blank", err)
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
	src, err := NewSource(bytes.NewReader(exportOf(t, n, line)), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

// exportOf is an export of n messages, the i-th line written from line(i).
func exportOf(t testing.TB, n int, line func(i int) Message) []byte {
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
	return buf.Bytes()
}

// readAll hands out every message of src, and the error that ended it.
func readAll(src *Source) ([]domain.DeadLetter, error) {
	var all []domain.DeadLetter
	for {
		letters, end, err := src.Next(context.Background(), pageLines)
		all = append(all, letters...)
		if err != nil || end {
			return all, err
		}
	}
}

// distinct is the i-th of many messages that differ in every part: a
// reading that kept a pointer into the lines it read (whose buffers are
// used again) would show another message's bytes.
func distinct(i int) (Message, amqp.Table, []byte) {
	h := everyType()
	h["i"] = int64(i)
	h["s"] = fmt.Sprint("s-", i, strings.Repeat("y", i%90))
	h["nested"] = amqp.Table{"k": fmt.Sprint("v-", i), "list": []any{fmt.Sprint("a-", i), int32(i)}}
	body := bytes.Repeat([]byte{byte(i)}, i%1500)
	enc, err := EncodeTable(h)
	if err != nil {
		panic(err)
	}
	m := Message{LogicalID: fmt.Sprint("E-", i), OriginQueue: fmt.Sprint("q-", i%7), RoutingKey: fmt.Sprint("rk-", i),
		Properties: Properties{MessageID: fmt.Sprint("m-", i)}, Headers: enc,
		Body: base64.StdEncoding.EncodeToString(body), BodySHA256: Digest(body)}
	return m, h, body
}

func TestEveryMessageComesBackWholeFromASource(t *testing.T) {
	const n = 3000
	all, err := readAll(sourceOf(t, n, func(i int) Message { m, _, _ := distinct(i); return m }))
	if err != nil || len(all) != n {
		t.Fatalf("%d messages, %v; want %d", len(all), err, n)
	}
	for i, d := range all {
		_, h, body := distinct(i)
		if d.LogicalID != fmt.Sprint("E-", i) || d.MessageID != fmt.Sprint("m-", i) || !bytes.Equal(d.Body, body) || d.Size != len(body) ||
			!reflect.DeepEqual(amqp.Table(d.Headers), h) {
			t.Fatalf("message %d came back as %s %s, %d bytes, headers %v", i, d.LogicalID, d.MessageID, len(d.Body), d.Headers)
		}
		// The digest the line gave, checked, goes with the letter: the
		// audit records and a return's match use it, not a hash of their own.
		if want := "sha256:" + Digest(body); len(body) > 0 && d.BodyDigest != want {
			t.Fatalf("message %d carries body digest %q, want %q", i, d.BodyDigest, want)
		}
	}
}

// A check writes its pages where pages it handed out before were: each
// message still comes out as its own line says, nothing left over from
// the message that was there before it (a routing key, a group, an
// origin this line has not).
func TestACheckLeavesNothingOfTheMessagesItWritesOver(t *testing.T) {
	const n = 40 * pageLines
	file := exportOf(t, n, func(i int) Message {
		m, _, _ := distinct(i)
		if (i/pageLines+i)%2 == 1 {
			m.RoutingKey, m.OriginQueue = "", ""
		}
		if i%3 == 0 {
			m.Group = fmt.Sprint("g-", i)
		}
		return m
	})
	check, err := NewCheck(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	seen, reused := 0, false
	var firsts []*domain.DeadLetter
	for end := false; !end; {
		var letters []domain.DeadLetter
		letters, end, err = check.Next(context.Background(), pageLines)
		if err != nil {
			t.Fatal(err)
		}
		if len(letters) > 0 {
			reused = reused || slices.Contains(firsts, &letters[0])
			firsts = append(firsts, &letters[0])
		}
		for _, d := range letters {
			i := seen
			seen++
			var rk []string
			origin, group := fmt.Sprint("q-", i%7), ""
			if (i/pageLines+i)%2 == 1 {
				origin = ""
			} else {
				rk = []string{fmt.Sprint("rk-", i)}
			}
			if i%3 == 0 {
				group = fmt.Sprint("g-", i)
			}
			if d.LogicalID != fmt.Sprint("E-", i) || d.OriginQueue != origin || !slices.Equal(d.RoutingKeys, rk) || d.Group != group || d.Position != i {
				t.Fatalf("message %d checked as %s, origin %q, routing keys %q, group %q, position %d", i, d.LogicalID, d.OriginQueue, d.RoutingKeys, d.Group, d.Position)
			}
		}
	}
	if seen != n {
		t.Fatalf("%d messages, want %d", seen, n)
	}
	if !reused {
		t.Error("no page was written where an earlier one was: the check made a new page for every 512 lines")
	}
}

// A check reads every line as a source does and refuses the same line,
// keeping each message's names and size but no header and no body.
func TestACheckRefusesWhatASourceRefusesAndKeepsNoBody(t *testing.T) {
	const n, bad = 3000, 2222
	good := exportOf(t, n, func(i int) Message { m, _, _ := distinct(i); return m })
	check, err := NewCheck(bytes.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	all, err := readAll(check)
	if err != nil || len(all) != n {
		t.Fatalf("%d messages, %v; want %d", len(all), err, n)
	}
	for i, d := range all {
		_, _, body := distinct(i)
		if d.LogicalID != fmt.Sprint("E-", i) || d.OriginQueue != fmt.Sprint("q-", i%7) || !slices.Equal(d.RoutingKeys, []string{fmt.Sprint("rk-", i)}) ||
			d.Size != len(body) || d.Body != nil || d.Headers != nil || d.Position != i {
			t.Fatalf("message %d checked as %+v", i, d)
		}
	}

	broken := exportOf(t, n, func(i int) Message {
		m, _, _ := distinct(i)
		if i == bad {
			m.Headers["i"] = Value{Type: "int8", Value: json.RawMessage("300")}
		}
		return m
	})
	var errs []error
	for _, open := range []func(io.Reader) (*Source, error){
		func(r io.Reader) (*Source, error) { return NewSource(r, nil) },
		NewCheck,
	} {
		src, err := open(bytes.NewReader(broken))
		if err != nil {
			t.Fatal(err)
		}
		got, err := readAll(src)
		src.Close()
		if len(got) != bad || err == nil {
			t.Fatalf("%d messages before %v; want %d and the line refused", len(got), err, bad)
		}
		errs = append(errs, err)
	}
	if want := fmt.Sprintf(`line %d: not a message line: header "i": int8 value 300: out of range for its type`, bad+2); errs[0].Error() != want || errs[1].Error() != want {
		t.Errorf("the source says %q, the check %q; want both %q", errs[0], errs[1], want)
	}
}

// BenchmarkSource reads an export of 20 000 broker dead letters (an
// x-death each, 512-byte bodies, as the bench's) whole: read, as an
// import publishes it; check, as its check reads it first. They died in
// a burst of 500 a second, so their x-death times change every 500.
func BenchmarkSource(b *testing.B) {
	const n, perSecond = 20000, 500
	at := time.Unix(1700000000, 0).UTC()
	var heads []map[string]Value
	for i := range n / perSecond {
		h, err := EncodeTable(amqp.Table{
			"x-death": []any{amqp.Table{"count": int64(1), "exchange": "", "queue": "orders", "reason": "rejected",
				"routing-keys": []any{"orders"}, "time": at.Add(time.Duration(i) * time.Second)}},
			"x-first-death-exchange": "", "x-first-death-queue": "orders", "x-first-death-reason": "rejected",
		})
		if err != nil {
			b.Fatal(err)
		}
		heads = append(heads, h)
	}
	file := exportOf(b, n, func(i int) Message {
		h := heads[i/perSecond]
		body := bytes.Repeat([]byte{'x'}, 512)
		copy(body, fmt.Sprintf(`{"event_id":"evt-%07d"`, i))
		return Message{LogicalID: fmt.Sprintf("evt-%07d", i), Group: "4f61bd6da2", Reason: "rejected", OriginQueue: "orders", RoutingKey: "orders",
			Properties: Properties{ContentType: "application/json", DeliveryMode: 2, MessageID: fmt.Sprintf("evt-%07d", i), Timestamp: &at},
			Headers:    h, Body: base64.StdEncoding.EncodeToString(body), BodySHA256: Digest(body)}
	})
	for _, check := range []bool{false, true} {
		name := "read"
		if check {
			name = "check"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(file)))
			b.ReportAllocs()
			for b.Loop() {
				src, err := newSource(bytes.NewReader(file), nil, check)
				if err != nil {
					b.Fatal(err)
				}
				got := 0
				for end := false; !end; {
					var letters []domain.DeadLetter
					letters, end, err = src.Next(context.Background(), pageLines)
					if err != nil {
						b.Fatal(err)
					}
					got += len(letters)
				}
				src.Close()
				if got != n {
					b.Fatalf("%d messages of %d", got, n)
				}
			}
		})
	}
}

// BenchmarkWriteLine measures what an export does per message: a dead
// letter as the broker delivered it (an x-death, the first-death headers,
// a 512-byte body) made into its line.
func BenchmarkWriteLine(b *testing.B) {
	at := time.Unix(1700000000, 0).UTC()
	body := bytes.Repeat([]byte{'x'}, 512)
	d := domain.DeadLetter{MessageID: "evt-0000001", LogicalID: "evt-0000001", Group: "4f61bd6da2", Reason: "rejected", OriginQueue: "orders",
		RoutingKeys: []string{"orders"}, Body: body, Size: len(body),
		Properties: domain.Properties{ContentType: "application/json", DeliveryMode: 2, MessageID: "evt-0000001", Timestamp: at},
		Headers: amqp.Table{
			"x-death": []any{amqp.Table{"count": int64(1), "exchange": "", "queue": "orders", "reason": "rejected",
				"routing-keys": []any{"orders"}, "time": at}},
			"x-first-death-exchange": "", "x-first-death-queue": "orders", "x-first-death-reason": "rejected",
		}}
	var line []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if line, err = appendLetter(line[:0], d); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(line)))
}
