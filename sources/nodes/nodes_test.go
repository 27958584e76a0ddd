package nodes

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

var errDown = errors.New("connection refused")

// cluster answers for the nodes up, and says which were asked.
type cluster struct {
	up    map[string]bool
	asked []string
}

func (c *cluster) attempt(url string) (string, error) {
	c.asked = append(c.asked, url)
	if !c.up[url] {
		return "", errDown
	}
	return "answer from " + url, nil
}

func down(err error) bool { return errors.Is(err, errDown) }

func TestAFallbackAnswersWhenTheFirstNodeDoesNotAndServesTheNextRequestsFirst(t *testing.T) {
	s := New("a", []string{"b", "c"})
	c := &cluster{up: map[string]bool{"c": true}}
	got, err := Try(s, down, c.attempt)
	if err != nil || got != "answer from c" {
		t.Fatalf("Try = %q, %v; want c's answer", got, err)
	}
	if strings.Join(c.asked, ",") != "a,b,c" {
		t.Fatalf("asked %v, want a, b, then c", c.asked)
	}
	sv := s.Serving()
	if sv.URL != "c" || !sv.Fallback || !errors.Is(sv.Missed, errDown) || sv.MissedAt.IsZero() {
		t.Fatalf("Serving = %+v; want c, a fallback, with a's error", sv)
	}
	c.asked = nil
	if _, err := Try(s, down, c.attempt); err != nil || strings.Join(c.asked, ",") != "c" {
		t.Fatalf("the second request asked %v (err %v); want c alone, the node that answered last", c.asked, err)
	}
}

func TestAnErrorThatIsTheClustersAnswerIsNotTriedElsewhere(t *testing.T) {
	s := New("a", []string{"b"})
	refused := errors.New("bad credentials")
	var asked []string
	_, err := Try(s, down, func(url string) (int, error) {
		asked = append(asked, url)
		return 0, refused
	})
	if !errors.Is(err, refused) || len(asked) != 1 {
		t.Fatalf("Try = %v after asking %v; want the credentials error from a alone", err, asked)
	}
}

func TestNoNodeAnsweringNamesEveryNode(t *testing.T) {
	s := New("a", []string{"b"})
	c := &cluster{up: map[string]bool{}}
	_, err := Try(s, down, func(url string) (int, error) {
		_, err := c.attempt(url)
		return 0, fmt.Errorf("%s: %w", url, err)
	})
	var all *AllDown
	if !errors.As(err, &all) || len(all.Errs) != 2 {
		t.Fatalf("Try = %v; want AllDown with both nodes' errors", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "a: connection refused") || !strings.Contains(msg, "b: connection refused") || !strings.Contains(msg, "2 tried") {
		t.Fatalf("error %q does not name both nodes", msg)
	}
	if !errors.Is(err, errDown) {
		t.Fatalf("AllDown does not unwrap to the first node's error")
	}
	single := New("a", nil)
	if _, err := Try(single, down, c.attempt); err != errDown {
		t.Fatalf("one node's error = %v; want it unchanged", err)
	}
}

func TestTheFirstNodeIsTriedAgainByOneRequestAfterAWhile(t *testing.T) {
	s := New("a", []string{"b"})
	s.retry = 50 * time.Millisecond
	c := &cluster{up: map[string]bool{"b": true}}
	if _, err := Try(s, down, c.attempt); err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond)
	c.asked = nil
	if _, err := Try(s, down, c.attempt); err != nil || strings.Join(c.asked, ",") != "a,b" {
		t.Fatalf("after the retry interval asked %v (err %v); want a again, then b", c.asked, err)
	}
	c.asked = nil
	if _, err := Try(s, down, c.attempt); err != nil || strings.Join(c.asked, ",") != "b" {
		t.Fatalf("right after a probe asked %v; want b alone", c.asked)
	}
	c.up["a"] = true
	time.Sleep(60 * time.Millisecond)
	if got, _ := Try(s, down, c.attempt); got != "answer from a" || s.Serving().Fallback || s.Serving().Missed != nil {
		t.Fatalf("a back: got %q, serving %+v; want a, no fallback", got, s.Serving())
	}
}
