package demo

import (
	"strings"
	"testing"
	"time"

	"github.com/warrenops/warren/config"
)

func TestConfigTOML(t *testing.T) {
	inbox := &Inbox{Table: inboxTable, IDColumn: "event_id", TimeColumn: "processed_at", DSNEnv: InboxDSNEnv}
	tests := []struct {
		name      string
		vhost     string
		inbox     *Inbox
		wantURL   string
		wantInbox bool
	}{
		{"renders the demo vhost with the inbox from the environment", DefaultVhost, inbox, "amqp://127.0.0.1:5672/warren-demo", true},
		{"escapes the default vhost and leaves the inbox out when skipped", "/", nil, "amqp://127.0.0.1:5672/%2F", false},
		{"quotes a vhost that needs escaping in TOML", `odd"vhost\`, nil, "amqp://127.0.0.1:5672/odd%22vhost%5C", false},
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
			f, err := config.Parse("demo.toml", []byte(text))
			if err != nil {
				t.Fatalf("warren's config loader refuses it: %v\n%s", err, text)
			}
			c, err := f.Context("")
			if err != nil {
				t.Fatal(err)
			}
			if c.AMQPURL != tt.wantURL || c.ManagementURL != "http://127.0.0.1:15672" || c.PasswordEnv != PasswordEnv || c.Vhost != tt.vhost {
				t.Errorf("amqp_url %q, management_url %q, password_env %q, vhost %q", c.AMQPURL, c.ManagementURL, c.PasswordEnv, c.Vhost)
			}
			orders := c.QueueConfig(tt.vhost, qOrders)
			if orders == nil || orders.LogicalID != ordersID || orders.AttemptsHeader != retryHeader || orders.DLQ != qOrdersDLQ {
				t.Fatalf("orders entry = %+v", orders)
			}
			if c.QueueConfig("elsewhere", qOrders) != nil {
				t.Error("orders entry applies outside the scene's vhost")
			}
			if got := c.QueueForDLQ(tt.vhost, qOrdersDLQ); got == nil || got.Name != qOrders {
				t.Errorf("QueueForDLQ(orders.dlq) = %+v, want the orders entry", got)
			}
			if q := c.QueueConfig(tt.vhost, qPaymentsDLQ); q == nil || q.LogicalID != paymentsID {
				t.Errorf("payments.dlq entry = %+v", q)
			}
			gotInbox := orders.Inbox != nil && orders.Inbox.DSNEnv == InboxDSNEnv && orders.Inbox.Table == inboxTable
			if gotInbox != tt.wantInbox {
				t.Errorf("orders inbox = %+v, want present: %v", orders.Inbox, tt.wantInbox)
			}
		})
	}
}
