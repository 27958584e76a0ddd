//go:build integration

package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAnInboxDSNFileIsReadAsASecret(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dsn")
	if err := os.WriteFile(path, []byte("postgres://u:p@h/db\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (&Inbox{DSNFile: path}).DSN(); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "dsn_file "+path) {
		t.Fatalf("DSN from a 0644 file: %v", err)
	}
}
