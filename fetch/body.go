package fetch

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
)

// maxEncodingLayers bounds how many Content-Encoding layers are undone.
const maxEncodingLayers = 4

// decode undoes the Content-Encoding of body (a comma-separated list of
// codings, applied in order), keeping at most limit decoded bytes.
// Supported: gzip, x-gzip, deflate (zlib, or raw deflate as some servers
// send), br (brotli, RFC 7932), zstd (RFC 8878, RFC 9659), identity.
// truncatedInput says the body was cut short, in which case an unexpected
// EOF yields the bytes decoded so far and no error. For the identity
// coding decoded is body itself.
func decode(body []byte, encoding string, limit int64, truncatedInput bool) (decoded []byte, truncated bool, err error) {
	var codings []string
	for c := range strings.SplitSeq(encoding, ",") {
		c = strings.ToLower(strings.TrimSpace(c))
		if c != "" && c != "identity" {
			codings = append(codings, c)
		}
	}
	if len(codings) == 0 {
		if int64(len(body)) > limit {
			return body[:limit], true, nil
		}
		return body, false, nil
	}
	if len(codings) > maxEncodingLayers {
		return nil, false, fmt.Errorf("decode %q: more than %d codings", encoding, maxEncodingLayers)
	}
	var r io.Reader = bytes.NewReader(body)
	for i := len(codings) - 1; i >= 0; i-- {
		// Codings are listed in the order applied, so undo the last first.
		switch codings[i] {
		case "gzip", "x-gzip":
			// The reader buffers a source that is not a byte reader (an
			// inner coding's decoder) itself, reusing its buffer on Reset.
			zr, err := getGzip(r)
			if err != nil {
				return nil, false, fmt.Errorf("decode %q: gzip: %w", encoding, err)
			}
			defer putGzip(zr)
			r = zr
		case "deflate":
			br := bufio.NewReader(r)
			if looksZlib(br) {
				zr, err := zlib.NewReader(br)
				if err != nil {
					return nil, false, fmt.Errorf("decode %q: deflate: %w", encoding, err)
				}
				r = zr
			} else {
				r = flate.NewReader(br)
			}
		case "br":
			// The last coding applied reads body itself, whose first
			// byte says the stream's window; an inner one, another
			// decoder's output.
			pool := i == len(codings)-1 && len(body) > 0 && brotliWindow(body[0]) <= maxPooledBrotliWindow
			br := getBrotli(r, pool)
			defer putBrotli(br, pool)
			r = br
		case "zstd":
			// As for br: the last coding applied reads body itself, whose
			// frame headers say the windows the decoder will hold.
			pool := i == len(codings)-1 && zstdWindow(body) <= maxPooledZstdWindow
			zd, err := getZstd(r, pool)
			if err != nil {
				return nil, false, fmt.Errorf("decode %q: zstd: %w", encoding, err)
			}
			defer putZstd(zd, pool)
			r = zstdReader{zd}
		default:
			return nil, false, fmt.Errorf("decode %q: unsupported coding %q", encoding, codings[i])
		}
	}
	out, truncated, err := readCapped(r, limit, int64(len(body))*4)
	if err != nil {
		if truncatedInput && errors.Is(err, io.ErrUnexpectedEOF) {
			return out, true, nil
		}
		return nil, false, fmt.Errorf("decode %q: %w", encoding, err)
	}
	return out, truncated, nil
}

// gzip readers are pooled: a Reader's inflater holds its window and
// tables (about 40 KiB), as large as a typical page, and Reset keeps them.
// They are klauspost's, whose inflater is faster than the standard
// library's.
var gzipPool sync.Pool // of *gzip.Reader

// getGzip returns a gzip reader of r, from the pool if one is there.
func getGzip(r io.Reader) (*gzip.Reader, error) {
	zr, _ := gzipPool.Get().(*gzip.Reader)
	if zr == nil {
		return gzip.NewReader(r)
	}
	if err := zr.Reset(r); err != nil {
		putGzip(zr)
		return nil, err
	}
	return zr, nil
}

// putGzip returns zr to the pool, holding no reference to its last
// source (a response body, up to MaxBodyBytes) while it waits there.
func putGzip(zr *gzip.Reader) {
	_ = zr.Reset(eofReader{}) // fails at once: no header to read; getGzip resets it again
	gzipPool.Put(zr)
}

// eofReader is an empty io.ByteReader.
type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
func (eofReader) ReadByte() (byte, error)  { return 0, io.EOF }

// Brotli readers are pooled: a Reader's own state (a 32 KiB input buffer,
// Huffman tables) is about the size of a typical page, and Reset keeps it.
// Reset does not shrink the ring buffer (up to the stream's window, 16 MiB
// at most) a Reader holds while pooled, so only readers of streams whose
// window is at most maxPooledBrotliWindow go back; past it the ring
// buffer's allocation dominates anyway.
const maxPooledBrotliWindow = 1 << 20

var brotliPool sync.Pool // of *brotli.Reader

// getBrotli returns a brotli reader of r, from the pool if pool is set.
func getBrotli(r io.Reader, pool bool) *brotli.Reader {
	if pool {
		if br, _ := brotliPool.Get().(*brotli.Reader); br != nil {
			_ = br.Reset(r) // always nil
			return br
		}
	}
	return brotli.NewReader(r)
}

// putBrotli returns br to the pool if pool is set, dropping its source.
func putBrotli(br *brotli.Reader, pool bool) {
	if pool {
		_ = br.Reset(nil) // always nil
		brotliPool.Put(br)
	}
}

// brotliWindow returns the window size a brotli stream starting with b
// declares (RFC 7932 section 9.1, WBITS): 16 if the first bit is 0, else
// 17 + the next three bits if they are not 0, else 8 + the three after
// them, 17 for 0. The large-window extension (which the reader refuses)
// counts as the largest window.
func brotliWindow(b byte) int {
	switch {
	case b&1 == 0:
		return 1 << 16
	case b>>1&7 != 0:
		return 1 << (17 + b>>1&7)
	case b>>4&7 == 1:
		return 1 << 30 // large window
	case b>>4&7 != 0:
		return 1 << (8 + b>>4&7)
	}
	return 1 << 17
}

// looksZlib reports whether the next two bytes form a zlib header (RFC 1950:
// method 8, and CMF*256+FLG a multiple of 31).
func looksZlib(br *bufio.Reader) bool {
	h, err := br.Peek(2)
	if err != nil {
		return false
	}
	return h[0]&0x0f == 8 && (uint16(h[0])<<8|uint16(h[1]))%31 == 0
}

// mediaType returns the lower-case media type of a Content-Type value,
// without parameters, or "" if there is none.
func mediaType(contentType string) string {
	// This is what mime.ParseMediaType returns as the type, but it also
	// accepts values whose parameters are malformed.
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// sniff returns the media type http.DetectContentType finds in data.
func sniff(data []byte) string {
	return mediaType(http.DetectContentType(data))
}
