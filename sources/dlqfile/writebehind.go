package dlqfile

import (
	"io"
	"os"
)

// writeBehindBytes is how much is written before the kernel is asked to
// start writing it to disk.
const writeBehindBytes = 8 << 20

// WriteBehind writes to f and, every few MiB, asks the kernel to start
// writing what was just written to disk without waiting for it (Linux's
// sync_file_range, as databases do for the files they sync at the end),
// so that the sync closing an export finds little left to write: the
// disk works while the queue is still being read. Elsewhere it writes to
// f alone. Writes go to f's current offset.
func WriteBehind(f *os.File) io.Writer {
	off, _ := f.Seek(0, io.SeekCurrent)
	return &writeBehind{f: f, start: startWriteback, off: off}
}

type writeBehind struct {
	f       *os.File
	start   func(f *os.File, off, n int64) // startWriteback
	off     int64                          // f's offset when it was made
	written int64                          // bytes written through w
	started int64                          // of them, those handed to the kernel's writeback
}

func (w *writeBehind) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.written += int64(n)
	if w.written-w.started >= writeBehindBytes {
		w.start(w.f, w.off+w.started, w.written-w.started)
		w.started = w.written
	}
	return n, err
}
