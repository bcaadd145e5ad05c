package fetch

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"
)

// Validators are the validators an earlier response carried for a URL
// (RFC 9110 section 8.8), kept by the crawler (urlstate.Record) to make a
// recrawl conditional. The zero Validators makes an unconditional request.
type Validators struct {
	// ETag is the earlier response's ETag as received, weak prefix ("W/")
	// and quotes included. It is sent verbatim as If-None-Match: the
	// server that minted it is the one comparing. "" means none.
	ETag string
	// LastModified is the earlier response's Last-Modified as received.
	// It is sent verbatim as If-Modified-Since only if it parses as an
	// HTTP date (http.ParseTime) that is not after the fetcher's clock:
	// a date in the future is a server lying or a clock gone wrong, and a
	// server comparing against it would answer 304 to every change until
	// then. "" means none.
	LastModified string
}

// ValidatorsOf returns the validators of a response's header: its ETag
// and Last-Modified, trimmed of surrounding white space, each "" when
// missing. Whether they are usable is decided when a request sends them.
func ValidatorsOf(h http.Header) Validators {
	return Validators{
		ETag:         strings.TrimSpace(h.Get("Etag")),
		LastModified: strings.TrimSpace(h.Get("Last-Modified")),
	}
}

// IsZero reports whether v has neither validator.
func (v Validators) IsZero() bool { return v.ETag == "" && v.LastModified == "" }

// Conditional returns the request headers v makes at time now:
// If-None-Match with the ETag, If-Modified-Since with the Last-Modified,
// each only when usable (see Validators); nil when neither is. Nothing is
// invented: a missing validator is never derived from the other.
func (v Validators) Conditional(now time.Time) http.Header {
	var h http.Header
	if etag := strings.TrimSpace(v.ETag); etag != "" && httpguts.ValidHeaderFieldValue(etag) {
		h = http.Header{"If-None-Match": {etag}}
	}
	if lm := strings.TrimSpace(v.LastModified); lm != "" && httpguts.ValidHeaderFieldValue(lm) {
		if t, err := http.ParseTime(lm); err == nil && !t.After(now) {
			if h == nil {
				h = make(http.Header, 1)
			}
			h["If-Modified-Since"] = []string{lm}
		}
	}
	return h
}

// errValidatorsAndHeader is the request error of a Request giving
// validators both ways.
var errValidatorsAndHeader = errors.New("validators given both in Request.Validators and as conditional headers in Request.Header")

// conditional reports whether h makes a request conditional on the
// validators a recrawl sends (If-None-Match or If-Modified-Since).
func conditional(h http.Header) bool {
	for k := range h {
		switch http.CanonicalHeaderKey(k) {
		case "If-None-Match", "If-Modified-Since":
			return true
		}
	}
	return false
}
