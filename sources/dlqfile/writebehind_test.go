package dlqfile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// What goes through WriteBehind is in the file as written, and the
// kernel is asked to write back each run of a few MiB as it is
// completed, at its place in the file (after what the file held before),
// every byte once.
func TestWriteBehindAsksForEachRunWrittenOnceAtItsPlace(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "export.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	head := []byte("a header kept blank\n")
	if _, err := f.Write(head); err != nil {
		t.Fatal(err)
	}
	type run struct{ off, n int64 }
	var runs []run
	w := WriteBehind(f).(*writeBehind)
	w.start = func(got *os.File, off, n int64) {
		if got != f {
			t.Errorf("writeback asked of another file")
		}
		runs = append(runs, run{off, n})
	}
	var want bytes.Buffer
	want.Write(head)
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	for i := range 20 {
		chunk[0] = byte('A' + i)
		want.Write(chunk[:len(chunk)-i])
		if n, err := w.Write(chunk[:len(chunk)-i]); err != nil || n != len(chunk)-i {
			t.Fatalf("write %d: %d, %v", i, n, err)
		}
	}
	got, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("the file holds %d bytes, not the %d written", len(got), want.Len())
	}
	if len(runs) != 2 {
		t.Fatalf("writeback asked %d times over 20 MiB, want 2 (every %d bytes): %v", len(runs), writeBehindBytes, runs)
	}
	next := int64(len(head))
	for _, r := range runs {
		if r.off != next || r.n < writeBehindBytes {
			t.Fatalf("runs %v: want each to start where the last ended (%d), of %d bytes at least", runs, next, writeBehindBytes)
		}
		next = r.off + r.n
	}
}
