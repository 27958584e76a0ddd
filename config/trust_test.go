package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// trustHere leaves the test in an empty working directory, with its own
// config home and state home, and returns the user's own config path.
func trustHere(t *testing.T) (own string) {
	t.Helper()
	t.Chdir(t.TempDir())
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	return filepath.Join(cfg, "warren", "config.toml")
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestLocateSaysWhereItLookedWhenNothingExists(t *testing.T) {
	trustHere(t)
	l, err := Locate("")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "warren.toml") || len(l.Ignored) != 0 {
		t.Fatalf("Locate: %+v %v", l, err)
	}
	if _, err := Locate("missing.toml"); err == nil || !strings.Contains(err.Error(), "missing.toml") {
		t.Fatalf("Locate(explicit missing): %v", err)
	}
}

func TestTheWorkingDirectorysConfigIsReadOnlyOnceTrustedAsItIs(t *testing.T) {
	own := trustHere(t)
	write(t, own, "[contexts.mine]\n")
	write(t, "warren.toml", "[contexts.here]\nmanagement_url = \"http://here:15672\"\n")

	// Untrusted: passed over for the user's own, with the command that
	// trusts it.
	l, err := Locate("")
	if err != nil || l.Path != own || !l.Own {
		t.Fatalf("before trust Locate = %+v, %v; want the user's own config", l, err)
	}
	if len(l.Ignored) != 1 || l.Ignored[0].Changed {
		t.Fatalf("ignored %+v", l.Ignored)
	}
	notice := l.Ignored[0].String()
	for _, want := range []string{"found ./warren.toml and ignored it", "`warren config trust ./warren.toml`", "--config ./warren.toml"} {
		if !strings.Contains(notice, want) || strings.Contains(notice, "\n") {
			t.Fatalf("notice %q lacks %q or is not one line", notice, want)
		}
	}

	tr, err := Trust("warren.toml")
	if err != nil || tr.Refused != nil {
		t.Fatalf("Trust: %+v %v", tr, err)
	}
	abs, _ := filepath.Abs("warren.toml")
	data, _ := os.ReadFile("warren.toml")
	if tr.Path != abs || tr.SHA256 != Sum(data) || len(tr.SHA256) != 64 {
		t.Fatalf("trusted %+v, want %s with its sha256", tr, abs)
	}
	l, err = Locate("")
	if err != nil || l.Path != "warren.toml" || l.Own || len(l.Ignored) != 0 {
		t.Fatalf("after trust Locate = %+v, %v", l, err)
	}
	f, err := l.Load()
	if err != nil || f.Contexts["here"] == nil {
		t.Fatalf("the trusted file did not load: %v", err)
	}

	// Changed since: ignored again, saying so.
	write(t, "warren.toml", "[contexts.here]\nmanagement_url = \"http://elsewhere:15672\"\n")
	l, err = Locate("")
	if err != nil || l.Path != own || len(l.Ignored) != 1 || !l.Ignored[0].Changed {
		t.Fatalf("after a change Locate = %+v, %v", l, err)
	}
	if s := l.Ignored[0].String(); !strings.Contains(s, "changed since you trusted it") || !strings.Contains(s, "`warren config trust ./warren.toml`") {
		t.Fatalf("notice of a changed file: %q", s)
	}
	if s := l.Ignored[0].Short(); s != "./warren.toml ignored: changed since trusted" {
		t.Fatalf("header words %q", s)
	}

	// Nothing else: not found, and still said.
	if err := os.Remove(own); err != nil {
		t.Fatal(err)
	}
	l, err = Locate("")
	if !errors.Is(err, ErrNotFound) || len(l.Ignored) != 1 {
		t.Fatalf("without the user's own Locate = %+v, %v", l, err)
	}

	// Named with --config, it is the operator's own and needs no trust.
	l, err = Locate("warren.toml")
	if err != nil || !l.Own || len(l.Ignored) != 0 {
		t.Fatalf("Locate(--config warren.toml) = %+v, %v", l, err)
	}
}

