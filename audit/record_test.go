package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"
)

func TestCanonicalFormIsFixedOrderUTCAndUnescapedHTML(t *testing.T) {
	r := Record{
		Seq:        7,
		Time:       time.Date(2024, 5, 1, 5, 15, 2, 120000000, time.FixedZone("CEST", 2*3600)),
		Operator:   "ana",
		Action:     "replay",
		Operation:  "op-1",
		Queue:      "a<b>&c",
		MessageIDs: []string{"m1"},
		Outcome:    "confirmed",
		Detail:     map[string]string{"z": "1", "a": "2"},
		PrevHash:   "abc",
		Hash:       "ignored",
	}
	want := `{"seq":7,"time":"2024-05-01T03:15:02.12Z","operator":"ana","host":"","context":"",` +
		`"action":"replay","operation":"op-1","vhost":"","queue":"a<b>&c","target":"",` +
		`"message_ids":["m1"],"logical_ids":[],"outcome":"confirmed","detail":{"a":"2","z":"1"},"prev_hash":"abc"}`
	if got := string(r.Canonical()); got != want {
		t.Fatalf("canonical:\n got %s\nwant %s", got, want)
	}
	sum := sha256.Sum256([]byte("abc" + want))
	if got := r.ComputeHash(); got != hex.EncodeToString(sum[:]) {
		t.Fatalf("hash %s, want sha256(prev_hash ‖ canonical) %x", got, sum)
	}
}

func TestHashIgnoresRepresentationButNotMeaning(t *testing.T) {
	base := sample(1)
	base.PrevHash = "p"
	tests := []struct {
		name   string
		change func(*Record)
		same   bool
	}{
		{"same instant in another zone", func(r *Record) { r.Time = r.Time.In(time.FixedZone("X", -5*3600)) }, true},
		{"the stored hash itself", func(r *Record) { r.Hash = "anything" }, true},
		{"queue", func(r *Record) { r.Queue = "orderz" }, false},
		{"one logical id", func(r *Record) { r.LogicalIDs[0] = "evt-x" }, false},
		{"detail value", func(r *Record) { r.Detail["z"] = "other" }, false},
		{"prev_hash", func(r *Record) { r.PrevHash = "q" }, false},
		{"seq", func(r *Record) { r.Seq++ }, false},
		{"one microsecond", func(r *Record) { r.Time = r.Time.Add(time.Microsecond) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := sample(1)
			r.PrevHash = "p"
			tt.change(&r)
			if same := r.ComputeHash() == base.ComputeHash(); same != tt.same {
				t.Fatalf("hash unchanged = %v, want %v", same, tt.same)
			}
		})
	}
	empty := Record{Action: "a", Outcome: "o"}
	filled := Record{Action: "a", Outcome: "o", MessageIDs: []string{}, LogicalIDs: []string{}, Detail: map[string]string{}}
	if empty.ComputeHash() != filled.ComputeHash() {
		t.Fatal("nil and empty lists must hash the same")
	}
}

func TestSealLinksEachRecordToThePrevious(t *testing.T) {
	now := time.Date(2024, 1, 2, 3, 4, 5, 678912345, time.UTC)
	first := seal(Record{Action: "replay", Outcome: "intent"}, nil, now)
	second := seal(Record{Action: "replay", Outcome: "final", Time: t0}, &first, now)
	if first.Seq != 1 || first.PrevHash != "" || first.Hash != first.ComputeHash() {
		t.Fatalf("first = %+v", first)
	}
	if !first.Time.Equal(now.Truncate(time.Microsecond)) {
		t.Fatalf("zero time becomes now at microsecond precision, got %v", first.Time)
	}
	if second.Seq != 2 || second.PrevHash != first.Hash || !second.Time.Equal(t0) {
		t.Fatalf("second = %+v", second)
	}
}

func TestValidateRefusesRecordsThatSayNothing(t *testing.T) {
	for _, r := range []Record{{}, {Action: "replay"}, {Outcome: "final"}, {Action: " ", Outcome: "x"}} {
		if validate(r) == nil {
			t.Errorf("validate(%+v) = nil, want error", r)
		}
	}
}

