// Package styles is the one place the UI's colors and text styles live.
// Views take a Styles value and never create colors themselves, so the
// palette, light/dark adaptation and NO_COLOR are decided here.
package styles

import (
	"os"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"
)

// Palette is the set of colors the styles are built from. Each color
// adapts to the terminal's background (light or dark).
type Palette struct {
	Text     lipgloss.TerminalColor
	Muted    lipgloss.TerminalColor
	Accent   lipgloss.TerminalColor
	Red      lipgloss.TerminalColor
	Yellow   lipgloss.TerminalColor
	Green    lipgloss.TerminalColor
	Border   lipgloss.TerminalColor
	Selected lipgloss.TerminalColor // background of the selected row
	OnRed    lipgloss.TerminalColor // text drawn on a red background
}

// Styles are the named styles every view draws with.
type Styles struct {
	Palette Palette

	Header lipgloss.Style // the top lines: context, broker, totals
	Banner lipgloss.Style // the production banner: impossible to miss
	Title  lipgloss.Style // a screen's title and section headings

	TableHeader   lipgloss.Style
	TableRow      lipgloss.Style
	TableSelected lipgloss.Style

	Trouble lipgloss.Style // something is wrong now: act
	Warn    lipgloss.Style // something may go wrong: look
	OK      lipgloss.Style
	Muted   lipgloss.Style // secondary text, unknown figures

	Label lipgloss.Style // the key of a key: value line
	Value lipgloss.Style

	FooterError lipgloss.Style
	FooterInfo  lipgloss.Style

	Help     lipgloss.Style // the box around the help view
	HelpKey  lipgloss.Style
	HelpDesc lipgloss.Style
	HelpSep  lipgloss.Style

	Border lipgloss.Style // boxes: prompts, panels
}

// Default returns the styles for the current environment: without colors
// when NO_COLOR is set (https://no-color.org), adaptive colors otherwise.
func Default() Styles {
	return New(os.Getenv("NO_COLOR") != "")
}

// New returns the styles with colors, or with none at all when noColor is
// true. Without colors, emphasis falls back to bold, underline and reverse,
// which NO_COLOR allows.
func New(noColor bool) Styles {
	p := DefaultPalette()
	if noColor {
		p = MonochromePalette()
	}
	return build(p)
}

// DefaultPalette is warren's palette: red means act now, yellow means look,
// green means fine; everything else stays quiet.
func DefaultPalette() Palette {
	return Palette{
		Text:     lipgloss.AdaptiveColor{Light: "235", Dark: "252"},
		Muted:    lipgloss.AdaptiveColor{Light: "245", Dark: "243"},
		Accent:   lipgloss.AdaptiveColor{Light: "25", Dark: "75"},
		Red:      lipgloss.AdaptiveColor{Light: "160", Dark: "203"},
		Yellow:   lipgloss.AdaptiveColor{Light: "136", Dark: "221"},
		Green:    lipgloss.AdaptiveColor{Light: "28", Dark: "114"},
		Border:   lipgloss.AdaptiveColor{Light: "250", Dark: "238"},
		Selected: lipgloss.AdaptiveColor{Light: "254", Dark: "237"},
		OnRed:    lipgloss.AdaptiveColor{Light: "231", Dark: "231"},
	}
}

// MonochromePalette has no colors at all.
func MonochromePalette() Palette {
	none := lipgloss.NoColor{}
	return Palette{
		Text: none, Muted: none, Accent: none, Red: none, Yellow: none,
		Green: none, Border: none, Selected: none, OnRed: none,
	}
}

func build(p Palette) Styles {
	base := lipgloss.NewStyle()
	fg := func(c lipgloss.TerminalColor) lipgloss.Style { return base.Foreground(c) }
	return Styles{
		Palette: p,

		Header: fg(p.Text),
		Banner: base.Bold(true).Foreground(p.OnRed).Background(p.Red).Padding(0, 1),
		Title:  fg(p.Accent).Bold(true),

		TableHeader:   fg(p.Muted).Bold(true).Underline(true),
		TableRow:      fg(p.Text),
		TableSelected: base.Bold(true).Reverse(isNone(p.Selected)).Background(p.Selected),

		Trouble: fg(p.Red).Bold(true),
		Warn:    fg(p.Yellow),
		OK:      fg(p.Green),
		Muted:   fg(p.Muted),

		Label: fg(p.Muted),
		Value: fg(p.Text),

		FooterError: fg(p.Red).Bold(true),
		FooterInfo:  fg(p.Green),

		Help:     base.Padding(0, 1),
		HelpKey:  fg(p.Accent).Bold(true),
		HelpDesc: fg(p.Muted),
		HelpSep:  fg(p.Border),

		Border: base.Border(lipgloss.RoundedBorder()).BorderForeground(p.Border).Padding(0, 1),
	}
}

// isNone reports whether c is the absence of a color, in which case the
// selected row is shown in reverse video instead of a background.
func isNone(c lipgloss.TerminalColor) bool {
	_, ok := c.(lipgloss.NoColor)
	return ok
}

// HelpStyles adapts the styles to the bubbles help component.
func (s Styles) HelpStyles() help.Styles {
	return help.Styles{
		Ellipsis:       s.HelpSep,
		ShortKey:       s.HelpKey,
		ShortDesc:      s.HelpDesc,
		ShortSeparator: s.HelpSep,
		FullKey:        s.HelpKey,
		FullDesc:       s.HelpDesc,
		FullSeparator:  s.HelpSep,
	}
}
