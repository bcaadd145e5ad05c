// Package childout collects what a child process writes: a buffer that
// its stdout and stderr may both write at once, and the last lines of it
// for an error message. The benchmarks that run trawl as child processes
// and the end-to-end tests share it.
package childout

import (
	"strings"
	"sync"
)

// Buffer is a byte buffer safe for concurrent writers and readers.
type Buffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	return len(p), nil
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// LastLines returns the last n lines of s.
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
