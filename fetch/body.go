package fetch

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxEncodingLayers bounds how many Content-Encoding layers are undone.
const maxEncodingLayers = 4

// decode undoes the Content-Encoding of body (a comma-separated list of
// codings, applied in order), keeping at most limit decoded bytes.
// Supported: gzip, x-gzip, deflate (zlib, or raw deflate as some servers
// send), identity. truncatedInput says the body was cut short, in which case
// an unexpected EOF yields the bytes decoded so far and no error. For the
// identity coding decoded is body itself.
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
			zr, err := gzip.NewReader(bufio.NewReader(r))
			if err != nil {
				return nil, false, fmt.Errorf("decode %q: gzip: %w", encoding, err)
			}
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
