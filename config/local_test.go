package config

import (
	"os"
	"strings"
	"testing"
)

func TestWithoutAConfigFileTheLocalBrokerIsUsedAsGuest(t *testing.T) {
	c := Local()
	if c.AMQPURL != "amqp://localhost:5672/" || c.ManagementURL != "http://localhost:15672" || c.Username != "guest" {
		t.Fatalf("local target: %s %s %s", c.AMQPURL, c.ManagementURL, c.Username)
	}
	if !c.NoConfig() || c.Where() != "local broker" || c.Refresh.Duration != DefaultRefresh || c.ConfirmThreshold != DefaultConfirmThreshold {
		t.Fatalf("local context: %+v", c)
	}
	if c.Audit != "" || c.Name != NoConfigName {
		t.Fatalf("local context keeps the default audit file and is named %q: %+v", NoConfigName, c)
	}
}

func TestWithoutAConfigFileThePasswordIsWarrenPasswordElseGuest(t *testing.T) {
	t.Setenv(LocalPasswordEnv, "s3cret")
	if pw, _ := Local().Password(); pw != "s3cret" {
		t.Fatalf("password = %q, want WARREN_PASSWORD's", pw)
	}
	if h := Local().PasswordHint(); !strings.Contains(h, LocalPasswordEnv) {
		t.Fatalf("hint %q does not name %s", h, LocalPasswordEnv)
	}
	t.Setenv(LocalPasswordEnv, "")
	if pw, _ := Local().Password(); pw != "" {
		t.Fatalf("an empty WARREN_PASSWORD is still the password, got %q", pw)
	}
	unsetEnv(t, LocalPasswordEnv)
	if pw, _ := Local().Password(); pw != "guest" {
		t.Fatalf("password = %q, want guest", pw)
	}
	if h := Local().PasswordHint(); !strings.Contains(h, "guest") || !strings.Contains(h, "config init") {
		t.Fatalf("hint %q should say guest's password was tried and how to write a config", h)
	}
	// A context from a file never falls back to guest.
	f, err := Parse("c.toml", []byte("[contexts.a]\npassword_env = \""+LocalPasswordEnv+"\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if pw, _ := f.Contexts["a"].Password(); pw != "" {
		t.Fatalf("a configured context got password %q", pw)
	}
}

func TestAOneOffTargetOverridesTheContext(t *testing.T) {
	cases := []struct {
		name             string
		target           Target
		wantAMQP, wantMg string
		wantUser         string
		wantWhere        string
	}{
		{"nothing given", Target{}, LocalAMQPURL, LocalManagementURL, "guest", "local broker"},
		{"both URLs", Target{AMQPURL: "amqps://b:5671/v", ManagementURL: "https://b-mgmt:443"},
			"amqps://b:5671/v", "https://b-mgmt:443", "guest", "b-mgmt:443"},
		{"AMQP URL alone brings the management API to its host", Target{AMQPURL: "amqp://rabbit-b:5673/"},
			"amqp://rabbit-b:5673/", "http://rabbit-b:15672", "guest", "rabbit-b:15672"},
		{"AMQPS URL alone brings HTTPS", Target{AMQPURL: "amqps://[::1]:5671/"},
			"amqps://[::1]:5671/", "https://[::1]:15671", "guest", "[::1]:15671"},
		{"management URL alone brings AMQP to its host", Target{ManagementURL: "https://rabbit-c:15671"},
			"amqps://rabbit-c:5671/", "https://rabbit-c:15671", "guest", "rabbit-c:15671"},
		{"username", Target{Username: "oncall"}, LocalAMQPURL, LocalManagementURL, "oncall", "local broker"},
		{"the AMQP URL's user", Target{AMQPURL: "amqp://tenant@rabbit-b:5672/"},
			"amqp://tenant@rabbit-b:5672/", "http://rabbit-b:15672", "tenant", "rabbit-b:15672"},
		{"the management URL's user", Target{ManagementURL: "http://tenant@rabbit-c:15672"},
			"amqp://rabbit-c:5672/", "http://tenant@rabbit-c:15672", "tenant", "rabbit-c:15672"},
		{"the same user twice", Target{AMQPURL: "amqp://tenant@b:5672/", Username: "tenant"},
			"amqp://tenant@b:5672/", "http://b:15672", "tenant", "b:15672"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Local()
			if err := c.Apply(tc.target); err != nil {
				t.Fatal(err)
			}
			if c.AMQPURL != tc.wantAMQP || c.ManagementURL != tc.wantMg || c.Username != tc.wantUser || c.Where() != tc.wantWhere {
				t.Fatalf("got %s %s %s %q", c.AMQPURL, c.ManagementURL, c.Username, c.Where())
			}
		})
	}
	f, err := Parse("c.toml", []byte("[contexts.prod]\namqp_url = \"amqps://p:5671/\"\nmanagement_url = \"https://p:15671\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := f.Contexts["prod"]
	if err := c.Apply(Target{AMQPURL: "amqp://q:5672/"}); err != nil {
		t.Fatal(err)
	}
	if c.AMQPURL != "amqp://q:5672/" || c.ManagementURL != "http://q:15672" || c.Where() != "prod" {
		t.Fatalf("override of a configured context: %s %s %q", c.AMQPURL, c.ManagementURL, c.Where())
	}

	// A one-off target is one node: the context's fallback nodes, of
	// the cluster it named, are not tried for it.
	f, err = Parse("c.toml", []byte("[contexts.prod]\namqp_url = \"amqp://p1:5672/\"\nfallback_amqp_urls = [\"amqp://p2:5672/\"]\n"+
		"fallback_management_urls = [\"http://p2:15672\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	c = f.Contexts["prod"]
	if len(c.FallbackAMQPURLs) != 1 || len(c.FallbackManagementURLs) != 1 {
		t.Fatalf("fallbacks not read: %+v", c)
	}
	if err := c.Apply(Target{ManagementURL: "http://q:15672"}); err != nil {
		t.Fatal(err)
	}
	if c.FallbackAMQPURLs != nil || c.FallbackManagementURLs != nil {
		t.Fatalf("a one-off target kept the context's fallbacks: %v %v", c.FallbackAMQPURLs, c.FallbackManagementURLs)
	}
}

func TestABadOneOffTargetNamesTheFlag(t *testing.T) {
	cases := []struct {
		target Target
		want   string
	}{
		{Target{AMQPURL: "localhost:5672"}, `--amqp-url must be an amqp:// or amqps:// URL such as amqp://rabbit.example:5672/, found "localhost:5672"`},
		{Target{ManagementURL: "amqp://h:5672/"}, `--management-url must be an http:// or https:// URL such as http://rabbit.example:15672, found "amqp://h:5672/"`},
		{Target{AMQPURL: "amqp://u:hunter2@h/"}, "--amqp-url must not contain a password"},
		{Target{AMQPURL: "amqp://tenant@h/", Username: "oncall"},
			`--username names user "oncall" and --amqp-url names user "tenant": name the user once (in the URL, or in --username alone)`},
		{Target{AMQPURL: "amqp://tenant@h/", ManagementURL: "http://admin@h:15672"},
			`--amqp-url names user "tenant" and --management-url names user "admin": name the user once (in the URL, or in --username alone)`},
	}
	for _, tc := range cases {
		err := Local().Apply(tc.target)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Apply(%+v) = %v, want %s", tc.target, err, tc.want)
		}
	}
}

// unsetEnv unsets name for the test, restoring it afterwards.
func unsetEnv(t *testing.T, name string) {
	t.Helper()
	t.Setenv(name, "")
	if err := os.Unsetenv(name); err != nil {
		t.Fatal(err)
	}
}

// The vhost an AMQP URL names is the context's when the config sets
// none: the queues warren looks up are in the vhost it dials.
func TestTheVhostOfTheAMQPURLIsTheContextsUnlessSet(t *testing.T) {
	parse := func(body string) *Context {
		t.Helper()
		f, err := Parse("warren.toml", []byte("[contexts.a]\n"+body))
		if err != nil {
			t.Fatal(err)
		}
		c, err := f.Context("a")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, tc := range []struct{ body, want string }{
		{`amqp_url = "amqp://rabbit:5672/billing"`, "billing"},
		{`amqp_url = "amqp://rabbit:5672/team%2Fa"`, "team/a"},
		{`amqp_url = "amqp://rabbit:5672/"`, ""},
		{`amqp_url = "amqp://rabbit:5672/%2F"`, ""},
		{`amqp_url = "amqp://rabbit:5672"`, ""},
		{"amqp_url = \"amqp://rabbit:5672/billing\"\nvhost = \"orders\"", "orders"},
	} {
		if got := parse(tc.body).Vhost; got != tc.want {
			t.Errorf("%s: vhost %q, want %q", tc.body, got, tc.want)
		}
	}

	// A one-off --amqp-url brings its own vhost, unless the config set one.
	c := parse(`amqp_url = "amqp://rabbit:5672/billing"`)
	if err := c.Apply(Target{AMQPURL: "amqp://other:5672/orders"}); err != nil || c.Vhost != "orders" {
		t.Fatalf("--amqp-url .../orders over a URL's billing: vhost %q (%v), want orders", c.Vhost, err)
	}
	if err := c.Apply(Target{ManagementURL: "http://other:15672"}); err != nil || c.Vhost != "" {
		t.Fatalf("--management-url alone dials the default vhost: vhost %q (%v), want none", c.Vhost, err)
	}
	c = parse("amqp_url = \"amqp://rabbit:5672/\"\nvhost = \"orders\"")
	if err := c.Apply(Target{AMQPURL: "amqp://other:5672/billing"}); err != nil || c.Vhost != "orders" {
		t.Fatalf("the config's vhost gave way to --amqp-url's: %q (%v)", c.Vhost, err)
	}
	l := Local()
	if err := l.Apply(Target{AMQPURL: "amqp://rabbit:5672/explore"}); err != nil || l.Vhost != "explore" {
		t.Fatalf("no config, --amqp-url .../explore: vhost %q (%v)", l.Vhost, err)
	}
}

// The operator's name goes into the audit log: a control character in
// it (a newline that would forge a line of audit tail) is refused.
func TestAnOperatorNameWithAControlCharacterIsRefused(t *testing.T) {
	_, err := Parse("warren.toml", []byte("[contexts.a]\noperator = \"ana\\nroot\"\n"))
	if err == nil || !strings.Contains(err.Error(), "operator") || !strings.Contains(err.Error(), `"ana\nroot"`) {
		t.Fatalf("operator with a newline: %v", err)
	}
	if _, err := Parse("warren.toml", []byte("[contexts.a]\noperator = \"Ana Lúcia\"\n")); err != nil {
		t.Fatalf("a plain name with a space and an accent: %v", err)
	}
}

// A user named in a context's URL is its username, as any RabbitMQ
// client takes it; a username of its own that agrees is fine.
func TestAContextsURLNamesItsUser(t *testing.T) {
	for _, body := range []string{
		"[contexts.a]\namqp_url = \"amqp://tenant@h/\"\n",
		"[contexts.a]\nmanagement_url = \"https://tenant@h:15671\"\n",
		"[contexts.a]\nusername = \"tenant\"\namqp_url = \"amqp://tenant@h/\"\n",
	} {
		f, err := Parse("c.toml", []byte(body))
		if err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		if got := f.Contexts["a"].Username; got != "tenant" {
			t.Errorf("%q: username %q, want tenant", body, got)
		}
	}
	f, err := Parse("c.toml", []byte("[contexts.a]\namqp_url = \"amqp://h/\"\n"))
	if err != nil || f.Contexts["a"].Username != "guest" {
		t.Fatalf("a context naming no user: %v, %+v", err, f)
	}
}
