package cli

import (
	"context"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/warrenops/warren/audit"
)

// A queue named by whoever declares queues reaches the export: neither
// format may carry its escape sequence or its right-to-left override as
// they are, nor a CSV cell start like a formula; each still verifies.
func TestAuditExportOfAHostileQueueNameIsSafeAndVerifies(t *testing.T) {
	const queue = "=1+2\x1b[2J\u202eqld.sredro"
	a, out, _, path := auditApp(t)
	writeOperation(t, path, "op-1", queue, true)
	for _, tc := range []struct{ format, want string }{
		{audit.FormatCSV, `'=1+2\x1b[2J\u202eqld.sredro`},
		{audit.FormatJSONL, `"queue":"=1+2\u001b[2J\u202eqld.sredro"`},
	} {
		t.Run(tc.format, func(t *testing.T) {
			out.Reset()
			if err := runAudit(context.Background(), a, "export", "--format", tc.format); err != nil {
				t.Fatal(err)
			}
			text := out.String()
			if strings.ContainsAny(text, "\x1b\u202e") {
				t.Fatalf("the export carries ESC or U+202E as it is:\n%q", text)
			}
			if !strings.Contains(text, tc.want) {
				t.Errorf("the export lacks %s:\n%s", tc.want, text)
			}
			res, err := audit.VerifyExport(strings.NewReader(text), tc.format)
			if err != nil || !res.OK || res.Records != 4 {
				t.Fatalf("VerifyExport = %+v, %v; want ok with 4 records", res, err)
			}
			var queues []string
			if err := audit.ReadExport(strings.NewReader(text), tc.format, func(r audit.Record) error {
				queues = append(queues, r.Queue)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if len(queues) != 4 || queues[0] != queue {
				t.Errorf("read back queues %q, want %q four times", queues, queue)
			}
		})
	}
	t.Run("no CSV cell starts like a formula", func(t *testing.T) {
		out.Reset()
		if err := runAudit(context.Background(), a, "export", "--format", "csv"); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(strings.NewReader(out.String())).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			for _, c := range row {
				if c != "" && strings.ContainsRune("=+-@\t\r", rune(c[0])) {
					t.Errorf("cell %q starts like a formula", c)
				}
			}
		}
	})
}
