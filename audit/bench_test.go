package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkFileAppend measures one durable append (open, flock, read the
// last record from the end, write, fsync) on a file of 10 000 records.
func BenchmarkFileAppend(b *testing.B) {
	path := filepath.Join(b.TempDir(), "audit.jsonl")
	writeChain(b, path, 10_000)
	s, _ := OpenFile(path)
	ctx := context.Background()
	rec := sample(1)
	for b.Loop() {
		if _, err := s.Append(ctx, rec); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerify10k(b *testing.B) {
	path := filepath.Join(b.TempDir(), "audit.jsonl")
	writeChain(b, path, 10_000)
	s, _ := OpenFile(path)
	ctx := context.Background()
	for b.Loop() {
		res, err := Verify(ctx, s)
		if err != nil || !res.OK {
			b.Fatalf("verify: %+v %v", res, err)
		}
	}
}

// BenchmarkSealPage measures what an operation's record of a page costs
// before it is written: sealed (normalized, hashed) and encoded as its
// stored line, 512 logical IDs and body digests.
func BenchmarkSealPage(b *testing.B) {
	ids, digests := make([]string, 512), make([]string, 512)
	for i := range ids {
		ids[i] = fmt.Sprintf("evt-%07d", i)
		digests[i] = BodyDigest([]byte(ids[i]))
	}
	list, _ := json.Marshal(digests)
	rec := Record{Action: "import", Operation: "20261205T183115Z-6eff0289", Vhost: "/", Queue: "orders.dlq", Target: "queue:orders.dlq",
		MessageIDs: ids, LogicalIDs: ids, Outcome: "publishing", Detail: map[string]string{"body_sha256": string(list)}}
	prev := seal(sample(1), nil, time.Now())
	for b.Loop() {
		if _, _, err := sealLine(rec, &prev, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}
