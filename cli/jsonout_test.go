package cli

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestJSONOutputIsExactButNeverATerminalCommand(t *testing.T) {
	in := map[string]string{"name": "q\u009b2J\x7f\u202eevil\x1b[31m", "plain": "orders.dlq"}
	var buf bytes.Buffer
	if err := writeJSON(&buf, in); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"\u009b", "\x7f", "\u202e", "\x1b"} {
		if bytes.Contains(buf.Bytes(), []byte(bad)) {
			t.Fatalf("output carries %q raw: %s", bad, buf.String())
		}
	}
	var out map[string]string
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, buf.String())
	}
	if out["name"] != in["name"] || out["plain"] != in["plain"] {
		t.Fatalf("values changed: %q", out)
	}
}
