package common

// Frame is what a screen keeps of its place on the terminal: the space
// the root gave it. Screens embed it; each keeps its own SetSize, since
// each lays out differently, and records the size with Resize first.
type Frame struct{ Width, Height int }

// Resize records the space the screen may draw in.
func (f *Frame) Resize(w, h int) { f.Width, f.Height = w, h }

// NoText is embedded by a screen that never takes text input, so keys
// always reach the root's global bindings.
type NoText struct{}

// Capturing is always false: the screen takes no text.
func (NoText) Capturing() bool { return false }
