package testkit

import (
	"os"
	"slices"
	"testing"
)

// TestMain says, in one line on the terminal that runs `go test ./...`
// without the integration tag, which packages' integration tests did not
// run: go test shows a passing package's output to no one, so the line
// goes to the terminal itself. Without a terminal (CI, where `make test`
// runs everything) there is no one to tell.
func TestMain(m *testing.M) {
	code := m.Run()
	if !Integration && code == 0 {
		if pkgs, err := IntegrationPackages(); err == nil && len(pkgs) > 0 {
			if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
				_, _ = tty.WriteString(LeftOut(pkgs) + "\n")
				_ = tty.Close()
			}
		}
	}
	os.Exit(code)
}

// The packages whose tests talk to the brokers are found from their
// files' build tags, so the line names each of them and nothing else.
func TestIntegrationPackagesAreFoundByTheirTag(t *testing.T) {
	pkgs, err := IntegrationPackages()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ops", "cli", "actions", "sources/dlq", "sources/mgmt"} {
		if !slices.Contains(pkgs, want) {
			t.Errorf("%s has integration tests but is not listed: %v", want, pkgs)
		}
	}
	for _, not := range []string{"ui", "domain", "text/format", "cli/faults", "testkit"} {
		if slices.Contains(pkgs, not) {
			t.Errorf("%s is listed, but its tests need no service: %v", not, pkgs)
		}
	}
}