func TestTheTrustRecordIsTheUsersAloneAndKeepsOneEntryPerFile(t *testing.T) {
	trustHere(t)
	write(t, "warren.toml", "[contexts.a]\n")
	if _, err := Trust("warren.toml"); err != nil {
		t.Fatal(err)
	}
	write(t, "other.toml", "[contexts.b]\n")
	if _, err := Trust("other.toml"); err != nil {
		t.Fatal(err)
	}
	write(t, "warren.toml", "[contexts.a2]\n")
	if _, err := Trust("./warren.toml"); err != nil {
		t.Fatal(err)
	}
	path, _ := TrustFile()
	if path != filepath.Join(os.Getenv("XDG_STATE_HOME"), "warren", "trusted.json") {
		t.Fatalf("trust file %s", path)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("trust file mode %v %v, want 0600", fi.Mode(), err)
	}
	var st trustStore
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &st); err != nil || len(st.Trusted) != 2 {
		t.Fatalf("trust file holds %s (%v); want two entries", b, err)
	}
	data, _ := os.ReadFile("warren.toml")
	abs, _ := filepath.Abs("warren.toml")
	for _, r := range st.Trusted {
		if r.Path == abs && r.SHA256 != Sum(data) {
			t.Fatalf("the re-trusted file keeps an old sum: %+v", r)
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Fatalf("temporary files left beside the record: %v", entries)
	}
}

func TestARelativeStateOrConfigHomeIsIgnored(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "state")
	t.Setenv("XDG_CONFIG_HOME", ".")
	if p, _ := TrustFile(); p != filepath.Join(home, ".local", "state", "warren", "trusted.json") {
		t.Fatalf("TrustFile = %s", p)
	}
	if c := Candidates(); c[len(c)-1] != filepath.Join(home, ".config", "warren", "config.toml") {
		t.Fatalf("Candidates = %v: a relative XDG_CONFIG_HOME would make a file in the working directory the user's own", c)
	}
}

