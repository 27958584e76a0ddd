package testkit

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var version struct {
	once sync.Once
	v    string
	err  string
}

// Version is the broker's RabbitMQ version as its management API reports
// it, read once per test binary.
func Version(t testing.TB) string {
	t.Helper()
	version.once.Do(func() {
		var o struct {
			Version string `json:"rabbitmq_version"`
		}
		req, err := http.NewRequest(http.MethodGet, MgmtURL+"/api/overview", nil)
		if err != nil {
			version.err = err.Error()
			return
		}
		req.SetBasicAuth("guest", "guest")
		resp, err := client.Do(req)
		if err != nil {
			version.err = "management API at " + MgmtURL + " unreachable (make services): " + err.Error()
			return
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(&o); err != nil || o.Version == "" {
			version.err = "overview at " + MgmtURL + " names no version (" + resp.Status + ")"
			return
		}
		version.v = o.Version
	})
	if version.err != "" {
		t.Fatal(version.err)
	}
	return version.v
}

// AtLeast reports whether the broker is RabbitMQ major.minor or later.
func AtLeast(t testing.TB, major, minor int) bool {
	t.Helper()
	parts := strings.SplitN(Version(t), ".", 3)
	maj, _ := strconv.Atoi(parts[0])
	var min int
	if len(parts) > 1 {
		min, _ = strconv.Atoi(parts[1])
	}
	return maj > major || (maj == major && min >= minor)
}

// CheckVersion fails t when WARREN_TEST_BROKER names a version and the
// broker at MgmtURL is another: a run meant for 4.3 must not pass on 3.10.
func CheckVersion(t testing.TB) {
	t.Helper()
	want := env("WARREN_TEST_BROKER", "")
	if want == "" {
		return
	}
	if got := Version(t); got != want && !strings.HasPrefix(got, want+".") {
		t.Fatalf("WARREN_TEST_BROKER=%s but the broker at %s is RabbitMQ %s", want, MgmtURL, got)
	}
}
