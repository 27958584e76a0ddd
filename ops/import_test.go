//go:build integration

package ops

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warrenops/warren/actions"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/dlqfile"
	"github.com/warrenops/warren/testkit"
)

// exportFile writes an export of n messages and returns its path.
func exportFile(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "orders.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	enc := dlqfile.NewEncoder(f)
	if err := enc.Header(dlqfile.Header{Format: dlqfile.Format, Version: dlqfile.Version, Queue: "orders.dlq", Vhost: "/", Count: n}); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		body := []byte(fmt.Sprintf(`{"event_id":"e-%d"}`, i))
		if err := enc.Letter(domain.DeadLetter{LogicalID: fmt.Sprint("e-", i), MessageID: fmt.Sprint("m-", i), Body: body, Size: len(body)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// An import checks its file whole, then publishes it. A file written to
// between the two, even to the same bytes, or another file put at its
// path, is refused before anything is published: what is published is
// what was checked.
func TestAnImportOfAFileChangedSinceItWasCheckedPublishesNothing(t *testing.T) {
	vhost := testkit.Vhost(t, "warren-ops-import")
	ch := testkit.Channel(t, testConn(t, vhost))
	testkit.Declare(t, ch, "orders.dlq", nil)
	for _, change := range []struct {
		name string
		do   func(t *testing.T, path string)
	}{
		{"rewritten with the same bytes", func(t *testing.T, path string) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"replaced by another file", func(t *testing.T, path string) {
			other := exportFile(t, 3)
			if err := os.Rename(other, path); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(change.name, func(t *testing.T) {
			path := exportFile(t, 3)
			o := newOps(t, ordersContext())
			ctx := testCtx(t)
			p, err := o.Plan(ctx, Scope{Action: Import, Queue: domain.QueueRef{Vhost: vhost, Name: path}, File: path,
				To: &actions.Override{RoutingKey: "orders.dlq"}, Unasked: true})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			// A change time in the same tick as the check's is the same.
			time.Sleep(20 * time.Millisecond)
			change.do(t, path)
			res, err := o.Run(ctx, p, nil)
			var re *actions.RequestError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), "changed since it was checked") || !strings.Contains(err.Error(), "nothing was published") {
				t.Fatalf("run after the file was %s: %v (%+v), want it refused as changed", change.name, err, res.Counts)
			}
			if n := testkit.Depth(t, ch, "orders.dlq"); n != 0 {
				t.Fatalf("orders.dlq holds %d after a refused import, want 0", n)
			}
		})
	}
	// Unchanged, it goes. Asked, the operator types the file's name.
	path := exportFile(t, 3)
	c := ordersContext()
	c.ConfirmThreshold = 2
	o := newOps(t, c)
	ctx := testCtx(t)
	p, err := o.Plan(ctx, Scope{Action: Import, Queue: domain.QueueRef{Vhost: vhost, Name: path}, File: path,
		To: &actions.Override{RoutingKey: "orders.dlq"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if want := path + " 3"; p.Confirm.Phrase != want || !strings.Contains(p.Confirm.Warning(), "type the file name") {
		t.Fatalf("an import of 3 above a threshold of 2 asks %q (%q), want %q and the file named", p.Confirm.Phrase, p.Confirm.Warning(), want)
	}
	if res, err := o.Run(ctx, p, nil); err != nil || res.Moved != 3 {
		t.Fatalf("import of an unchanged file: moved %d, %v", res.Moved, err)
	}
	testkit.WaitDepth(t, ch, "orders.dlq", 3)
}

// An import reads its file twice: a pipe, which can be read once, is
// refused before anything is read.
func TestAnImportRefusesWhatIsNotARegularFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "export.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		// The check's open waits for a writer; this one writes nothing.
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			_ = f.Close()
		}
	}()
	_, err := checkImport(fifo, actions.Request{Action: actions.ActionImport, Vhost: "/", To: &actions.Override{RoutingKey: "orders.dlq"}})
	var re *actions.RequestError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("import of a named pipe: %v, want it refused as not a regular file", err)
	}
}