func TestTrustRefusesAFileThatDoesNotLoadAndTheUsersOwn(t *testing.T) {
	own := trustHere(t)
	write(t, "warren.toml", "[contexts.a]\namqp_url = 5672\n")
	_, err := Trust("warren.toml")
	if err == nil || !strings.Contains(err.Error(), "amqp_url must be a string") || !strings.Contains(err.Error(), "nothing was trusted") {
		t.Fatalf("Trust of a file that does not load: %v", err)
	}
	if _, err := Trust("absent.toml"); err == nil || !strings.Contains(err.Error(), "absent.toml") {
		t.Fatalf("Trust of a missing file: %v", err)
	}
	write(t, own, "[contexts.a]\n")
	if _, err := Trust(own); err == nil || !strings.Contains(err.Error(), "your own config") {
		t.Fatalf("Trust of the user's own config: %v", err)
	}
	if p, _ := TrustFile(); fileExists(p) {
		t.Fatal("a refused trust was recorded")
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func TestATrustRecordOthersCanWriteIsNotBelieved(t *testing.T) {
	trustHere(t)
	write(t, "warren.toml", "[contexts.a]\n")
	if _, err := Trust("warren.toml"); err != nil {
		t.Fatal(err)
	}
	p, _ := TrustFile()
	if err := os.Chmod(p, 0o666); err != nil {
		t.Fatal(err)
	}
	l, err := Locate("")
	if !errors.Is(err, ErrNotFound) || len(l.Ignored) != 1 || l.Ignored[0].Err == nil {
		t.Fatalf("Locate with a world-writable record = %+v, %v", l, err)
	}
	if s := l.Ignored[0].String(); !strings.Contains(s, "not believed, since others may write it (mode 0666)") ||
		!strings.Contains(s, "`warren config trust ./warren.toml`") || strings.Contains(s, "\n") {
		t.Fatalf("notice %q", s)
	}
	if _, err := Trust("warren.toml"); err == nil {
		t.Fatal("trusted into a record others can write")
	}
}

func TestAConfigNotYourOwnMayNotSayWhereASecretComesFrom(t *testing.T) {
	trustHere(t)
	cases := []struct {
		name, text, key, what string
		line                  int
	}{
		{"password_env", "[contexts.x]\nmanagement_url = \"http://evil:80\"\npassword_env = \"AWS_SECRET_ACCESS_KEY\"\n",
			"contexts.x.password_env", `which environment variable's value is sent as the password, even once trusted (it names "AWS_SECRET_ACCESS_KEY")`, 3},
		{"password_file", "[contexts.x]\npassword_file = \"/home/u/.ssh/id_ed25519\"\n",
			"contexts.x.password_file", "which file's contents are sent as the password", 2},
		{"audit_dsn_env", "[contexts.x]\naudit = \"postgres\"\naudit_dsn_env = \"DATABASE_URL\"\n",
			"contexts.x.audit_dsn_env", "the audit store's DSN", 3},
		{"an inbox's dsn_env", "[contexts.x]\n[[contexts.x.queues]]\nname = \"q\"\ninbox = { dsn_env = \"PGPASSWORD\", table = \"t\", id_column = \"id\" }\n",
			"contexts.x.queues.inbox.dsn_env", "an inbox's DSN", 4},
		{"an inbox's dsn_file", "[contexts.x]\n[[contexts.x.queues]]\nname = \"q\"\ninbox = { dsn_file = \"/etc/shadow\", table = \"t\", id_column = \"id\" }\n",
			"contexts.x.queues.inbox.dsn_file", "an inbox's DSN", 4},
		{"audit_signing_key", "[contexts.x]\naudit_signing_key = \"/home/u/.ssh/id_ed25519\"\n",
			"contexts.x.audit_signing_key", "which of your private keys signs the audit log", 2},
		{"an audit file", "[contexts.x]\naudit = \"file:/home/u/.bashrc\"\n",
			"contexts.x.audit", "which file warren appends its audit records to", 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := Located{Path: "warren.toml", data: []byte(tc.text)}
			_, err := l.Load()
			var ce *Error
			if !errors.Is(err, ErrRefused) || !errors.As(err, &ce) {
				t.Fatalf("Load = %v; want a refusal", err)
			}
			if ce.Key != tc.key || ce.Line != tc.line {
				t.Fatalf("refusal at %s line %d, want %s line %d: %v", ce.Key, ce.Line, tc.key, tc.line, err)
			}
			for _, want := range []string{tc.what, "your own config (" + ownCandidate() + ")", "--config ./warren.toml"} {
				if !strings.Contains(err.Error(), want) {
					t.Fatalf("refusal %q lacks %q", err, want)
				}
			}
			l.Own = true
			if _, err := l.Load(); err != nil {
				t.Fatalf("the same file as the operator's own: %v", err)
			}
		})
	}
	l := Located{Path: "warren.toml", data: []byte("[contexts.x]\nmanagement_url = \"http://rabbit:15672\"\nusername = \"ops\"\n")}
	if _, err := l.Load(); err != nil {
		t.Fatalf("a file that names no secret's source: %v", err)
	}
}

func TestTrustRecordsAFileThatChoosesASecretAndSaysItWillBeRefused(t *testing.T) {
	trustHere(t)
	write(t, "warren.toml", "[contexts.x]\npassword_env = \"AWS_SECRET_ACCESS_KEY\"\n")
	tr, err := Trust("warren.toml")
	if err != nil || !errors.Is(tr.Refused, ErrRefused) || !strings.Contains(tr.Refused.Error(), "password_env") {
		t.Fatalf("Trust = %+v, %v", tr, err)
	}
	l, err := Locate("")
	if err != nil || l.Path != "warren.toml" {
		t.Fatalf("Locate = %+v %v", l, err)
	}
	if _, err := l.Load(); !errors.Is(err, ErrRefused) {
		t.Fatalf("a trusted file that names password_env loaded: %v", err)
	}
}
