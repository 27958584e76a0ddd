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
