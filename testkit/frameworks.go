package testkit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The frameworks that write error queues themselves, run for real by the
// integration tests: rascal (Node, testdata/frameworks/rascal, the
// versions pinned in its package.json) and Watermill (Go,
// testdata/frameworks/watermill, a module of its own). A missing node,
// npm or go fails the test, naming what to install; it never skips.

// modulePath is the module whose root holds testdata/frameworks.
const modulePath = "github.com/warrenops/warren"

// FrameworksDir is testdata/frameworks at the module's root, found from
// the test's working directory upwards.
func FrameworksDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if isModuleRoot(dir) {
			return filepath.Join(dir, "testdata", "frameworks")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no module %s above the test's directory: testdata/frameworks cannot be found", modulePath)
		}
		dir = parent
	}
}

func isModuleRoot(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if line := strings.TrimSpace(s.Text()); strings.HasPrefix(line, "module ") {
			return strings.TrimSpace(strings.TrimPrefix(line, "module ")) == modulePath
		}
	}
	return false
}

// rascal's node_modules are installed once per test binary, in its
// directory (kept, ignored by git).
var rascalTool struct {
	once sync.Once
	dir  string
	err  error
}

// RascalDir is testdata/frameworks/rascal with its dependencies
// installed: `npm ci` when node_modules is missing. A missing node or
// npm fails the test, naming what to install.
func RascalDir(t testing.TB) string {
	t.Helper()
	rascalTool.once.Do(func() {
		rascalTool.dir = filepath.Join(FrameworksDir(t), "rascal")
		rascalTool.err = installRascal(rascalTool.dir)
	})
	if rascalTool.err != nil {
		t.Fatal(rascalTool.err)
	}
	return rascalTool.dir
}

// installRascal runs `npm ci` in a directory of its own beside dir and
// moves the result into place, so that two test binaries (one per
// broker) preparing it at once never see half an install.
func installRascal(dir string) error {
	if _, err := exec.LookPath("node"); err != nil {
		return fmt.Errorf("node is not installed: the rascal tests run rascal on Node.js (install nodejs and npm): %v", err)
	}
	if rascalInstalled(dir) {
		return nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("npm is not installed: the rascal tests install rascal from %s with npm ci (install npm): %v",
			filepath.Join(dir, "package-lock.json"), err)
	}
	tmp, err := os.MkdirTemp(dir, ".npm-ci-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(tmp, f), b, 0o644); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm ci for rascal in %s: %v\n%s", dir, err, out)
	}
	if err := os.Rename(filepath.Join(tmp, "node_modules"), filepath.Join(dir, "node_modules")); err != nil && !rascalInstalled(dir) {
		return fmt.Errorf("install rascal's node_modules: %v", err)
	}
	return nil
}

func rascalInstalled(dir string) bool {
	for _, p := range []string{"rascal", "amqplib"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", p, "package.json")); err != nil {
			return false
		}
	}
	return true
}

// WatermillBin builds testdata/frameworks/watermill, a module of its own,
// into a directory of t's (the build cache makes a second build a link).
func WatermillBin(t testing.TB) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go is not on PATH: the Watermill test builds its program with it: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "watermill")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "build", "-buildvcs=false", "-o", bin, ".")
	cmd.Dir = filepath.Join(FrameworksDir(t), "watermill")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build in %s: %v\n%s", cmd.Dir, err, out)
	}
	return bin
}

// FrameworkRun is what a framework program printed when done: the library
// versions it ran and, per message, how many times its handler ran (or,
// for rascal's receive mode, how many times the message arrived). Lines
// are the lines it printed before that summary.
type FrameworkRun struct {
	Rascal    string         `json:"rascal"`
	Amqplib   string         `json:"amqplib"`
	Watermill string         `json:"watermill"`
	AMQP      string         `json:"watermill-amqp"`
	Runs      map[string]int `json:"runs"`
	Lines     []string       `json:"-"`
}

// RunFramework runs a framework program for at most 30 s and reads its
// summary, its last line of output; it fails t with everything the
// program wrote when it does not finish.
func RunFramework(t testing.TB, dir, name string, args ...string) FrameworkRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v after %s\nstdout:\n%s\nstderr:\n%s", filepath.Base(name), strings.Join(args, " "), err,
			time.Since(start).Round(time.Millisecond), stdout.Bytes(), stderr.Bytes())
	}
	var r FrameworkRun
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil || len(r.Runs) == 0 {
		t.Fatalf("%s printed no summary (%v):\n%s\nstderr:\n%s", filepath.Base(name), err, stdout.Bytes(), stderr.Bytes())
	}
	r.Lines = lines[:len(lines)-1]
	return r
}

// pinnedNPM is the version package.json pins for an npm package.
func pinnedNPM(t testing.TB, dir, pkg string) string {
	t.Helper()
	var p struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err == nil {
		err = json.Unmarshal(b, &p)
	}
	if err != nil || p.Dependencies[pkg] == "" {
		t.Fatalf("package.json pins no %s: %v", pkg, err)
	}
	return p.Dependencies[pkg]
}

// RunRascal runs testdata/frameworks/rascal/fail.js in mode against vhost
// of the broker under test (its usage says what each mode does) with n
// messages, and checks that it ran the versions package.json pins.
func RunRascal(t testing.TB, vhost, mode string, n int) FrameworkRun {
	t.Helper()
	dir := RascalDir(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed: the rascal tests run rascal on Node.js (install nodejs and npm): %v", err)
	}
	r := RunFramework(t, dir, node, "fail.js", AMQPURL, vhost, mode, strconv.Itoa(n))
	if want := pinnedNPM(t, dir, "rascal"); r.Rascal != want {
		t.Fatalf("node_modules holds rascal %s, package.json pins %s: remove %s and run again",
			r.Rascal, want, filepath.Join(dir, "node_modules"))
	}
	if want := pinnedNPM(t, dir, "amqplib"); r.Amqplib != want {
		t.Fatalf("node_modules holds amqplib %s, package.json pins %s: remove %s and run again",
			r.Amqplib, want, filepath.Join(dir, "node_modules"))
	}
	t.Logf("rascal %s on amqplib %s, mode %s: per message %v", r.Rascal, r.Amqplib, mode, r.Runs)
	return r
}

// RunWatermill builds and runs testdata/frameworks/watermill against
// vhost of the broker under test with n messages: payments and
// payments_error must exist.
func RunWatermill(t testing.TB, vhost string, n int) FrameworkRun {
	t.Helper()
	bin := WatermillBin(t)
	r := RunFramework(t, filepath.Dir(bin), bin, "-url", AMQPURL, "-vhost", vhost, "-n", strconv.Itoa(n))
	t.Logf("watermill %s with watermill-amqp %s: handler runs %v", r.Watermill, r.AMQP, r.Runs)
	return r
}
