package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
)

// Class says why a fetch failed, so the crawler can choose between backing
// off, retrying later and giving up without parsing error text.
type Class string

// The classes of failure. A failed fetch has exactly one.
const (
	ClassRequest  Class = "request"  // the request itself is unusable (scheme, host, reserved header); nothing was sent
	ClassDNS      Class = "dns"      // the host name did not resolve
	ClassBlocked  Class = "blocked"  // the IP guard refused every address of the host; nothing was dialled
	ClassConnect  Class = "connect"  // the TCP connection failed (refused, unreachable, reset)
	ClassTimeout  Class = "timeout"  // connect, first-byte or total time-out before response headers
	ClassTLS      Class = "tls"      // TLS handshake or certificate verification failed
	ClassProtocol Class = "protocol" // the server did not answer with a valid HTTP/1.x response (incl. oversized headers)
	ClassBody     Class = "body"     // the connection failed while the body was being read
	ClassCanceled Class = "canceled" // the caller's context was canceled or its deadline passed
)

// Error is the error returned by Fetch and Resolve. URL is the request URL
// (or the host name for Resolve).
type Error struct {
	Class Class
	URL   string
	Err   error
}

func (e *Error) Error() string {
	return "fetch: " + e.URL + ": " + string(e.Class) + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// ClassOf returns the Class of err if err is or wraps an *Error, "" for nil,
// and ClassProtocol for any other error.
func ClassOf(err error) Class {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	return ClassProtocol
}

// Causes attached to the per-fetch context, so that a context error can be
// told apart from the caller's own cancellation.
var (
	errTotalTimeout     = errors.New("total time-out")
	errFirstByteTimeout = errors.New("first-byte time-out")
)

// classify maps an error from http.Client.Do to a Class. parent is the
// caller's context, ctx the per-fetch context derived from it; gotConn says
// whether a connection was obtained before the failure.
func classify(parent, ctx context.Context, err error, gotConn bool) (Class, error) {
	if parent.Err() != nil {
		return ClassCanceled, context.Cause(parent)
	}
	if cause := context.Cause(ctx); cause == errTotalTimeout || cause == errFirstByteTimeout {
		return ClassTimeout, cause
	}
	var fe *Error
	if errors.As(err, &fe) {
		return fe.Class, fe.Err
	}
	if isTLSError(err) {
		return ClassTLS, err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return ClassTimeout, err
	}
	if gotConn {
		return ClassProtocol, err
	}
	return ClassConnect, err
}

func isTLSError(err error) bool {
	var (
		rh  tls.RecordHeaderError
		al  tls.AlertError
		cv  *tls.CertificateVerificationError
		ua  x509.UnknownAuthorityError
		hn  x509.HostnameError
		ci  x509.CertificateInvalidError
		ech *tls.ECHRejectionError
	)
	return errors.As(err, &rh) || errors.As(err, &al) || errors.As(err, &cv) ||
		errors.As(err, &ua) || errors.As(err, &hn) || errors.As(err, &ci) || errors.As(err, &ech)
}
