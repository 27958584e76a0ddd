package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// dashboardRun is what starting the real binary in a terminal showed.
type dashboardRun struct {
	firstFrame  time.Duration // from exec to the first row of data on the terminal, median of the starts
	firstFrames string        // each start's, in order
	fullList    time.Duration // from exec to every queue in the footer's count
	ptyStart    time.Duration // the same wrapper printing a word: its own share
	rssMiB      float64       // peak resident set after a second list and several refreshes
}

// afterFirstFrame is how long the dashboard keeps refreshing (every 2 s)
// after its full list is on screen before its peak resident memory is
// read.
const afterFirstFrame = 7 * time.Second

// dashboard starts `warren` in a pseudo-terminal of 120×40 made by
// script(1) and reads the terminal's output until a queue row appears:
// the time to the first frame with data, as the operator sees it. It then
// lets the dashboard refresh a few times and reads its VmHWM.
func (b *bench) dashboard(vh string) (*dashboardRun, error) {
	total, err := b.queueCount(vh)
	if err != nil {
		return nil, err
	}
	cfg, err := b.writeConfig(vh, "")
	if err != nil {
		return nil, err
	}
	res := &dashboardRun{}
	if res.ptyStart, err = b.ptyStart(); err != nil {
		return nil, err
	}
	// Two starts that quit at their first frame, then the one that stays;
	// each waits for the broker to have finished the last one's requests.
	var frames []time.Duration
	base := brokerCores(2 * time.Second)
	for range 2 {
		d, err := b.firstFrameOnly(cfg, base)
		if err != nil {
			return nil, err
		}
		frames = append(frames, d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd, stdin, out, err := b.ptyDashboard(ctx, cfg)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("script(1) from util-linux is needed for the pseudo-terminal: %w", err)
	}
	defer stopDashboard(cmd)
	// The full list is on screen when the footer counts every queue
	// (before, a first page says "N deepest shown, loading all M").
	seen := watchAll(out, []string{"svc-", fmt.Sprintf(" of %d queues", total)}, stdin)
	select {
	case err := <-seen[0]:
		if err != nil {
			return nil, fmt.Errorf("the dashboard showed no queue: %w", err)
		}
		frames = append(frames, time.Since(start))
	case <-time.After(time.Minute):
		return nil, errors.New("the dashboard showed no queue within a minute")
	}
	var each []string
	for _, f := range frames {
		each = append(each, fmtMs(ms(f)))
	}
	res.firstFrame, res.firstFrames = median(frames), strings.Join(each, ", ")
	select {
	case err := <-seen[1]:
		if err != nil {
			return nil, fmt.Errorf("the dashboard never showed all %d queues: %w", total, err)
		}
		res.fullList = time.Since(start)
	case <-time.After(5 * time.Minute):
		return nil, fmt.Errorf("the dashboard showed no full list of %d queues within 5 minutes", total)
	}
	// r lists every queue again at once, as the dashboard does on its
	// own every ten times what a list takes: the peak comes while a list
	// is decoded beside the rows of the last, which the first list does
	// not show. The wait covers that list and a few refreshes.
	if _, err := io.WriteString(stdin, "r"); err != nil {
		return nil, err
	}
	time.Sleep(res.fullList + afterFirstFrame)
	pid, err := childOf(cmd.Process.Pid)
	if err != nil {
		return nil, err
	}
	if res.rssMiB, err = vmHWM(pid); err != nil {
		return nil, err
	}
	_, _ = io.WriteString(stdin, "q")
	stdin.Close()
	return res, nil
}

// ptyDashboard is the dashboard under script(1) in a terminal of the
// harness's size, not started.
func (b *bench) ptyDashboard(ctx context.Context, cfg string) (*exec.Cmd, io.WriteCloser, io.Reader, error) {
	inner := b.warrenCmd(ctx, cfg)
	shell := fmt.Sprintf("stty rows %d cols %d && exec %s", termHeight, termWidth, shellJoin(inner.Args))
	cmd := exec.CommandContext(ctx, "script", "-qfec", shell, "/dev/null")
	cmd.Env = inner.Env
	cmd.Dir = b.dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	return cmd, stdin, out, nil
}

// firstFrameOnly starts the dashboard, times its first row of data and
// stops it. The broker may still be answering the full list the
// dashboard asked for next: the next start waits until it is done.
func (b *bench) firstFrameOnly(cfg string, base float64) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, stdin, out, err := b.ptyDashboard(ctx, cfg)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("script(1) from util-linux is needed for the pseudo-terminal: %w", err)
	}
	var took time.Duration
	select {
	case err = <-watch(out, "svc-", stdin):
		took = time.Since(start)
	case <-time.After(time.Minute):
		err = errors.New("no queue within a minute")
	}
	stopDashboard(cmd)
	if err != nil {
		return 0, fmt.Errorf("the dashboard showed no queue: %w", err)
	}
	brokerIdle(base)
	return took, nil
}

