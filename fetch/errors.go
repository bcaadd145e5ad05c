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
	ClassRequest     Class = "request"     // the request itself is unusable (scheme, host, reserved header); nothing was sent
	ClassDNS         Class = "dns"         // the host name did not resolve
	ClassBlocked     Class = "blocked"     // the IP guard refused every address of the host; nothing was dialled
	ClassConnect     Class = "connect"     // the TCP connection failed (refused, unreachable, reset)
	ClassTimeout     Class = "timeout"     // connect, first-byte or total time-out before response headers
	ClassTLS         Class = "tls"         // the TLS handshake failed: an alert, no common protocol (an HTTP/2-only server), not TLS at all, a connection cut mid-handshake
	ClassCertificate Class = "certificate" // the server's certificate did not verify: unknown authority (self-signed, another root), expired or not yet valid, another name
	ClassProtocol    Class = "protocol"    // the server did not answer with a valid HTTP/1.x response (incl. oversized headers)
	ClassCanceled    Class = "canceled"    // the caller's context was canceled or its deadline passed
)

// What a hostile server gets, as the synthetic web's hostile hosts show
// (TestFetchHostileWeb): a head that drips or never comes, ClassTimeout;
// a head past MaxHeaderBytes, ClassProtocol. Once the head has come, the
// Response is returned with what of the body came: a body cut short of
// its Content-Length or reset is Truncated "disconnect", one that drips,
// never ends or inflates past a cap "time" or "length". A Content-Length
// shorter than the body yields the declared
// bytes (net/http drops the connection); a coding that cannot be undone
// (corrupt gzip, deflate or br, or a coding never asked for) leaves
// Response.DecodeErr.
// Over HTTPS (TestFetchTLSWeb): a certificate that does not verify is
// ClassCertificate, whatever the reason (the Err chain holds the crypto/x509
// error: UnknownAuthorityError, CertificateInvalidError, HostnameError);
// a handshake that fails otherwise, e.g. an HTTP/2-only server, is
// ClassTLS. Neither is ClassConnect: retrying will not help.
// Redirects are returned, never followed; a Location in another scheme
// is ClassRequest when fetched, one at a guarded address ClassBlocked; one
// net/url cannot parse is returned as sent (Response.Location).

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

// classify maps an error from http.Transport.RoundTrip to a Class. parent is the
// caller's context, ctx the per-fetch context derived from it; gotConn says
// whether a connection was obtained before the failure, handshakeErr is
// what the last TLS handshake returned (nil if none failed).
func classify(parent, ctx context.Context, err error, gotConn bool, handshakeErr error) (Class, error) {
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
	if isCertError(err) || isCertError(handshakeErr) {
		return ClassCertificate, err
	}
	if isTLSError(err) {
		return ClassTLS, err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return ClassTimeout, err
	}
	if handshakeErr != nil && !gotConn {
		return ClassTLS, err
	}
	if gotConn {
		return ClassProtocol, err
	}
	return ClassConnect, err
}

// isCertError reports whether err says the server's certificate did not
// verify.
func isCertError(err error) bool {
	if err == nil {
		return false
	}
	var (
		cv *tls.CertificateVerificationError
		ua x509.UnknownAuthorityError
		hn x509.HostnameError
		ci x509.CertificateInvalidError
		sa x509.SystemRootsError
		ce x509.ConstraintViolationError
		un x509.UnhandledCriticalExtension
	)
	return errors.As(err, &cv) || errors.As(err, &ua) || errors.As(err, &hn) || errors.As(err, &ci) ||
		errors.As(err, &sa) || errors.As(err, &ce) || errors.As(err, &un)
}

// isTLSError reports whether err is a TLS failure other than a
// certificate's: a malformed record (the server does not speak TLS), an
// alert the server sent (crypto/tls reports it as a *net.OpError with Op
// "remote error"), an ECH rejection.
func isTLSError(err error) bool {
	var (
		rh  tls.RecordHeaderError
		al  tls.AlertError
		ech *tls.ECHRejectionError
		oe  *net.OpError
	)
	return errors.As(err, &rh) || errors.As(err, &al) || errors.As(err, &ech) ||
		errors.As(err, &oe) && oe.Op == "remote error"
}
