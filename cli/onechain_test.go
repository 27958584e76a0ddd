//go:build integration

package cli

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/warrenops/warren/app"
	"github.com/warrenops/warren/config"
	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/sources/broker"
	"github.com/warrenops/warren/sources/mgmt"
	"github.com/warrenops/warren/testkit"
	"github.com/warrenops/warren/ui/common"
	"github.com/warrenops/warren/ui/styles"
)

// recorder is the clients both front ends get: the real management API
// and broker, with every call the operations layer makes written down,
// the scene's vhost replaced by V so two scenes compare.
type recorder struct {
	vhost string
	m     *mgmt.Client

	mu    sync.Mutex
	calls []string
}

func (r *recorder) add(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, strings.ReplaceAll(fmt.Sprintf(format, args...), r.vhost, "V"))
}

func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = nil
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

func (r *recorder) Snapshot(ctx context.Context, o domain.SnapshotOptions) (*domain.Snapshot, error) {
	var rates []string
	for _, q := range o.RatesFor {
		rates = append(rates, q.Vhost+"/"+q.Name)
	}
	r.add("snapshot vhost=%s rates=%v", o.Vhost, rates)
	return r.m.Snapshot(ctx, o)
}

func (r *recorder) Overview(ctx context.Context) (*domain.Overview, error) {
	r.add("overview")
	return r.m.Overview(ctx)
}

func (r *recorder) Channels(ctx context.Context, vhost string) (*domain.ChannelList, error) {
	r.add("channels vhost=%s", vhost)
	return r.m.Channels(ctx, vhost)
}

func (r *recorder) dial(vhost string) (*amqp.Connection, error) {
	r.add("dial vhost=%s", vhost)
	u := strings.Replace(testkit.AMQPURL, "guest:guest@", "", 1)
	return broker.Dial(broker.Options{URL: u, Username: "guest", Password: "guest", Vhost: vhost, Name: "warren one-chain test"})
}

func newRecorder(t *testing.T, vhost string) *recorder {
	t.Helper()
	m, err := mgmt.New(mgmt.Options{URL: testkit.MgmtURL, Username: "guest", Password: "guest"})
	if err != nil {
		t.Fatal(err)
	}
	return &recorder{vhost: vhost, m: m}
}

// recordedApp is an App over s's config whose clients r records.
func recordedApp(s *dlqScene, r *recorder, in string, out, errOut *bytes.Buffer) *App {
	return &App{ConfigPath: s.config, In: strings.NewReader(in), Out: out, Err: errOut,
		NewManagement: func(*config.Context) (app.Management, error) { return r, nil },
		Dial:          r.dial,
		terminal:      func(any) bool { return true },
	}
}

// The queue name `warren dlq replay` is given reaches the broker through
// one call chain of the operations layer, the same one the DLQ screen's
// whole-queue replay takes: the two front ends, on two identical scenes,
// make the same calls on the same clients in the same order, from the
// plan to the last publish, and move the same messages.
func TestBothFrontEndsReplayThroughOneCallChain(t *testing.T) {
	dsn := "postgres://postgres@127.0.0.1:5432/test"

	// The command line, answered y at its prompt.
	cliScene := newDlqScene(t, dsn)
	cliRec := newRecorder(t, cliScene.vhost)
	var out, errOut bytes.Buffer
	a := recordedApp(cliScene, cliRec, "y\n", &out, &errOut)
	cmd := newDlqCmd(a)
	cmd.SetArgs([]string{"replay", "orders.dlq"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatalf("dlq replay: %v\n%s%s", err, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "3 selected, 1 skipped as applied, 3 confirmed") {
		t.Fatalf("dlq replay moved other messages than planned:\n%s%s", out.String(), errOut.String())
	}
	cliCalls := cliRec.list()

	// The dashboard's DLQ screen on a scene of its own, wired by the
	// composition root over the same kind of recording clients.
	uiScene := newDlqScene(t, dsn)
	uiRec := newRecorder(t, uiScene.vhost)
	var uiOut, uiErr bytes.Buffer
	ua := recordedApp(uiScene, uiRec, "", &uiOut, &uiErr)
	o, err := ua.Factory().Ops()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	scr := app.NewScreens(nil, o, styles.New(true)).NewDLQ(domain.QueueRef{Vhost: uiScene.vhost, Name: "orders.dlq"})
	p := &pump{t: t, s: scr, msgs: make(chan tea.Msg, 64)}
	p.s.SetSize(120, 40)
	t.Cleanup(func() {
		if cmd := p.s.(common.Closer).Close(); cmd != nil {
			cmd()
		}
	})
	p.run(p.s.Init())
	p.until("four held letters", func(v string) bool { return strings.Contains(v, "4 held") })
	uiRec.reset() // what browsing cost is the screen's own; the replay starts here
	p.send(tea.KeyMsg{Type: tea.KeyCtrlR})
	p.until("the plan prompt", func(v string) bool { return strings.Contains(v, "Proceed? (y goes on, n or esc cancels)") })
	p.keys("y")
	p.until("the result", func(v string) bool { return strings.Contains(v, "3 confirmed") })
	uiCalls := uiRec.list()

	if len(cliCalls) < 3 {
		t.Fatalf("the command line made %d calls: %v", len(cliCalls), cliCalls)
	}
	// After its result the screen browses again; the replay's calls are
	// those before.
	if len(uiCalls) < len(cliCalls) || !slices.Equal(uiCalls[:len(cliCalls)], cliCalls) {
		t.Fatalf("the front ends take different paths to the broker:\ncommand line: %q\ndashboard:    %q", cliCalls, uiCalls)
	}
	t.Logf("one call chain: %q", cliCalls)
	for _, s := range []*dlqScene{cliScene, uiScene} {
		testkit.WaitDepth(t, s.ch, "orders", 3)
		testkit.WaitDepth(t, s.ch, "orders.dlq", 1)
	}
}