func TestParseLineRejectsUnknownFieldsAndTrailingData(t *testing.T) {
	line, err := marshalLine(seal(sample(1), nil, t0))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]string{
		"unknown field": `{"seq":1,"extra":"x"}`,
		"trailing data": string(line) + ` {}`,
		"empty":         ``,
	} {
		if _, err := parseLine([]byte(b)); err == nil {
			t.Errorf("%s: parseLine accepted %q", name, b)
		}
	}
	if _, err := parseLine(line); err != nil {
		t.Fatalf("own line: %v", err)
	}
}

func TestSealLineIsTheRecordAsMarshalLineStoresIt(t *testing.T) {
	hostile := []string{"", "plain", `"quoted" \ back`, "\x00\x1b[31m\u2028\u2029", "\xff\xfe invalid", "<html>&", "é日本"}
	var prev *Record
	for i, s := range hostile {
		rec := Record{Time: t0.Add(time.Duration(i) * 1234567), Operator: s, Host: s, Context: s, Action: "replay", Operation: s,
			Vhost: s, Queue: s, Target: s, MessageIDs: []string{s, "m-" + s}, LogicalIDs: hostile[:i], Outcome: "confirmed",
			Detail: map[string]string{s: s, "body_sha256": `["sha256:ab","sha256:cd"]`, "z": s}}
		if i == 0 {
			rec.Time, rec.MessageIDs, rec.Detail = time.Time{}, nil, nil // now, and empty lists and map
		}
		want := seal(rec, prev, t0)
		wantLine, err := marshalLine(want)
		if err != nil {
			t.Fatal(err)
		}
		got, line, err := sealLine(rec, prev, t0)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if !bytes.Equal(line, wantLine) || got.Hash != want.Hash || got.Seq != want.Seq || got.PrevHash != want.PrevHash {
			t.Fatalf("%q: sealLine made\n%s\nmarshalLine makes\n%s", s, line, wantLine)
		}
		if back, err := parseLine(line); err != nil || back.ComputeHash() != got.Hash {
			t.Fatalf("%q: the line reads back as %+v, %v", s, back, err)
		}
		prev = &got
	}
	// A year JSON cannot carry is refused as marshalLine refuses it.
	far := Record{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Action: "replay", Outcome: "final"}
	if _, _, err := sealLine(far, prev, t0); err == nil {
		t.Fatal("sealLine stored a year past 9999")
	}
}

func TestBodyDigestIsPrefixedSHA256(t *testing.T) {
	if got, want := BodyDigest([]byte("abc")), "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"; got != want {
		t.Fatalf("BodyDigest = %s, want %s", got, want)
	}
}

func FuzzStoredLineKeepsItsHash(f *testing.F) {
	f.Add("orders", "m-1", "v", int64(1))
	f.Add("\x00\xff\u2028<", "\"", "\n", int64(-5))
	f.Fuzz(func(t *testing.T, queue, id, val string, nanos int64) {
		r := seal(Record{
			Time: time.Unix(0, nanos), Action: "replay", Outcome: "confirmed",
			Queue: queue, MessageIDs: []string{id}, Detail: map[string]string{val: id},
		}, nil, t0)
		line, err := marshalLine(r)
		if err != nil {
			t.Fatal(err)
		}
		sealed, once, err := sealLine(Record{
			Time: time.Unix(0, nanos), Action: "replay", Outcome: "confirmed",
			Queue: queue, MessageIDs: []string{id}, Detail: map[string]string{val: id},
		}, nil, t0)
		if err != nil || !bytes.Equal(once, line) || sealed.Hash != r.Hash {
			t.Fatalf("sealLine = %q, %v; seal and marshalLine make %q", once, err, line)
		}
		back, err := parseLine(line)
		if err != nil {
			t.Fatalf("parse %q: %v", line, err)
		}
		if back.ComputeHash() != r.Hash {
			t.Fatalf("hash changed through the stored form: %q", line)
		}
	})
}
