//go:build integration

package cli

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/spf13/cobra"

	"github.com/warrenops/warren/sources/broker"
	"github.com/warrenops/warren/testkit"
)

// TestEveryStreamedCommandTalksToTheBrokerWithTheBulkCollector: each
// command that reads a whole queue or file and walks it runs with the
// collector of a walk (bulkMemory) from before its first connection to
// after its last, and leaves the defaults behind it. An import without
// it collected at every doubling of a heap of a few MiB: a hundred times
// for 100 000 messages, a sixth of its CPU on a two-core machine.
func TestEveryStreamedCommandTalksToTheBrokerWithTheBulkCollector(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	s := newActScene(t, 3, "")
	file := filepath.Join(t.TempDir(), "orders.jsonl")
	for _, c := range []struct {
		name   string
		newCmd func(*App) *cobra.Command
		args   []string
	}{
		{"stats", newDlqStatsCmd, []string{"orders.dlq"}},
		{"export", newDlqExportCmd, []string{"orders.dlq", "--output", file}},
		{"import", newDlqImportCmd, []string{file, "--to", "orders.dlq", "--yes"}},
		{"replay", newDlqReplayCmd, []string{"orders.dlq", "--yes"}},
	} {
		var seen []string
		var errOut bytes.Buffer
		a := &App{ConfigPath: s.config, In: strings.NewReader(""), Out: io.Discard, Err: &errOut,
			Dial: func(vhost string) (*amqp.Connection, error) {
				seen = append(seen, collector())
				u := strings.Replace(testkit.AMQPURL, "guest:guest@", "", 1)
				return broker.Dial(broker.Options{URL: u, Username: "guest", Password: "guest", Vhost: vhost, Name: "warren memory test"})
			}}
		cmd := c.newCmd(a)
		cmd.SetArgs(c.args)
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, errOut.String())
		}
		if len(seen) == 0 {
			t.Fatalf("%s never dialled the broker", c.name)
		}
		want := fmt.Sprintf("GOGC %d, limit %d MiB", 400, bulkHeap>>20)
		for i, got := range seen {
			if got != want {
				t.Errorf("%s: connection %d of %d opened with %s, want %s", c.name, i+1, len(seen), got, want)
			}
		}
		if got, want := collector(), fmt.Sprintf("GOGC %d, limit %d MiB", 100, int64(math.MaxInt64)>>20); got != want {
			t.Errorf("after %s: %s, want the defaults back (%s)", c.name, got, want)
		}
	}
}

// collector is the garbage collector's settings as the runtime reports
// them (runtime/metrics reads them without changing them).
func collector() string {
	m := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(m)
	return fmt.Sprintf("GOGC %d, limit %d MiB", m[0].Value.Uint64(), m[1].Value.Uint64()>>20)
}
