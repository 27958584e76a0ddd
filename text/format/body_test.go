package format

import (
	"bytes"
	"strings"
	"testing"
)

func TestABinaryBodyIsAHexDumpWithAnASCIIColumn(t *testing.T) {
	body := []byte("{\"id\": 4\xff\xfe}\n")
	b := BodyText(body, "application/json", "", false)
	want := `00000000  7b 22 69 64 22 3a 20 34  ff fe 7d 0a              |{"id": 4..}.|`
	if b.Kind != KindBytes || len(b.Lines) != 1 || b.Lines[0] != want {
		t.Fatalf("got %s %q, want bytes %q", b.Kind, b.Lines, want)
	}
	if b.More != "" {
		t.Errorf("a short body is shown whole, yet More = %q", b.More)
	}
}

func TestControlBytesMakeABodyBinary(t *testing.T) {
	for _, body := range []string{"ok\x00", "a\x1b[2Jb", "bell\x07", "del\x7f", "c1 \u009b31m"} {
		if b := BodyText([]byte(body), "text/plain", "", false); b.Kind != KindBytes {
			t.Errorf("%q shown as %s", body, b.Kind)
		}
	}
	for _, body := range []string{"line\r\nnext\ttab", "naïve café", ""} {
		if b := BodyText([]byte(body), "text/plain", "", false); b.Kind != KindText {
			t.Errorf("%q shown as %s", body, b.Kind)
		}
	}
}

func TestALargeBinaryBodyShowsItsFirst4KiBAndSaysHowMuchMore(t *testing.T) {
	body := bytes.Repeat([]byte{0xff, 0x00}, 5000)
	b := BodyText(body, "", "", false)
	if got := len(b.Lines); got != HexLimit/16 {
		t.Errorf("%d lines, want %d (4 KiB at 16 bytes a line)", got, HexLimit/16)
	}
	if last := b.Lines[len(b.Lines)-1]; !strings.HasPrefix(last, "00000ff0  ") {
		t.Errorf("last line %q is not the one at offset 0xff0", last)
	}
	want := "… 5904 more bytes not shown (warren dlq show --json gives the whole body in base64)"
	if b.More != want {
		t.Errorf("More = %q, want %q", b.More, want)
	}
}

func TestAnEncodedBodyIsShownAsBytesAndSaysWhy(t *testing.T) {
	b := BodyText([]byte("plain enough"), "text/plain", "gzip", false)
	if b.Kind != KindBytes || b.Note != "content encoding gzip, shown as bytes" {
		t.Fatalf("got %s, note %q", b.Kind, b.Note)
	}
	if b := BodyText([]byte("plain"), "text/plain", "utf-8", false); b.Kind != KindText {
		t.Errorf("utf-8 content encoding shown as %s", b.Kind)
	}
}

func TestValidJSONIsIndentedWithItsKeysInOrder(t *testing.T) {
	b := BodyText([]byte(`{"zeta":1,"alpha":{"b":[1,2],"a":"x"}}`), "", "", false)
	want := []string{"{", `  "zeta": 1,`, `  "alpha": {`, `    "b": [`, "      1,", "      2", "    ],", `    "a": "x"`, "  }", "}"}
	if b.Kind != KindJSON || strings.Join(b.Lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got %s:\n%s", b.Kind, strings.Join(b.Lines, "\n"))
	}
}

func TestEscapesInJSONStringsStaySanitised(t *testing.T) {
	// A JSON escape is left as written, and a raw bidirectional override
	// in a string is made visible.
	b := BodyText([]byte("{\"a\":\"\\u001b[2J\",\"b\":\"\u202eevil\"}"), "application/json", "", false)
	text := strings.Join(b.Lines, "\n")
	if b.Kind != KindJSON || strings.ContainsRune(text, '\x1b') || strings.ContainsRune(text, '\u202e') {
		t.Fatalf("got %s %q", b.Kind, text)
	}
	if !strings.Contains(text, `\u001b[2J`) {
		t.Errorf("the escape in the string was not kept as written: %q", text)
	}
}

func TestInvalidJSONIsTextThatSaysSo(t *testing.T) {
	b := BodyText([]byte(`{"id": 4,`), "application/json", "", false)
	if b.Kind != KindText || !strings.HasPrefix(b.Note, "not valid JSON (") || b.Lines[0] != `{"id": 4,` {
		t.Fatalf("got %s %q, note %q", b.Kind, b.Lines, b.Note)
	}
	if b := BodyText([]byte(`[not json`), "text/plain", "", false); b.Kind != KindText || b.Note != "" {
		t.Errorf("text that only starts like JSON: %s, note %q", b.Kind, b.Note)
	}
}

func TestLongTextIsCutOnARuneAndSaysHowMuchMore(t *testing.T) {
	body := strings.Repeat("é", TextLimit) // two bytes each
	b := BodyText([]byte(body), "text/plain", "", false)
	shown := strings.Join(b.Lines, "\n")
	if len(shown) != TextLimit || !strings.HasSuffix(shown, "é") {
		t.Errorf("shown %d bytes ending %q, want %d ending on a whole rune", len(shown), shown[len(shown)-2:], TextLimit)
	}
	if want := "… 65536 more bytes not shown (warren dlq show --json gives the whole body)"; b.More != want {
		t.Errorf("More = %q, want %q", b.More, want)
	}
}

func TestAskingForBytesShowsAnyBodyAsBytes(t *testing.T) {
	if b := BodyText([]byte(`{"id":1}`), "application/json", "", true); b.Kind != KindBytes ||
		!strings.HasSuffix(b.Lines[0], `|{"id":1}|`) {
		t.Fatalf("got %s %q", b.Kind, b.Lines)
	}
	if b := BodyText(nil, "", "", true); b.Lines[0] != "(empty)" {
		t.Errorf("an empty body as bytes: %q", b.Lines)
	}
}

// A tab measures nothing to the code that wraps a body and a terminal
// draws it up to 8 columns wide: the lines carry the spaces instead, to
// the terminal's tab stops, counted in columns.
func TestTabsBecomeTheSpacesATerminalWouldShow(t *testing.T) {
	b := BodyText([]byte("java.lang.RuntimeException: boom\n\tat com.example.Foo.bar(Foo.java:12)\nab\tc\n界\tx"), "text/plain", "", false)
	want := []string{
		"java.lang.RuntimeException: boom",
		"        at com.example.Foo.bar(Foo.java:12)",
		"ab      c",
		"界      x",
	}
	if strings.Join(b.Lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("lines %q, want %q", b.Lines, want)
	}
}
