package inbox

import "testing"

func TestUUIDKeyAcceptsWhatPostgreSQLAccepts(t *testing.T) {
	const canon = "a0eebc999c0b4ef8bb6d6bb9bd380a11"
	tests := []struct {
		in string
		ok bool
	}{
		{"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", true},
		{"A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", true},
		{"{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}", true},
		{"a0eebc999c0b4ef8bb6d6bb9bd380a11", true},
		{"a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11", true},
		{"a0eebc99--9c0b-4ef8-bb6d-6bb9bd380a11", false},
		{"-a0eebc999c0b4ef8bb6d6bb9bd380a11", false},
		{"a0eebc999c0b4ef8bb6d6bb9bd380a1", false},
		{"a0eebc999c0b4ef8bb6d6bb9bd380a11a", false},
		{"g0eebc999c0b4ef8bb6d6bb9bd380a11", false},
		{"sha256:0011223344556677", false},
		{"", false},
	}
	for _, tt := range tests {
		got, ok := uuidKey(tt.in)
		if ok != tt.ok || (ok && got != canon) {
			t.Errorf("uuidKey(%q) = %q, %v; want ok=%v", tt.in, got, ok, tt.ok)
		}
	}
}

func TestIntKeyRespectsTheColumnWidth(t *testing.T) {
	tests := []struct {
		in   string
		bits int
		want string
		ok   bool
	}{
		{"007", 64, "7", true},
		{" 42 ", 32, "42", true},
		{"-3", 16, "-3", true},
		{"40000", 16, "", false},
		{"3000000000", 32, "", false},
		{"3000000000", 64, "3000000000", true},
		{"1e3", 64, "", false},
		{"E-1", 64, "", false},
	}
	for _, tt := range tests {
		got, ok := intKey(tt.in, tt.bits)
		if got != tt.want || ok != tt.ok {
			t.Errorf("intKey(%q, %d) = %q, %v; want %q, %v", tt.in, tt.bits, got, ok, tt.want, tt.ok)
		}
	}
}
