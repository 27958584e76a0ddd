package cli

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/domain"
)

func ptr[T any](v T) *T { return &v }

// unitChannels is a gateway waiting for 37 confirms on a connection a
// resource alarm blocks, an importer with 4 pending, a consumer's
// channel, and a closing channel the broker gave no figures for.
func unitChannels() *domain.ChannelList {
	return &domain.ChannelList{Channels: []domain.ChannelStat{
		{Name: "10.0.0.7:40100 -> 10.0.0.1:5672 (1)", Connection: "order-gateway", User: "svc-gateway", Vhost: "shop", Number: 1,
			Confirm: ptr(true), Unconfirmed: ptr(int64(37)), Unacked: ptr(int64(0)), Prefetch: ptr(int64(0)),
			GlobalPrefetch: ptr(int64(0)), Consumers: ptr(int64(0)), PublishRate: ptr(12.345), ConfirmRate: ptr(11.0),
			ConnectionState: "blocked"},
		{Name: "10.0.0.8:40200 -> 10.0.0.1:5672 (3)", Connection: "importer\x1b[2J", User: "svc-import", Vhost: "shop", Number: 3,
			Confirm: ptr(true), Unconfirmed: ptr(int64(4))},
		{Name: "10.0.0.5:40001 -> 10.0.0.1:5672 (1)", Connection: "billing-worker", User: "svc-billing", Vhost: "shop", Number: 1,
			Confirm: ptr(false), Unconfirmed: ptr(int64(0)), Unacked: ptr(int64(20)), Prefetch: ptr(int64(20)),
			GlobalPrefetch: ptr(int64(50)), Consumers: ptr(int64(1)), AckRate: ptr(4.2), ConnectionState: "running"},
		{Name: "10.0.0.9:40300 -> 10.0.0.1:5672 (2)", Vhost: "shop", Number: 2},
	}}
}

func TestChannelsTextListsEveryChannelWithUnknownsAsDashes(t *testing.T) {
	fake := &fakeManagement{channels: unitChannels()}
	r := runUnit(t, fake, "--config", unitConfig(t, `vhost = "shop"`), "channels")
	if r.err != nil {
		t.Fatalf("channels: %v\n%s", r.err, r.errOut)
	}
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if lines[0] != "unconfirmed 41 on 2 channels" {
		t.Errorf("summary %q", lines[0])
	}
	if len(lines) != 6 || !strings.HasPrefix(lines[1], "CONNECTION") {
		t.Fatalf("want a summary, a header and four rows:\n%s", r.out)
	}
	for i, want := range [][]string{
		{"order-gateway", "svc-gateway", "yes", "37", "12", "11", "none", "0", "blocked by a resource alarm"},
		{`importer\x1b[2J`, "yes", "4", "—"},
		{"billing-worker", "no", "4.2", "20/50g", "20"},
		{"shop", "—", "—", "—"},
	} {
		f := lines[2+i]
		for _, w := range want {
			if !strings.Contains(f, w) {
				t.Errorf("row %d %q lacks %q", i, f, w)
			}
		}
	}
	if strings.Contains(r.out, "\x1b") {
		t.Errorf("a hostile connection name reached the terminal: %q", r.out)
	}
	if len(fake.vhosts) != 1 || fake.vhosts[0] != "shop" {
		t.Errorf("asked vhosts %q, want the context's", fake.vhosts)
	}
}

func TestChannelsJSONGivesNullForWhatTheBrokerDidNotReport(t *testing.T) {
	fake := &fakeManagement{channels: unitChannels()}
	r := runUnit(t, fake, "--config", unitConfig(t, ""), "channels", "--json", "--vhost", "other")
	if r.err != nil {
		t.Fatalf("channels --json: %v\n%s", r.err, r.errOut)
	}
	var got struct {
		Channels            []map[string]any `json:"channels"`
		UnconfirmedTotal    int64            `json:"unconfirmed_total"`
		UnconfirmedChannels int              `json:"unconfirmed_channels"`
		Note                *string          `json:"note"`
	}
	if err := json.Unmarshal([]byte(r.out), &got); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	if got.UnconfirmedTotal != 41 || got.UnconfirmedChannels != 2 || got.Note != nil || len(got.Channels) != 4 {
		t.Fatalf("totals %d on %d, note %v, %d channels", got.UnconfirmedTotal, got.UnconfirmedChannels, got.Note, len(got.Channels))
	}
	gw, closing := got.Channels[0], got.Channels[3]
	if gw["connection"] != "order-gateway" || gw["confirm"] != true || gw["unconfirmed"] != 37.0 || gw["publish_rate"] != 12.35 || gw["ack_rate"] != nil ||
		gw["connection_state"] != "blocked" {
		t.Errorf("gateway %v", gw)
	}
	for _, k := range []string{"confirm", "unconfirmed", "publish_rate", "confirm_rate", "ack_rate", "prefetch", "global_prefetch", "unacked", "consumers", "connection_state"} {
		v, ok := closing[k]
		if !ok || v != nil {
			t.Errorf("closing channel's %s = %v (present %v), want null", k, v, ok)
		}
	}
	if !strings.Contains(r.out, `\u001b[2J`) {
		t.Errorf("JSON must keep the exact name with the escape as \\u001b:\n%s", r.out)
	}
	if len(fake.vhosts) != 1 || fake.vhosts[0] != "other" {
		t.Errorf("asked vhosts %q, want --vhost", fake.vhosts)
	}
}

func TestChannelsWithoutStatisticsSayWhy(t *testing.T) {
	fake := &fakeManagement{channels: &domain.ChannelList{Note: "channel details unavailable: the broker collects no channel statistics (disabled)"}}
	r := runUnit(t, fake, "--config", unitConfig(t, ""), "channels")
	if r.err != nil || !strings.Contains(r.out, "collects no channel statistics") || !strings.Contains(r.out, "no channels") {
		t.Errorf("err %v, out %q", r.err, r.out)
	}
}

func TestChannelsFailureExitsOne(t *testing.T) {
	fake := &fakeManagement{err: errors.New("management API at http://127.0.0.1:1 unreachable")}
	r := runUnit(t, fake, "--config", unitConfig(t, ""), "channels")
	if r.err == nil || app.ExitCode(r.err) != app.ExitFailure {
		t.Errorf("err %v, want exit 1", r.err)
	}
}