// stopDashboard kills the dashboard and the script(1) around it: killed
// alone, script leaves the dashboard running, still polling the broker.
func stopDashboard(cmd *exec.Cmd) {
	if pid, err := childOf(cmd.Process.Pid); err == nil {
		if p, err := os.FindProcess(pid); err == nil {
			_ = p.Kill()
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
}

// brokerCores is how many cores the brokers keep busy over d.
func brokerCores(d time.Duration) float64 {
	s := sampleCPU()
	time.Sleep(d)
	return s.until(sampleCPU()).brokerCores
}

// brokerIdle waits, for two minutes at most, until the brokers use no
// more than a quarter of a core above base (what they use while nobody
// asks them anything; a node of 100 000 queues keeps about one core busy
// with their statistics).
func brokerIdle(base float64) {
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
		if brokerCores(time.Second) <= base+0.25 {
			return
		}
	}
}

// ptyStart is the wrapper's own start-up: script(1) and stty, then a
// word printed instead of the dashboard.
func (b *bench) ptyStart() (time.Duration, error) {
	cmd := exec.Command("script", "-qfec", fmt.Sprintf("stty rows %d cols %d && echo bench-ready", termHeight, termWidth), "/dev/null")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() { _ = cmd.Wait() }()
	if err := <-watch(out, "bench-ready", nil); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// answers are what a terminal emulator replies to the queries a program
// sends at start (termenv asks for the background colour, then the cursor
// position, and waits up to 5 s for an answer). script(1) passes them
// through and nobody behind it answers, so the harness answers as a
// terminal would, at once.
var answers = []struct{ query, reply string }{
	{"\x1b]11;?", "\x1b]11;rgb:0000/0000/0000\x1b\\"},
	{"\x1b[6n", "\x1b[1;1R"},
}

// watch reads r until needle appears (nil on the channel) or r ends,
// answering terminal queries on term when it is not nil; it keeps
// draining r afterwards so the writer never blocks.
func watch(r io.Reader, needle string, term io.Writer) <-chan error {
	return watchAll(r, []string{needle}, term)[0]
}

// watchAll is watch for several needles, one channel each.
func watchAll(r io.Reader, needles []string, term io.Writer) []<-chan error {
	found := make([]chan error, len(needles))
	out := make([]<-chan error, len(needles))
	keep := 32 // longer than any query
	for i, n := range needles {
		found[i] = make(chan error, 1)
		out[i] = found[i]
		keep = max(keep, len(n))
	}
	go func() {
		var win []byte
		buf := make([]byte, 32<<10)
		sent := make([]bool, len(needles))
		for {
			n, err := r.Read(buf)
			if n > 0 {
				prev := len(win)
				win = append(win, buf[:n]...)
				if term != nil {
					answer(term, win, prev)
				}
				for i, needle := range needles {
					if !sent[i] && bytes.Contains(win, []byte(needle)) {
						found[i] <- nil
						sent[i] = true
					}
				}
				if len(win) > keep {
					win = append(win[:0], win[len(win)-keep:]...)
				}
			}
			if err != nil {
				for i, needle := range needles {
					if !sent[i] {
						found[i] <- fmt.Errorf("output ended before %q: %w", needle, err)
					}
				}
				return
			}
		}
	}()
	return out
}

// answer replies to every query in win that ends past prev (the part
// already looked at).
func answer(term io.Writer, win []byte, prev int) {
	for _, a := range answers {
		q := []byte(a.query)
		for from := 0; ; {
			i := bytes.Index(win[from:], q)
			if i < 0 {
				break
			}
			end := from + i + len(q)
			if end > prev {
				_, _ = io.WriteString(term, a.reply)
			}
			from = end
		}
	}
}

// childOf finds the process whose parent is pid (the dashboard under
// script).
func childOf(pid int) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
		i := bytes.LastIndexByte(raw, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(raw[i+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			return child, nil
		}
	}
	return 0, fmt.Errorf("no child of process %d", pid)
}

func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// queueCount is how many queues the dashboard of vh ("" for every vhost)
// lists.
func (b *bench) queueCount(vh string) (int, error) {
	if vh != "" {
		var qs []struct{}
		_, err := b.mgmt(http.MethodGet, "/api/queues/"+url.PathEscape(vh)+"?disable_stats=true&columns=name", nil, &qs)
		return len(qs), err
	}
	var ov struct {
		Totals struct {
			Queues int `json:"queues"`
		} `json:"object_totals"`
	}
	_, err := b.mgmt(http.MethodGet, "/api/overview", nil, &ov)
	return ov.Totals.Queues, err
}
