package config

import (
	"strings"
	"testing"
)

func TestAuditSigningKeyMustNameAPrivateKeyFile(t *testing.T) {
	tests := []struct {
		name, value, want string
	}{
		{"a private key file", "~/.config/warren/audit_ed25519", ""},
		{"the public key", "~/.ssh/id_ed25519.pub", `warren.toml:2: contexts.a.audit_signing_key must name the private key file`},
		{"spaces around the path", " /etc/warren/key", `warren.toml:2: contexts.a.audit_signing_key must be a file path without surrounding spaces`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("warren.toml", []byte("[contexts.a]\naudit_signing_key = "+Quote(tt.value)+"\n"))
			switch {
			case tt.want == "" && err != nil:
				t.Fatal(err)
			case tt.want == "":
				if c, _ := f.Context("a"); c.AuditSigningKey != tt.value {
					t.Fatalf("audit_signing_key read as %q", c.AuditSigningKey)
				}
			case err == nil || !strings.HasPrefix(err.Error(), tt.want):
				t.Fatalf("error %v, want one starting %q", err, tt.want)
			}
		})
	}
}
