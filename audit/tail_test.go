package audit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// tailSeqs is what one Next of t gives, and whether it reset.
func tailSeqs(t *testing.T, tl *Tailer) (seqs []int64, reset bool) {
	t.Helper()
	err := tl.Next(context.Background(), func() { reset = true }, func(r Record) error {
		seqs = append(seqs, r.Seq)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return seqs, reset
}

// followFive appends records 1–3, then 4 and 5, to st, and checks tl is
// given each once, at the look after it was appended.
func followFive(t *testing.T, st Store, tl *Tailer) {
	t.Helper()
	ctx := context.Background()
	if _, err := st.AppendAll(ctx, []Record{sample(1), sample(2), sample(3)}); err != nil {
		t.Fatal(err)
	}
	if got, _ := tailSeqs(t, tl); fmt.Sprint(got) != "[1 2 3]" {
		t.Fatalf("first look: given %v, want [1 2 3]", got)
	}
	if got, _ := tailSeqs(t, tl); len(got) != 0 {
		t.Fatalf("nothing appended: given %v", got)
	}
	if _, err := st.AppendAll(ctx, []Record{sample(4), sample(5)}); err != nil {
		t.Fatal(err)
	}
	if got, reset := tailSeqs(t, tl); fmt.Sprint(got) != "[4 5]" || reset {
		t.Fatalf("after two appends: given %v (reset %v), want [4 5]", got, reset)
	}
}

// A follower of the log is given each record once, as it is appended; a
// line still being written waits for the next look; a log moved aside
// and begun again is given from its start, after a reset.
func TestATailerGivesWhatWasAppendedSinceItLastLooked(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tl := NewTailer(s)
	if got, reset := tailSeqs(t, tl); len(got) != 0 || reset {
		t.Fatalf("no log yet: given %v (reset %v)", got, reset)
	}
	followFive(t, s, tl)

	// Half a line, as a writer leaves it mid-append: not given, and the
	// line after it, once whole, is.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"seq":6,"ti`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got, _ := tailSeqs(t, tl); len(got) != 0 {
		t.Fatalf("with a line half written: given %v", got)
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, sample(6)); err != nil {
		t.Fatal(err)
	}
	if got, _ := tailSeqs(t, tl); fmt.Sprint(got) != "[6]" {
		t.Fatalf("the line whole: given %v, want [6]", got)
	}

	// Moved aside, then a new chain begun at the path: what was given is
	// not the new log's history, whether the tailer looks before the new
	// log is begun or only after.
	if err := os.Rename(path, path+".old"); err != nil {
		t.Fatal(err)
	}
	if got, reset := tailSeqs(t, tl); len(got) != 0 || !reset {
		t.Fatalf("the log moved aside: given %v (reset %v), want nothing after a reset", got, reset)
	}
	fresh, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.AppendAll(ctx, []Record{sample(1), sample(2)}); err != nil {
		t.Fatal(err)
	}
	if got, reset := tailSeqs(t, tl); fmt.Sprint(got) != "[1 2]" || reset {
		t.Fatalf("the new log: given %v (reset %v), want [1 2], reset once already", got, reset)
	}
	if err := os.Rename(path+".old", path); err != nil {
		t.Fatal(err)
	}
	if got, reset := tailSeqs(t, tl); fmt.Sprint(got) != "[1 2 3 4 5 6]" || !reset {
		t.Fatalf("the old log put back: given %v (reset %v), want [1 2 3 4 5 6] after a reset", got, reset)
	}
}

// wrapped is a store warren does not know by its type: a tailer reads it
// whole at each look and gives what is new.
type wrapped struct{ Store }

func TestATailerOfAnotherStoreGivesWhatIsNewToo(t *testing.T) {
	s, err := OpenFile(filepath.Join(t.TempDir(), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	w := wrapped{s}
	followFive(t, w, NewTailer(w))
}
