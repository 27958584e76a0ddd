//go:build integration

package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/testkit"
)

// editor writes a shell script for $EDITOR; it gets the file as $1.
func editor(t *testing.T, script string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "editor.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("EDITOR", path)
}

func TestDlqEditYesResubmitsTheEditedMessage(t *testing.T) {
	s := newDlqScene(t, "postgres://postgres@127.0.0.1:5432/test")
	editor(t, `sed -i 's/"id": "E-2"/"id": "E-2", "amount": 12.5/' "$1"`)
	out, errOut, err := runDlq(t, s.config, "edit", "orders.dlq", "--id", "E-2", "--yes")
	if err != nil {
		t.Fatalf("dlq edit: %v\n%s", err, errOut)
	}
	for _, want := range []string{"--- body (original)", `+  "amount": 12.5`, "edit ", "1 confirmed"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	testkit.WaitDepth(t, s.ch, "orders", 1)
	m, ok, err := s.ch.Get("orders", true)
	if err != nil || !ok {
		t.Fatalf("get from orders: %v %v", ok, err)
	}
	sum := sha256.Sum256([]byte(`{"id":"E-2"}`))
	if string(m.Body) != `{"id":"E-2","amount":12.5}` || m.Headers["event_id"] != "E-2" || m.Headers["x-warren-edited-from"] != hex.EncodeToString(sum[:]) {
		t.Errorf("copy %s with headers %v: want the edited body, logical ID E-2 and the original's sha256", m.Body, m.Headers)
	}
	testkit.WaitDepth(t, s.ch, "orders.dlq", 3)
	if ids := lsIDs(t, s); strings.Contains(strings.Join(ids, " "), "E-2") {
		t.Errorf("orders.dlq still holds E-2: %v", ids)
	}

	var vout, verr strings.Builder
	a := &App{ConfigPath: s.config, In: strings.NewReader(""), Out: &vout, Err: &verr}
	cmd := newAuditCmd(a)
	cmd.SetArgs([]string{"verify"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.Execute(); err != nil || !strings.Contains(vout.String(), "ok") {
		t.Errorf("audit verify = %v: %s%s", err, vout.String(), verr.String())
	}
}

func TestDlqEditThatCannotGoPublishesNothing(t *testing.T) {
	s := newDlqScene(t, "postgres://postgres@127.0.0.1:5432/test")
	for _, tc := range []struct{ name, script, want string }{
		{"editor exits 1", `sed -i 's/E-2/E-9/' "$1"; exit 1`, "the editor failed (exit status 1)"},
		{"unchanged", `true`, "the edit changed nothing"},
		{"broken JSON", `sed -i 's/"event_id": "E-2"/"event_id": E-2/' "$1"`, "not valid JSON"},
		{"no such message", `true`, "no message with logical ID E-404"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			editor(t, tc.script)
			id := "E-2"
			if strings.Contains(tc.want, "E-404") {
				id = "E-404"
			}
			_, _, err := runDlq(t, s.config, "edit", "orders.dlq", "--id", id, "--yes")
			if app.ExitCode(err) != app.ExitFailure || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "nothing was published") {
				t.Fatalf("exit %d (%v), want 1 with %q", app.ExitCode(err), err, tc.want)
			}
			testkit.WaitDepth(t, s.ch, "orders.dlq", 4)
			if n := testkit.Depth(t, s.ch, "orders"); n != 0 {
				t.Errorf("orders holds %d, want nothing published", n)
			}
		})
	}
}
