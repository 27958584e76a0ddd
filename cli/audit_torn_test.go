package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/audit"
	"github.com/warrenops/warren/domain"
)

// tearLikeACrash leaves the audit file at path as a warren killed in the
// middle of an append leaves it: its journal beside the file names the
// record it was adding, and the first half of that record ends the file.
// It returns the half.
func tearLikeACrash(t *testing.T, path string) []byte {
	t.Helper()
	st, err := audit.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	last, _, err := st.Last(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r := audit.Record{Seq: last.Seq + 1, Time: time.Now().UTC().Truncate(time.Microsecond), Operator: "ana", Action: "replay",
		Outcome: domain.OutcomeConfirmed, MessageIDs: []string{"m-torn"}, LogicalIDs: []string{"e-torn"}, Detail: map[string]string{}, PrevHash: last.Hash}
	r.Hash = r.ComputeHash()
	line, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	line = append(line, '\n')
	var fi syscall.Stat_t
	if err := syscall.Stat(path, &fi); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(line)
	journal := fmt.Sprintf("warren audit journal v1\nfile %d %d\noffset %d\nafter %d\nreplaces 0 -\nsize %d\nsha256 %s\n\n%s",
		fi.Dev, fi.Ino, fi.Size, last.Seq, len(line), hex.EncodeToString(sum[:]), line)
	if err := os.WriteFile(path+".writing", []byte(journal), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	half := line[:len(line)/2]
	if _, err := f.Write(half); err != nil {
		t.Fatal(err)
	}
	return half
}

// A torn audit file is judged, never repaired, by the commands that read
// it: `config check`, `audit verify`, `audit export` and `audit tail`
// change no byte of it or its journal and set nothing aside. A last line
// no interrupted write of warren's explains (an edit) is damage: config
// check's audit store line names it and `audit verify`. The start of a
// record a killed warren was writing, as its journal shows, is left for
// the next append, which sets it aside. (Before, `config check` set any
// such line aside, turning an edit into a repair.)
func TestReadingCommandsLeaveATornAuditFileAsItIs(t *testing.T) {
	lastLine := func(raw []byte) int { return bytes.LastIndexByte(raw[:len(raw)-1], '\n') + 1 }
	rewrite := func(f func(raw []byte) []byte) func(*testing.T, string) {
		return func(t *testing.T, path string) {
			raw, _ := os.ReadFile(path)
			if err := os.WriteFile(path, f(raw), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name   string
		damage func(t *testing.T, path string)
		crash  bool
	}{
		{"the last record edited, its newline removed", rewrite(func(raw []byte) []byte {
			edited := bytes.Replace(raw, []byte(`"outcome":"final"`), []byte(`"outcome":"finally"`), 1)
			return edited[:len(edited)-1]
		}), false},
		{"a whole last record without its newline", rewrite(func(raw []byte) []byte { return raw[:len(raw)-1] }), false},
		{"half a last record", rewrite(func(raw []byte) []byte { return raw[:lastLine(raw)+(len(raw)-lastLine(raw))/2] }), false},
		{"half the record a killed warren was writing", func(t *testing.T, path string) { tearLikeACrash(t, path) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			logPath := filepath.Join(dir, "audit.jsonl")
			writeOperation(t, logPath, "op-1", "orders.dlq", true)
			tt.damage(t, logPath)
			damaged, _ := os.ReadFile(logPath)
			journal, _ := os.ReadFile(logPath + ".writing")
			cfg := filepath.Join(dir, "warren.toml")
			// Port 1: nothing listens there, so the broker's checks fail
			// at once; the audit store's line does not depend on them.
			text := fmt.Sprintf("current_context = \"t\"\n[contexts.t]\namqp_url = \"amqp://127.0.0.1:1/\"\nmanagement_url = \"http://127.0.0.1:1\"\nmetrics_url = \"off\"\naudit = \"file:%s\"\n", logPath)
			if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			unchanged := func(after string) {
				t.Helper()
				now, _ := os.ReadFile(logPath)
				nowJournal, _ := os.ReadFile(logPath + ".writing")
				aside, _ := filepath.Glob(logPath + ".torn-*")
				if !bytes.Equal(now, damaged) || !bytes.Equal(nowJournal, journal) || len(aside) != 0 {
					t.Fatalf("after %s the file is %d bytes (was %d), its journal changed %v, set aside %v",
						after, len(now), len(damaged), !bytes.Equal(nowJournal, journal), aside)
				}
			}

			r := execCLI(t, "--config", cfg, "config", "check")
			want := fmt.Sprintf("audit store            FAIL  audit: %s ends with %d bytes that are not a whole record, and no write of warren's left them",
				logPath, len(damaged)-bytes.LastIndexByte(damaged, '\n')-1)
			if tt.crash {
				want = "audit store            ok    file " + logPath + ", writable"
			}
			if !strings.Contains(r.out, want) || !tt.crash && !strings.Contains(r.out, "`warren audit verify` shows the damage") {
				t.Fatalf("config check:\n%s\nwant a line starting %q", r.out, want)
			}
			unchanged("config check")

			r = execCLI(t, "--config", cfg, "audit", "verify")
			crashLine := strings.Contains(r.out, "the last line is the start of a record warren was writing when it was killed")
			torn := 4 // the fourth record, or the fifth a killed warren was adding
			if tt.crash {
				torn = 5
			}
			if app.ExitCode(r.err) != app.ExitFailure || !strings.Contains(r.out, fmt.Sprintf("broken at seq %d: line %d: partial record without its newline", torn, torn)) || crashLine != tt.crash {
				t.Fatalf("audit verify: exit %d\n%s%s", app.ExitCode(r.err), r.out, r.errOut)
			}
			unchanged("audit verify")

			for _, args := range [][]string{{"audit", "export"}, {"audit", "tail"}} {
				execCLI(t, append([]string{"--config", cfg}, args...)...)
				unchanged(strings.Join(args, " "))
			}
		})
	}
}
