package cli

import (
	"strings"
	"testing"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/ops"
)

// What the queue holds that the file does not: ready messages exit 1, so
// `warren dlq export … && purge` stops before a purge takes them; a
// consumer's held messages, which a purge leaves, are warned of only;
// --limit asked for part of the queue, but one the queue exceeded left
// the rest out, and exits 1 for them.
func TestAnExportExitsOneWhenTheQueueHoldsMessagesTheFileDoesNot(t *testing.T) {
	for _, tt := range []struct {
		name     string
		limit    int
		res      ops.ExportResult
		warnings []string
		exitsOne bool
	}{
		{name: "everything", res: ops.ExportResult{Read: 5, Matched: 5}},
		{name: "one ready after the start", res: ops.ExportResult{Read: 5, Unread: 1}, exitsOne: true,
			warnings: []string{"1 message is in orders.dlq and not in the file: ready after the export started"}},
		{name: "many, and a consumer", res: ops.ExportResult{Read: 5, Unread: 82650, Consumers: 2}, exitsOne: true,
			warnings: []string{"82650 messages are in orders.dlq and not in the file", "orders.dlq has 2 consumers: messages a consumer holds unacknowledged are not in the file"}},
		{name: "a consumer alone", res: ops.ExportResult{Read: 5, Consumers: 1},
			warnings: []string{"orders.dlq has 1 consumer: messages a consumer holds unacknowledged are not in the file"}},
		{name: "held by a browse", res: ops.ExportResult{Held: 29}, exitsOne: true,
			warnings: []string{"29 messages are held unacknowledged by another client"}},
		{name: "held by a consumer", res: ops.ExportResult{Read: 5, Held: 1, Consumers: 1}, exitsOne: true,
			warnings: []string{"1 message is held unacknowledged by another client", "orders.dlq has 1 consumer"}},
		{name: "a limit the queue did not exceed", limit: 5, res: ops.ExportResult{Read: 5, Unread: 1, Consumers: 1, Held: 3}},
		{name: "a limit the queue exceeded", limit: 5, res: ops.ExportResult{Read: 5, Unread: 100, PastLimit: 100}, exitsOne: true,
			warnings: []string{"--limit 5 reached: 100 more in orders.dlq were not read and are not in the file"}},
		{name: "one past a limit, and held", limit: 5, res: ops.ExportResult{Read: 5, Unread: 1, PastLimit: 1, Consumers: 1, Held: 3}, exitsOne: true,
			warnings: []string{"--limit 5 reached: 1 more in orders.dlq was not read and is not in the file",
				"3 messages are held unacknowledged by another client", "orders.dlq has 1 consumer"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			warnings, err := exportLeft("orders.dlq", tt.limit, tt.res)
			if len(warnings) != len(tt.warnings) {
				t.Fatalf("warnings %q, want %d", warnings, len(tt.warnings))
			}
			for i, w := range tt.warnings {
				if !strings.HasPrefix(warnings[i], w) {
					t.Errorf("warning %d = %q, want it to start %q", i, warnings[i], w)
				}
			}
			if got := app.ExitCode(err) == app.ExitFailure; got != tt.exitsOne || (err != nil && !app.IsQuiet(err)) {
				t.Errorf("exit %d (%v), want exit 1: %v, and nothing more printed", app.ExitCode(err), err, tt.exitsOne)
			}
		})
	}
}
