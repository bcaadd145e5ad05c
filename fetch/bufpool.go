package fetch

import (
	"io"
	"math"
	"math/bits"
	"sync"
)

// Body buffers come from size-class pools (powers of two from 4 KiB to
// 256 KiB) and go back through Response.Release, so that a crawl does not
// allocate, clear and collect a fresh buffer for every page: bodies were
// half of the bytes a crawl allocated. Larger buffers are allocated as
// needed and left to the garbage collector.
const (
	minPooledBits = 12 // 4 KiB
	maxPooledBits = 18 // 256 KiB
)

var bufPools [maxPooledBits - minPooledBits + 1]sync.Pool

// sizeClass returns the pool index for a buffer of capacity at least n,
// and false if n is over the largest class.
func sizeClass(n int) (int, bool) {
	if n > 1<<maxPooledBits {
		return 0, false
	}
	b := bits.Len(uint(max(n, 1) - 1)) // smallest b with 1<<b >= n
	return max(b, minPooledBits) - minPooledBits, true
}

// getBuf returns an empty buffer with room for at least n bytes.
func getBuf(n int) []byte {
	c, ok := sizeClass(n)
	if !ok {
		return make([]byte, 0, n)
	}
	if p, _ := bufPools[c].Get().(*[]byte); p != nil {
		return (*p)[:0]
	}
	return make([]byte, 0, 1<<(c+minPooledBits))
}

// putBuf returns b to its pool if its capacity is exactly a class size
// (as getBuf made it). The caller must not use b afterwards.
func putBuf(b []byte) {
	c, ok := sizeClass(cap(b))
	if !ok || cap(b) != 1<<(c+minPooledBits) {
		return
	}
	b = b[:0]
	bufPools[c].Put(&b)
}

// readCapped reads r until EOF or until more than limit bytes arrived. It
// returns at most limit bytes and whether more were available. hint, if
// positive, sizes the buffer (a declared Content-Length). The buffer comes
// from getBuf: pass it to putBuf when done with it, or drop it.
func readCapped(r io.Reader, limit, hint int64) (data []byte, truncated bool, err error) {
	// Read at most limit+1 bytes: one more than limit says there was more.
	most := limit + 1
	if most <= 0 {
		most = math.MaxInt64 // limit+1 overflowed: no cap worth the name
	}
	size := int64(4 << 10)
	if hint > 0 {
		size = min(hint, most-1) + 1 // +1 so reading the final EOF does not grow the buffer
	}
	buf := getBuf(int(min(size, most)))
	for {
		if len(buf) == cap(buf) { // full, and (returned below otherwise) len(buf) <= limit
			bigger := getBuf(int(min(2*int64(cap(buf)), most)))
			bigger = append(bigger, buf...)
			putBuf(buf)
			buf = bigger
		}
		room := int64(cap(buf) - len(buf))
		if over := int64(len(buf)) + room - most; over > 0 {
			room -= over // never read more than most bytes
		}
		n, rerr := r.Read(buf[len(buf) : int64(len(buf))+room])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return buf[:limit], true, nil
		}
		if rerr == io.EOF {
			return buf, false, nil
		}
		if rerr != nil {
			return buf, false, rerr
		}
	}
}
