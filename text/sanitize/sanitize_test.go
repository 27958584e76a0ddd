package sanitize

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTextEscapesEverythingATerminalWouldObey(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"plain ascii unchanged", "orders.dlq", "orders.dlq"},
		{"unicode letters unchanged", "pedidos-ação", "pedidos-ação"},
		{"CSI clear screen", "a\x1b[2Jb", `a\x1b[2Jb`},
		{"OSC 52 clipboard write", "\x1b]52;c;ZXZpbA==\x07", `\x1b]52;c;ZXZpbA==\x07`},
		{"OSC 0 window title", "\x1b]0;pwned\x1b\\", `\x1b]0;pwned\x1b\`},
		{"8-bit CSI", "x\u009b2J", `x\u009b2J`},
		{"newline and tab in a cell", "a\nb\tc\r", `a\nb\tc\r`},
		{"NUL and DEL", "\x00\x7f", `\x00\x7f`},
		{"invalid utf-8", "ok\xff\xfe", `ok\xff\xfe`},
		{"bidi override", "abc\u202eevil", `abc\u202eevil`},
		{"zero width space and word joiner", "ord\u200bers\u2060", `ord\u200bers\u2060`},
		{"joiners of scripts and emoji kept", "a\u200db\u200cc", "a\u200db\u200cc"},
		{"literal backslash-x is doubled", `\x1b`, `\\x1b`},
		{"other backslashes kept", `C:\dir`, `C:\dir`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Text(c.in); got != c.want {
				t.Fatalf("Text(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestBlockKeepsLayoutButNotControls(t *testing.T) {
	got := Block("line1\n\tline2\x1b[31m")
	want := "line1\n\tline2\\x1b[31m"
	if got != want {
		t.Fatalf("Block = %q, want %q", got, want)
	}
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[2J", "\x1b]52;c;AAAA\x07", "\xff", "\u202e", "\u009b", `\x41`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Text(s), Block(s)} {
			if !utf8.ValidString(out) {
				t.Fatalf("output is not valid UTF-8: %q", out)
			}
			for _, r := range out {
				if r == 0x1b || r == 0x07 || r == 0x7f || (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x80 && r <= 0x9f) || isBidiControl(r) {
					t.Fatalf("control %U survived in %q", r, out)
				}
			}
		}
		if strings.ContainsAny(Text(s), "\n\t") {
			t.Fatalf("Text kept a layout character: %q", Text(s))
		}
	})
}

// A message is printed as its lines, with what would be a command to the
// terminal escaped, and escapes made before left as they were.
func TestAMessageKeepsItsLinesAndItsEarlierEscapes(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"export of q\x1b[2J: not found", `export of q\x1b[2J: not found`},
		{"export of " + Text("q\x1b[2J") + ": queue q\x1b[2J not found", `export of q\x1b[2J: queue q\x1b[2J not found`},
		{"unexpected token EOF (1:9)\n | reason ==\n | ........^", "unexpected token EOF (1:9)\n | reason ==\n | ........^"},
		{"bell\a and \u202e", `bell\x07 and \u202e`},
	} {
		if got := Message(tc.in); got != tc.want {
			t.Errorf("Message(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
