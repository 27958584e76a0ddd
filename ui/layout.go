package ui

// The root's layout, in one place: the header and breadcrumb on top, the
// current screen in the middle, the message line and the short help at
// the bottom.
const (
	headerLines = 3 // broker line, status line, breadcrumb
	footerLines = 2 // error or info line, short help
	// Below this the overview's columns cannot show a useful name.
	minWidth  = 80
	minHeight = headerLines + footerLines + 5
)

// bodySize is the space a screen gets at a terminal size; ok is false
// when the terminal is too small to draw anything useful.
func bodySize(width, height int) (w, h int, ok bool) {
	if width < minWidth || height < minHeight {
		return width, max(height-headerLines-footerLines, 0), false
	}
	return width, height - headerLines - footerLines, true
}

// drawn reports whether the screens are on the terminal: below the
// smallest size only the size is drawn (and before the first size,
// nothing).
func (m Model) drawn() bool {
	_, _, ok := bodySize(m.width, m.height)
	return ok
}
