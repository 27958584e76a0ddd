package testkit

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// IntegrationPackages are the packages of the module whose integration
// tests (test files with the build tag integration) a build without the
// tag leaves out, by their path in the module: what `go test ./...`
// without services does not run.
func IntegrationPackages() ([]string, error) {
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goCmd); err != nil {
		goCmd = "go"
	}
	out, err := exec.Command(goCmd, "list", "-f", "{{.ImportPath}}|{{.Dir}}|{{join .IgnoredGoFiles \",\"}}", "github.com/warrenops/warren/...").Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	var pkgs []string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), "|", 3)
		if len(parts) != 3 || parts[2] == "" {
			continue
		}
		for _, f := range strings.Split(parts[2], ",") {
			if strings.HasSuffix(f, "_test.go") && taggedIntegration(filepath.Join(parts[1], f)) {
				pkgs = append(pkgs, strings.TrimPrefix(strings.TrimPrefix(parts[0], "github.com/warrenops/warren"), "/"))
				break
			}
		}
	}
	return pkgs, sc.Err()
}

// taggedIntegration reports whether the file's build constraint names
// the integration tag.
func taggedIntegration(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "//go:build ") {
			return strings.Contains(line, "integration")
		}
		if line != "" && !strings.HasPrefix(line, "//") {
			return false
		}
	}
	return false
}

// LeftOut is the one line a run without the integration tag owes the
// operator: which packages' integration tests it did not run, and how to
// run them.
func LeftOut(pkgs []string) string {
	return fmt.Sprintf("warren: integration tests left out (they need RabbitMQ and PostgreSQL; `make test` starts them and runs every test): %s",
		strings.Join(pkgs, ", "))
}
