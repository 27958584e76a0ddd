package common

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestWrapBreaksAtSpacesNeverInsideAWord(t *testing.T) {
	const line = "orders.dlq · DLQ of orders, orders.pending-payment, orders.shipping-labels (paired by naming)"
	tests := []struct {
		width int
		want  []string
	}{
		{200, []string{line}},
		{40, []string{
			"orders.dlq · DLQ of orders,",
			"  orders.pending-payment,",
			"  orders.shipping-labels (paired by",
			"  naming)",
		}},
		{20, []string{
			"orders.dlq · DLQ of",
			"  orders,",
			"  orders.pending-pay",
			"  ment,",
			"  orders.shipping-la",
			"  bels (paired by",
			"  naming)",
		}},
	}
	for _, tt := range tests {
		got := strings.Split(Wrap(line, tt.width), "\n")
		if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("at %d cells:\n%s\nwant:\n%s", tt.width, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
		}
		for _, l := range got {
			if ansi.StringWidth(l) > tt.width {
				t.Errorf("at %d cells a line is %d wide: %q", tt.width, ansi.StringWidth(l), l)
			}
		}
	}
}

func TestWrapKeepsStylesAndShortLines(t *testing.T) {
	styled := "\x1b[1morders.dlq\x1b[0m · in vhost / · classic · durable"
	got := Wrap(styled+"\nshort", 30)
	lines := strings.Split(got, "\n")
	if len(lines) != 3 || lines[2] != "short" {
		t.Fatalf("wrapped into %q", lines)
	}
	if !strings.HasPrefix(lines[0], "\x1b[1morders.dlq\x1b[0m") {
		t.Errorf("the style of the first word was lost: %q", lines[0])
	}
	if plain := ansi.Strip(got); plain != "orders.dlq · in vhost / ·\n  classic · durable\nshort" {
		t.Errorf("wrapped as %q", plain)
	}
}

// A character of several code points (an emoji with a variation
// selector, a flag, a family joined by zero-width joiners) is one to the
// break as to the cut: nothing of the line is lost.
func TestWrapLosesNothingOfCharactersOfSeveralCodePoints(t *testing.T) {
	for _, word := range []string{"❤️", "🇩🇪", "👩‍👩‍👧‍👦"} {
		line := "queue " + word + " abcdefghijk lmnop"
		got := Wrap(line, 12)
		// A word wider than a line is cut, so spaces are not compared.
		if joined := strings.Join(strings.Fields(ansi.Strip(got)), ""); joined != strings.Join(strings.Fields(line), "") {
			t.Errorf("%q wrapped at 12 cells reads %q: something was lost", line, ansi.Strip(got))
		}
		for _, l := range strings.Split(got, "\n") {
			if ansi.StringWidth(l) > 12 {
				t.Errorf("a line of %q is %d cells wide: %q", line, ansi.StringWidth(l), l)
			}
		}
	}
}

// A table row padded past the width, and a line indented before a long
// word, wrap into no blank line.
func TestWrapMakesNoBlankLineOfPaddingOrIndent(t *testing.T) {
	row := "  ctag-1  10.0.0.7:5672  prefetch 50" + strings.Repeat(" ", 60)
	if got := Wrap(row, 80); got != ansi.Cut(row, 0, 80) {
		t.Errorf("a padded row that fits was wrapped: %q", got)
	}
	styled := "\x1b[2m" + row + "\x1b[0m"
	if got := Wrap(styled, 80); strings.Contains(got, "\n") {
		t.Errorf("a styled padded row was wrapped: %q", got)
	}
	long := "a few words that need wrapping here   " + strings.Repeat(" ", 50)
	for _, l := range strings.Split(Wrap(long, 20), "\n") {
		if strings.TrimSpace(ansi.Strip(l)) == "" {
			t.Errorf("%q wrapped at 20 cells has a blank line: %q", long, Wrap(long, 20))
		}
	}
	indented := "  " + strings.Repeat("x", 30)
	got := strings.Split(Wrap(indented, 20), "\n")
	if len(got) != 2 || got[0] != "  "+strings.Repeat("x", 18) || got[1] != "  "+strings.Repeat("x", 12) {
		t.Errorf("an indented long word wrapped as %q", got)
	}
}

func TestJoinFitKeepsEachPartWhole(t *testing.T) {
	parts := []string{"publish 0/s", "ack 0/s", "held: no consumers", "stats 5s old"}
	tests := []struct {
		width int
		want  string
	}{
		{width: 80, want: "publish 0/s · ack 0/s · held: no consumers · stats 5s old"},
		{width: 45, want: "publish 0/s · ack 0/s · held: no consumers ·\n  stats 5s old"},
		{width: 20, want: "publish 0/s ·\n  ack 0/s ·\n  held: no consumers ·\n  stats 5s old"},
		{width: 0, want: "publish 0/s · ack 0/s · held: no consumers · stats 5s old"},
	}
	for _, tt := range tests {
		if got := JoinFit(parts, " · ", tt.width); got != tt.want {
			t.Errorf("width %d:\n%s\nwant\n%s", tt.width, got, tt.want)
		}
	}
}
