package fetch

import (
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// The zstd content coding (RFC 8878; registered for HTTP by RFC 9659) is
// decoded by klauspost/compress/zstd: pure Go, kept up to date and fuzzed
// by its author, and already in the build (the WARC writer's gzip).
//
// RFC 9659 section 3 bounds the window a sender may use to 8 MB, and lets
// a recipient refuse a larger one; the decoder does (a frame declaring
// more is a DecodeErr), so that a window-size bomb cannot make it
// allocate more than that, whatever MaxDecodedBytes is. The decoded bytes
// themselves are capped by MaxDecodedBytes, as for every other coding.
const maxZstdWindow = 8 << 20

// Decoders are pooled: a fresh one allocates its block decoders and
// tables, several times a small page (see BenchmarkDecodeZstd), and Reset
// keeps them. A Decoder also keeps the largest history ring (window plus
// two blocks) it ever needed, so only decoders that decoded a body whose
// frames all declare a window of at most maxPooledZstdWindow go back.
const maxPooledZstdWindow = 1 << 20

var zstdPool sync.Pool // of *zstd.Decoder

// newZstd returns a decoder with trawl's bounds: synchronous (no
// goroutines: the fetch's worker does the work, one block at a time), a
// window of at most maxZstdWindow.
func newZstd() *zstd.Decoder {
	d, err := zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxWindow(maxZstdWindow),
		zstd.WithDecoderMaxMemory(maxZstdWindow), // for streams, also a window bound
	)
	if err != nil {
		panic("fetch: zstd options: " + err.Error()) // constant options
	}
	return d
}

// getZstd returns a decoder of r, from the pool if pool is set.
func getZstd(r io.Reader, pool bool) (*zstd.Decoder, error) {
	var d *zstd.Decoder
	if pool {
		d, _ = zstdPool.Get().(*zstd.Decoder)
	}
	if d == nil {
		d = newZstd()
	}
	if err := d.Reset(r); err != nil {
		putZstd(d, pool)
		return nil, err
	}
	return d, nil
}

// putZstd returns d to the pool if pool is set, dropping its source;
// otherwise it closes d.
func putZstd(d *zstd.Decoder, pool bool) {
	if !pool {
		d.Close()
		return
	}
	_ = d.Reset(nil) // nil: releases the source, never fails
	zstdPool.Put(d)
}

// zstdReader names the coding in the decoder's errors ("zstd: magic
// number mismatch"), as the brotli reader does; io.EOF stays itself and
// errors.Is sees through to io.ErrUnexpectedEOF.
type zstdReader struct{ d *zstd.Decoder }

func (z zstdReader) Read(p []byte) (int, error) {
	n, err := z.d.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("zstd: %w", err)
	}
	return n, err
}

// zstdWindow returns the largest window any frame of the zstd stream body
// declares (RFC 8878 section 3.1.1.1.2: Window_Size, or the
// Frame_Content_Size of a single-segment frame), walking frames and block
// headers without decoding a block; skippable frames declare none. It
// stops at the first frame header it cannot read (a truncated or corrupt
// stream: the decoder stops there too), and returns 0 for a body with no
// readable frame header.
func zstdWindow(body []byte) uint64 {
	var window uint64
	for len(body) > 0 {
		var h zstd.Header
		rest, err := h.DecodeAndStrip(body)
		if err != nil {
			return window
		}
		if h.Skippable {
			if uint64(len(rest)) < uint64(h.SkippableSize) {
				return window
			}
			body = rest[h.SkippableSize:]
			continue
		}
		w := h.WindowSize
		if h.SingleSegment {
			w = max(h.FrameContentSize, zstd.MinWindowSize)
		}
		window = max(window, w)
		// Blocks (section 3.1.1.2): a 3-byte little-endian header of
		// Last_Block (bit 0), Block_Type (bits 1-2) and Block_Size; an RLE
		// block's content is one byte, a raw or compressed block's
		// Block_Size bytes.
		for {
			if len(rest) < 3 {
				return window
			}
			bh := uint32(rest[0]) | uint32(rest[1])<<8 | uint32(rest[2])<<16
			last, typ, size := bh&1 == 1, bh>>1&3, uint64(bh>>3)
			if typ == 1 {
				size = 1
			}
			if uint64(len(rest)-3) < size {
				return window
			}
			rest = rest[3+size:]
			if last {
				break
			}
		}
		if h.HasCheckSum {
			if len(rest) < 4 {
				return window
			}
			rest = rest[4:]
		}
		body = rest
	}
	return window
}
