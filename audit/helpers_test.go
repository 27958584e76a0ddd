package audit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/warrenops/warren/domain"
)

var t0 = time.Date(2024, 5, 1, 3, 15, 2, 123456000, time.UTC)

// sample is a record with awkward content in every free-text field, so
// encodings and round trips are exercised on more than plain ASCII.
func sample(i int) Record {
	return Record{
		Time:       t0.Add(time.Duration(i) * time.Minute),
		Operator:   "ana",
		Host:       "ops-1",
		Context:    "prod",
		Action:     "replay",
		Operation:  fmt.Sprintf("op-%d", i/10),
		Vhost:      "/",
		Queue:      "orders",
		Target:     "amq.default/orders",
		MessageIDs: []string{fmt.Sprintf("m-%d", i), "a,b \"q\"\n<&>"},
		LogicalIDs: []string{fmt.Sprintf("evt-%d", i), "ação ✓ \u2028"},
		Outcome:    domain.OutcomeConfirmed,
		Detail:     map[string]string{"body_sha256": BodyDigest([]byte{byte(i)}), "z": "last", "a": "first\ttab"},
	}
}

// writeChain builds an n-record file quickly, without a store's fsync per
// record, for tests that need volume rather than durability.
func writeChain(t testing.TB, path string, n int) []Record {
	t.Helper()
	var b strings.Builder
	recs := make([]Record, 0, n)
	var prev *Record
	for i := 1; i <= n; i++ {
		r := seal(sample(i), prev, time.Now())
		line, err := marshalLine(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
		recs = append(recs, r)
		prev = &recs[len(recs)-1]
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return recs
}

func scanAll(t testing.TB, s Store) []Record {
	t.Helper()
	var out []Record
	if err := s.Scan(context.Background(), func(r Record) error {
		out = append(out, r)
		return nil
	}); err != nil {
		t.Fatalf("scan %s: %v", s.Describe(), err)
	}
	return out
}

func mustVerify(t testing.TB, s Store, wantRecords int) {
	t.Helper()
	res, err := Verify(context.Background(), s)
	if err != nil {
		t.Fatalf("verify %s: %v", s.Describe(), err)
	}
	if !res.OK || res.Records != wantRecords {
		t.Fatalf("verify %s = %+v, want ok with %d records", s.Describe(), res, wantRecords)
	}
}

// sameRecords compares by content; times compare as instants.
func sameRecords(t testing.TB, got, want []Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Hash != g.ComputeHash() {
			t.Fatalf("record %d does not match its hash: %+v", i, g)
		}
		if !g.Time.Equal(w.Time) {
			t.Fatalf("record %d time %v, want %v", i, g.Time, w.Time)
		}
		g.Time, w.Time = time.Time{}, time.Time{}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("record %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}
