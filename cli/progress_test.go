package cli

import (
	"testing"
	"time"

	"github.com/warrenops/warren/ops"
)

func TestProgressLineSaysWhatItsTotalCounts(t *testing.T) {
	tests := []struct {
		name string
		p    ops.Progress
		took time.Duration
		want string
	}{
		{"a previewed run counts what settles", ops.Progress{Total: 200, Done: 50, Confirmed: 50}, 10 * time.Second,
			"replay: 50 of 200 settled (50 confirmed) · 5.0 msg/s · ETA 30s"},
		{"an unasked run counts what it reads, and what settles apart", ops.Progress{Total: 9, OfRead: true, Read: 3, Done: 1, Confirmed: 1}, 3 * time.Second,
			"replay: read 3 of 9 · 1 settled (1 confirmed) · 1.0 read/s · ETA 6s"},
		{"an unasked run that read all, one chosen by its filter", ops.Progress{Total: 9, OfRead: true, Read: 9, Done: 1, Confirmed: 1, Finished: true}, 3 * time.Second,
			"replay: read 9 of 9 · 1 settled (1 confirmed) · 3.0 read/s"},
		{"a run the broker blocks says so, its reason made safe", ops.Progress{Total: 200, Done: 50, Confirmed: 50,
			At: time.Unix(100, 0), Blocked: "low on memory\x1b[2J", BlockedSince: time.Unix(88, 0)}, 10 * time.Second,
			"replay: 50 of 200 settled (50 confirmed) · publishing blocked by the broker for 12s (low on memory\\x1b[2J): " +
				"nothing is lost, the run goes on once the alarm clears · 5.0 msg/s · ETA 30s"},
	}
	for _, tt := range tests {
		if got := progressLine("replay", tt.p, tt.took); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}
