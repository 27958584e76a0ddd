//go:build integration

package mgmt

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"

	"github.com/warrenops/warren/domain"
	"github.com/warrenops/warren/testkit"
)

// closedPort returns a loopback address where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestErrorsSayWhatToDo(t *testing.T) {
	t.Parallel()
	admin := testClient(t).Admin()
	const user, secret = "warren-mgmt-nomgmt", "s3cret-NoTag"
	res, err := admin.PutUser(user, rabbithole.UserSettings{Password: secret, Tags: rabbithole.UserTags{}})
	if err != nil {
		t.Fatalf("create user: %v (RabbitMQ with the management plugin must run at %s)", err, testMgmt)
	}
	res.Body.Close()
	t.Cleanup(func() {
		if res, err := admin.DeleteUser(user); err == nil {
			res.Body.Close()
		}
	})
	closed := closedPort(t)

	tests := []struct {
		name     string
		opts     Options
		kind     error
		contains []string
	}{
		{"wrong password", Options{URL: testMgmt, Username: "guest", Password: "not-the-Password-42"},
			domain.ErrUnauthorized, []string{`bad credentials for user "guest"`, "password_env"}},
		{"user without the management tag", Options{URL: testMgmt, Username: user, Password: secret},
			domain.ErrUnauthorized, []string{user, "no management tag"}},
		{"nothing listening (plugin off or broker down)", Options{URL: "http://" + closed, Username: "guest", Password: "not-the-Password-42"},
			domain.ErrUnreachable, []string{"management API at http://" + closed + " unreachable", "is the management plugin enabled?",
				"rabbitmq-plugins enable rabbitmq_management"}},
		{"https against a plain HTTP port", Options{URL: "https://127.0.0.1:15672", Username: "guest", Password: "guest"},
			domain.ErrUnreachable, []string{"does not speak TLS", "http://"}},
		{"http against a port that is not HTTP (AMQP's)", Options{URL: "http://127.0.0.1:5672", Username: "guest", Password: "guest"},
			domain.ErrUnreachable, []string{"is not an HTTP server", "is this the management plugin's port?"}},
		{"credentials in the URL stay out of messages", Options{URL: "http://guest:not-the-Password-42@" + closed},
			domain.ErrUnreachable, []string{"http://" + closed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Overview(context.Background())
			if !errors.Is(err, tt.kind) {
				t.Fatalf("error %v is not %v", err, tt.kind)
			}
			if domain.IsDisconnected(err) != (tt.kind == domain.ErrUnreachable) {
				t.Fatalf("IsDisconnected(%v) wrong", err)
			}
			msg := err.Error()
			for _, s := range tt.contains {
				if !strings.Contains(msg, s) {
					t.Errorf("message %q lacks %q", msg, s)
				}
			}
			if strings.Contains(msg, "not-the-Password-42") || strings.Contains(msg, secret) || strings.Contains(msg, "\n") {
				t.Fatalf("message leaks the password or spans lines: %q", msg)
			}
		})
	}
}

func TestUnknownQueueIsNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, err := e.c.Queue(context.Background(), e.vhost, "no-such-queue")
	if !errors.Is(err, domain.ErrNotFound) || !strings.Contains(err.Error(), "no-such-queue") {
		t.Fatalf("got %v", err)
	}
}

// A 3.10 broker whose statistics are off answers 400 to /api/channels;
// disable_stats=true asks a 3.10 broker for that very answer. 4.3 lists
// the channels without statistics instead, which is no note.
func TestChannelsWithoutStatisticsBecomeANote(t *testing.T) {
	t.Parallel()
	c := testClient(t)
	var out []rawChannel
	err := c.get(context.Background(), "channels", url.Values{"disable_stats": {"true"}}, &out)
	note, ok := channelsUnavailable(err)
	if testkit.AtLeast(t, 4, 3) {
		if err != nil || ok {
			t.Fatalf("RabbitMQ %s: /api/channels without statistics gave %v, note %q", testkit.Version(t), err, note)
		}
	} else if !ok || !strings.Contains(note, "channel details unavailable") {
		t.Fatalf("400 from /api/channels gave note %q, ok=%v (error %v)", note, ok, err)
	}
	if _, ok := channelsUnavailable(errors.New("other")); ok {
		t.Fatal("an unrelated error became a note")
	}
}

func TestSnapshotWithChannelsListsThem(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.queue("work", nil)
	ch := e.channel()
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.Consume("work", "watcher", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	e.snapshot(domain.SnapshotOptions{Channels: true}, func(s *domain.Snapshot) bool {
		if len(s.Consumers) != 1 || s.Consumers[0].Tag != "watcher" || s.ChannelsNote != "" {
			return false
		}
		for _, c := range s.Channels {
			if c.Name == s.Consumers[0].Channel {
				return c.ConfirmMode && c.Consumers == 1
			}
		}
		return false
	})
}

func TestADeadlineIsADisconnectionThatStillSaysDeadline(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	_, err := testClient(t).Overview(ctx)
	if !errors.Is(err, domain.ErrUnreachable) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "did not answer in time") {
		t.Fatalf("got %v", err)
	}
	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	if _, err := testClient(t).Overview(cctx); !errors.Is(err, context.Canceled) || errors.Is(err, domain.ErrUnreachable) {
		t.Fatalf("a cancelled read is not a disconnection: %v", err)
	}
}
