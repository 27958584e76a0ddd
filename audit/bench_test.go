package audit

import (
	"context"
	"path/filepath"
	"testing"
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
