package app

import (
	"strings"
	"testing"

	"github.com/warrenops/warren/config"
)

func TestPlaintextWarningIsForAProductionContextOnAnotherMachine(t *testing.T) {
	tests := []struct {
		name, env, amqp, mgmt string
		want                  string // "" for no warning
	}{
		{"prod over amqp and http", "prod", "amqp://ana:s3cret@rabbit.prod.example:5672/", "http://rabbit.prod.example:15672",
			"production context over plain amqp://rabbit.prod.example:5672/ and http://rabbit.prod.example:15672: the password and the messages cross the network unencrypted; use amqps:// and https:// (tls in the config)"},
		{"prod over amqp only", "prod", "amqp://10.1.2.3", "https://10.1.2.3:15671", "production context over plain amqp://10.1.2.3: "},
		{"prod over http only", "prod", "amqps://rabbit:5671", "HTTP://rabbit:15672", "production context over plain http://rabbit:15672: "},
		{"prod over TLS", "prod", "amqps://rabbit.prod.example", "https://rabbit.prod.example:15671", ""},
		{"prod on localhost", "prod", "amqp://localhost:5672", "http://LOCALHOST:15672", ""},
		{"prod on a loopback address", "prod", "amqp://127.0.0.2:5672", "http://[::1]:15672", ""},
		{"staging over amqp", "staging", "amqp://rabbit.staging.example", "http://rabbit.staging.example:15672", ""},
		{"no environment", "", "amqp://rabbit.example", "http://rabbit.example:15672", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &config.Context{Environment: tt.env, AMQPURL: tt.amqp, ManagementURL: tt.mgmt}
			got := PlaintextWarning(c)
			if (tt.want == "") != (got == "") || !strings.HasPrefix(got, tt.want) {
				t.Fatalf("plaintextWarning = %q, want %q…", got, tt.want)
			}
			if strings.Contains(got, "s3cret") {
				t.Fatalf("the warning quotes the password: %q", got)
			}
		})
	}
}
