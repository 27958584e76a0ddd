package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

func TestExampleConfigParsesWithEveryKey(t *testing.T) {
	f, err := Load(filepath.Join("..", "config.example.toml"))
	if err != nil {
		t.Fatalf("config.example.toml: %v", err)
	}
	c, err := f.Context("")
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "local" || c.Refresh.Duration != 2*time.Second || c.Username != "guest" {
		t.Fatalf("unexpected local context: %+v", c)
	}
	q := c.QueueConfig("/", "orders")
	if q == nil || q.LogicalID != "header:event_id" || q.Inbox == nil || q.Inbox.Table != "inbox" {
		t.Fatalf("orders queue config not read: %+v", q)
	}
	if got := c.QueueForDLQ("/", "orders.dlq"); got != q {
		t.Fatalf("QueueForDLQ(orders.dlq) = %v, want the orders entry", got)
	}
	p, err := f.Context("prod")
	if err != nil || !p.IsProd() || p.Audit != "postgres" || len(p.FallbackAMQPURLs) != 2 || len(p.FallbackManagementURLs) != 2 {
		t.Fatalf("prod context: %+v, %v", p, err)
	}
}

// Each config error is one sentence: file:line, the key, what was
// expected and what was found.
func TestConfigErrorsAreOneSentence(t *testing.T) {
	cases := []struct {
		name     string
		text     string
		wantLine int
		wantKey  string
		want     string
	}{
		// Syntax: the parser's position, corrected to the faulty line.
		{"malformed TOML", "current_context = \"a\"\n[contexts.a\namqp_url = 1\n", 2, "",
			`warren.toml:2: not valid TOML: expected '.' or ']' to end table name, but got '\n' instead`},
		{"duplicate key", "[contexts.a]\nusername = \"a\"\nusername = \"b\"\n", 3, "",
			`warren.toml:3: not valid TOML: Key 'contexts.a.username' has already been defined.`},
		// Types: what the key takes and the value that was written.
		{"integer for a URL", "[contexts.x]\nusername = \"u\"\namqp_url = 5672\n", 3, "contexts.x.amqp_url",
			`warren.toml:3: contexts.x.amqp_url must be a string (a URL such as amqp://host:5672/), found the integer 5672`},
		{"string for a boolean", "[contexts.a]\nread_only = \"yes\"\n", 2, "contexts.a.read_only",
			`warren.toml:2: contexts.a.read_only must be true or false, found the string "yes"`},
		{"number for a duration", "[contexts.a]\nrefresh = 5\n", 2, "contexts.a.refresh",
			`warren.toml:2: contexts.a.refresh must be a duration such as "2s" or "500ms", found the integer 5`},
		{"unparsable duration", "[contexts.a]\nrefresh = \"soon\"\n", 2, "contexts.a.refresh",
			`warren.toml:2: contexts.a.refresh must be a duration such as "2s" or "500ms", found "soon"`},
		{"fraction for a count", "[contexts.a]\nconfirm_threshold = 1.5\n", 2, "contexts.a.confirm_threshold",
			`warren.toml:2: contexts.a.confirm_threshold must be a whole number, found the number 1.5`},
		{"wrong type in the second queue entry", "[contexts.a]\n[[contexts.a.queues]]\nname = \"q\"\n[[contexts.a.queues]]\nname = 7\n", 5, "contexts.a.queues.name",
			`warren.toml:5: contexts.a.queues.name must be a string, found the integer 7`},
		{"string for a table", "[contexts.a]\ntls = \"yes\"\n", 2, "contexts.a.tls",
			`warren.toml:2: contexts.a.tls must be a table ([contexts.a.tls]), found the string "yes"`},
		{"context that is not a table", "contexts.a = \"x\"\n", 1, "contexts.a",
			`warren.toml:1: contexts.a must be a table ([contexts.a]), found the string "x"`},
		{"contexts that is not a table", "contexts = 3\n", 1, "contexts",
			`warren.toml:1: contexts must be a table ([contexts]), found the integer 3`},
		{"inline table value", "[contexts.a]\n[[contexts.a.queues]]\nname = \"q\"\ninbox = { dsn_env = 1, table = \"t\", id_column = \"id\" }\n", 4, "contexts.a.queues.inbox.dsn_env",
			`warren.toml:4: contexts.a.queues.inbox.dsn_env must be a string (the name of an environment variable), found the integer 1`},
		// Unknown keys, with the likely one when it is a typo.
		{"unknown key", "[contexts.a]\namqp_url = \"amqp://h/\"\npasword_env = \"X\"\n", 3, "contexts.a.pasword_env",
			`warren.toml:3: contexts.a.pasword_env is not a key warren reads (did you mean password_env?); config.example.toml lists every key`},
		{"unknown top-level key", "colour = 1\n[contexts.a]\n", 1, "colour",
			`warren.toml:1: colour is not a key warren reads; config.example.toml lists every key`},
		// Validation.
		{"bad environment", "[contexts.a]\n\nenvironment = \"production\"\n", 3, "contexts.a.environment",
			`warren.toml:3: contexts.a.environment must be "dev", "staging" or "prod", found "production"`},
		{"refresh too fast", "[contexts.a]\nrefresh = \"100ms\"\n", 2, "contexts.a.refresh",
			`warren.toml:2: contexts.a.refresh must be at least "200ms", found "100ms"`},
		{"not an AMQP URL", "[contexts.a]\namqp_url = \"http://h:15672\"\n", 2, "contexts.a.amqp_url",
			`warren.toml:2: contexts.a.amqp_url must be an amqp:// or amqps:// URL such as amqp://127.0.0.1:5672/, found "http://h:15672"`},
		{"password in URL", "[contexts.a]\namqp_url = \"amqp://u:secret@h/\"\n", 2, "contexts.a.amqp_url",
			`warren.toml:2: contexts.a.amqp_url must not contain a password, found one: keep it in the environment variable that password_env names`},
		{"password in management URL", "[contexts.a]\nmanagement_url = \"http://u:hunter2@h:15672\"\n", 2, "contexts.a.management_url",
			`warren.toml:2: contexts.a.management_url must not contain a password, found one: keep it in the environment variable that password_env names`},
		{"a username the URL contradicts", "[contexts.a]\nusername = \"oncall\"\namqp_url = \"amqp://tenant@h/\"\n", 2, "contexts.a.username",
			`warren.toml:2: contexts.a.username names user "oncall" and amqp_url names user "tenant": name the user once (in the URL, or in username alone)`},
		{"two URLs naming two users", "[contexts.a]\namqp_url = \"amqp://tenant@h/\"\nmanagement_url = \"http://admin@h:15672\"\n", 2, "contexts.a.amqp_url",
			`warren.toml:2: contexts.a.amqp_url names user "tenant" and management_url names user "admin": name the user once (in the URL, or in username alone)`},
		{"a string for the fallbacks", "[contexts.a]\nfallback_amqp_urls = \"amqp://b/\"\n", 2, "contexts.a.fallback_amqp_urls",
			`warren.toml:2: contexts.a.fallback_amqp_urls must be an array of strings (the other nodes' URLs, such as ["amqp://rabbit-2:5672/"]), found the string "amqp://b/"`},
		{"a fallback that is not an AMQP URL", "[contexts.a]\nfallback_amqp_urls = [\"amqp://b/\", \"http://c:15672\"]\n", 2, "contexts.a.fallback_amqp_urls",
			`warren.toml:2: contexts.a.fallback_amqp_urls entry 2 must be an amqp:// or amqps:// URL such as amqp://rabbit-2:5672/, found "http://c:15672"`},
		{"a fallback naming another vhost", "[contexts.a]\namqp_url = \"amqp://a/billing\"\nfallback_amqp_urls = [\"amqp://b/orders\"]\n", 3, "contexts.a.fallback_amqp_urls",
			`warren.toml:3: contexts.a.fallback_amqp_urls entry 1 names vhost "orders" where amqp_url names "billing": a fallback is another node of the same cluster; leave its path out, or name the same vhost`},
		{"a fallback management URL with a password", "[contexts.a]\nfallback_management_urls = [\"http://u:pw@b:15672\"]\n", 2, "contexts.a.fallback_management_urls",
			`warren.toml:2: contexts.a.fallback_management_urls entry 1 must not contain a password, found one: keep it in the environment variable that password_env names`},
		{"a fallback naming another user", "[contexts.a]\nusername = \"oncall\"\nfallback_management_urls = [\"http://admin@b:15672\"]\n", 2, "contexts.a.username",
			`warren.toml:2: contexts.a.username names user "oncall" and fallback_management_urls names user "admin": name the user once (in the URL, or in username alone)`},
		{"metrics URL neither a URL nor off", "[contexts.a]\nmetrics_url = \"none\"\n", 2, "contexts.a.metrics_url",
			`warren.toml:2: contexts.a.metrics_url must be an http:// or https:// URL such as http://127.0.0.1:15692, found "none"; "off" turns the metrics endpoint off`},
		{"unknown current context", "current_context = \"b\"\n[contexts.a]\n", 1, "current_context",
			`warren.toml:1: current_context must name a context this file defines (a), found "b", which is not defined`},
		{"bad logical id", "[contexts.a]\n[[contexts.a.queues]]\nname = \"q\"\nlogical_id = \"body\"\n", 4, "contexts.a.queues.logical_id",
			`warren.toml:4: contexts.a.queues.logical_id of queue "q" must be message_id, header:NAME or json:PATH, found "body"`},
		{"bad audit", "[contexts.a]\naudit = \"s3\"\n", 2, "contexts.a.audit",
			`warren.toml:2: contexts.a.audit must be "file", "file:PATH", "postgres" or "postgres:TABLE", found "s3"`},
		// Conventions of one's own.
		{"misspelt convention field", "[contexts.a]\n[[contexts.a.conventions]]\nname = \"acme\"\nerror_mesage = \"x-err\"\n", 4, "contexts.a.conventions.error_mesage",
			`warren.toml:4: contexts.a.conventions.error_mesage is not a key warren reads (did you mean error_message?); config.example.toml lists every key`},
		{"convention without a name", "[contexts.a]\n[[contexts.a.conventions]]\nerror_message = \"x-err\"\n", 2, "contexts.a.conventions.name",
			`warren.toml:2: contexts.a.conventions.name must be set in every convention, found none in entry 1`},
		{"convention named like a built-in one", "[contexts.a]\n[[contexts.a.conventions]]\nname = \"Spring\"\nerror_message = \"x\"\n", 3, "contexts.a.conventions.name",
			`warren.toml:3: contexts.a.conventions.name "Spring" is a convention warren reads already; name yours otherwise`},
		{"convention that says nothing of a failure", "[contexts.a]\n[[contexts.a.conventions]]\nname = \"acme\"\nattempts = \"x-tries\"\n", 3, "contexts.a.conventions.name",
			`warren.toml:3: contexts.a.conventions.name convention "acme" must map error_message, error_type, origin_queue or origin_routing_key: the others alone say nothing of a failure`},
		{"convention path with an empty step", "[contexts.a]\n[[contexts.a.conventions]]\nname = \"acme\"\nerror_message = \"acme..error\"\n", 4, "contexts.a.conventions.error_message",
			`warren.toml:4: contexts.a.conventions.error_message of convention "acme" must be a header name, or names joined by dots into nested tables, found "acme..error"`},
		{"convention queue pattern that is not one", "[contexts.a]\n[[contexts.a.conventions]]\nname = \"acme\"\nerror_message = \"e\"\nqueues = [\"[orders\"]\n", 5, "contexts.a.conventions.queues",
			`warren.toml:5: contexts.a.conventions.queues of convention "acme" must be queue names or patterns such as "*_failed", found "[orders"`},
		{"no contexts", "current_context = \"\"\n", 0, "contexts",
			"warren.toml: contexts must hold at least one [contexts.NAME] table, found none (`warren config init` writes one)"},
		{"inbox table not an identifier", "[contexts.a]\n[[contexts.a.queues]]\nname = \"q\"\ninbox = { dsn_env = \"D\", table = \"x; drop\", id_column = \"id\" }\n", 4, "contexts.a.queues.inbox",
			`warren.toml:4: contexts.a.queues.inbox of queue "q" must have a table that is an SQL identifier (letters, digits, _ and an optional schema.), found "x; drop"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("warren.toml", []byte(c.text))
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("want *config.Error, got %v", err)
			}
			if ce.Path != "warren.toml" || ce.Line != c.wantLine || ce.Key != c.wantKey {
				t.Fatalf("got path=%s line=%d key=%q (%v); want line=%d key=%q", ce.Path, ce.Line, ce.Key, err, c.wantLine, c.wantKey)
			}
			if err.Error() != c.want {
				t.Fatalf("error\n got %s\nwant %s", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
		})
	}
}

func TestAPasswordInABadURLIsNotQuoted(t *testing.T) {
	_, err := Parse("warren.toml", []byte("[contexts.a]\namqp_url = \"ftp://u:hunter2@h/\"\n"))
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "must be an amqp://") {
		t.Fatalf("error %v", err)
	}
}

func TestSecretsComeFromEnvironmentOrFile(t *testing.T) {
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwFile, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("WARREN_TEST_PW", "from-env")
	f, err := Parse("c.toml", []byte("[contexts.a]\npassword_env = \"WARREN_TEST_PW\"\n[contexts.b]\npassword_file = \""+pwFile+"\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := f.Context("a")
	if pw, _ := a.Password(); pw != "from-env" {
		t.Fatalf("env password = %q", pw)
	}
	b, _ := f.Context("b")
	if pw, _ := b.Password(); pw != "from-file" {
		t.Fatalf("file password = %q", pw)
	}
}

func TestContextSelection(t *testing.T) {
	f, err := Parse("c.toml", []byte("[contexts.a]\n[contexts.b]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Context(""); err == nil || !strings.Contains(err.Error(), "a, b") {
		t.Fatalf("ambiguous context: %v", err)
	}
	if _, err := f.Context("c"); err == nil || !strings.Contains(err.Error(), "known contexts") {
		t.Fatalf("unknown context: %v", err)
	}
	if c, err := f.Context("b"); err != nil || c.Name != "b" {
		t.Fatalf("context b: %v %v", c, err)
	}
}

func FuzzParse(f *testing.F) {
	seed, _ := os.ReadFile(filepath.Join("..", "config.example.toml"))
	f.Add(string(seed))
	f.Add("[contexts.a]\nrefresh = \"1s\"\n")
	f.Add("[[contexts.a.queues]]\nname = 1\n")
	f.Add("current_context = \"\x1b[2J\"\n")
	f.Fuzz(func(t *testing.T, s string) {
		cfg, err := Parse("fuzz.toml", []byte(s))
		if err == nil {
			if len(cfg.Contexts) == 0 {
				t.Fatal("accepted a config without contexts")
			}
			for _, c := range cfg.Contexts {
				if c.Refresh.Duration < 200*time.Millisecond {
					t.Fatalf("accepted refresh %v", c.Refresh)
				}
			}
			return
		}
		var ce *Error
		if !errors.As(err, &ce) || ce.Path != "fuzz.toml" {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}

func TestKnowledgeFindsTheEntryBehindADLQ(t *testing.T) {
	f, err := Parse("c.toml", []byte(`[contexts.a]
[[contexts.a.queues]]
name = "orders"
dlq = "orders.dlq"
quarantine = "orders.parking"
logical_id = "header:event_id"
[[contexts.a.queues]]
name = "payments"
logical_id = "json:id"
`))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := f.Context("a")
	cases := []struct {
		name, queue string
		sources     []string
		wantEntry   string
		wantParking string
		wantRelease bool
	}{
		{"pinned DLQ", "orders.dlq", nil, "orders", "orders.parking", false},
		{"configured parking queue is a release", "orders.parking", nil, "orders", "orders.parking", true},
		{"DLQ paired by the broker, not pinned", "payments.dlq", []string{"payments"}, "payments", "payments.dlq.quarantine", false},
		{"default parking name is a release", "payments.dlq.quarantine", nil, "", "payments.dlq.quarantine", true},
		{"default parking queue of a pinned DLQ has the DLQ's entry", "orders.dlq.quarantine", nil, "orders", "orders.dlq.quarantine", true},
		{"default parking queue of a paired DLQ, given its sources", "payments.dlq.quarantine", []string{"payments"}, "payments", "payments.dlq.quarantine", true},
		{"nothing known", "other.dlq", []string{"other"}, "", "other.dlq.quarantine", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := c.Knowledge("/", tc.queue, tc.sources)
			got := ""
			if k.Queue != nil {
				got = k.Queue.Name
			}
			if got != tc.wantEntry || k.Parking != tc.wantParking || k.Release != tc.wantRelease {
				t.Fatalf("Knowledge(%s) = entry %q parking %q release %v; want %q %q %v", tc.queue, got, k.Parking, k.Release, tc.wantEntry, tc.wantParking, tc.wantRelease)
			}
		})
	}
}

func TestQuoteWritesTOMLThatReadsBack(t *testing.T) {
	for _, s := range []string{"plain", `with "quotes" and \ backslash`, "tab\tnew\nline\x1b[2J", "ünïcødé"} {
		var v struct{ K string }
		if _, err := toml.Decode("K = "+Quote(s), &v); err != nil || v.K != s {
			t.Errorf("Quote(%q) = %s reads back as %q, %v", s, Quote(s), v.K, err)
		}
	}
}

func TestConventionsApplyToTheirQueues(t *testing.T) {
	c := &Context{Conventions: []Convention{
		{Name: "all", ErrorMessage: "x-error"},
		{Name: "failed", Queues: []string{"*_failed", "billing.dlq"}, ErrorMessage: "x-reason", OriginQueue: "x-source"},
	}}
	names := func(q string) []string {
		var out []string
		for _, cv := range c.ConventionsFor(q) {
			out = append(out, cv.Name)
		}
		return out
	}
	if got := names("orders_failed"); strings.Join(got, ",") != "all,failed" {
		t.Errorf("orders_failed reads by %v", got)
	}
	if got := names("orders.dlq"); strings.Join(got, ",") != "all" {
		t.Errorf("orders.dlq reads by %v", got)
	}
	if f := c.Conventions[1].Fields(); len(f) != 2 || f["origin_queue"] != "x-source" {
		t.Errorf("fields %v", f)
	}
}
