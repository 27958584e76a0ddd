package demo

import (
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

type renderedConfig struct {
	CurrentContext string `toml:"current_context"`
	Contexts       map[string]struct {
		AMQPURL       string `toml:"amqp_url"`
		ManagementURL string `toml:"management_url"`
		Username      string `toml:"username"`
		PasswordEnv   string `toml:"password_env"`
		Environment   string `toml:"environment"`
		Queues        []struct {
			Name           string            `toml:"name"`
			LogicalID      string            `toml:"logical_id"`
			AttemptsHeader string            `toml:"attempts_header"`
			DLQ            string            `toml:"dlq"`
			Inbox          map[string]string `toml:"inbox"`
		} `toml:"queues"`
	} `toml:"contexts"`
}

func TestConfigTOML(t *testing.T) {
	inbox := &Inbox{Table: inboxTable, IDColumn: "event_id", TimeColumn: "processed_at", DSNEnv: InboxDSNEnv}
	tests := []struct {
		name      string
		vhost     string
		inbox     *Inbox
		wantURL   string
		wantInbox bool
	}{
		{"renders the demo vhost with the inbox from the environment", DefaultVhost, inbox, "amqp://guest@127.0.0.1:5672/warren-demo", true},
		{"escapes the default vhost and leaves the inbox out when skipped", "/", nil, "amqp://guest@127.0.0.1:5672/%2F", false},
		{"quotes a vhost that needs escaping in TOML", `odd"vhost\`, nil, "amqp://guest@127.0.0.1:5672/odd%22vhost%5C", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{
				AMQPURL:       "amqp://guest:s3cret@127.0.0.1:5672/",
				ManagementURL: "http://guest:s3cret@127.0.0.1:15672",
				Username:      "guest",
				Password:      "s3cret",
				Vhost:         tt.vhost,
			}
			s := newScene(o, deadLetters(time.Now()))
			s.Inbox = tt.inbox
			text := s.ConfigTOML()
			if strings.Contains(text, "s3cret") {
				t.Fatalf("config holds the password:\n%s", text)
			}
			var cfg renderedConfig
			if _, err := toml.Decode(text, &cfg); err != nil {
				t.Fatalf("config does not parse: %v\n%s", err, text)
			}
			ctx, ok := cfg.Contexts[cfg.CurrentContext]
			if !ok {
				t.Fatalf("current_context %q has no section:\n%s", cfg.CurrentContext, text)
			}
			if ctx.AMQPURL != tt.wantURL || ctx.ManagementURL != "http://127.0.0.1:15672" || ctx.PasswordEnv != PasswordEnv {
				t.Errorf("amqp_url %q, management_url %q, password_env %q", ctx.AMQPURL, ctx.ManagementURL, ctx.PasswordEnv)
			}
			byName := map[string]int{}
			for i, q := range ctx.Queues {
				byName[q.Name] = i
			}
			orders := ctx.Queues[byName[qOrders]]
			if orders.LogicalID != "header:event_id" || orders.AttemptsHeader != "x-retry-count" || orders.DLQ != qOrdersDLQ {
				t.Errorf("orders entry = %+v", orders)
			}
			if got := ctx.Queues[byName[qPaymentsDLQ]].LogicalID; got != "json:event_id" {
				t.Errorf("payments.dlq logical_id = %q", got)
			}
			if gotInbox := orders.Inbox["dsn_env"] == InboxDSNEnv && orders.Inbox["table"] == inboxTable; gotInbox != tt.wantInbox {
				t.Errorf("orders inbox = %v, want present: %v", orders.Inbox, tt.wantInbox)
			}
		})
	}
}
