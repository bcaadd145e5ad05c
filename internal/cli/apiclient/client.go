// Package apiclient is a Go client of trawl's HTTP control API (package api,
// docs/api/openapi.yaml), used by `trawl status`, `trawl crawls`, `trawl
// hosts` and `trawl node`. Its bodies are package api/wire's, under this
// client's names (type aliases). A Client
// is safe for concurrent use.
//
// Every call has a deadline (Options.Timeout). Every failure is an *Error
// that names the operation and the server, and says either what the API
// answered (its status and its {"error": {"field", "message"}} body) or why
// no answer came (Status 0). The bearer token is sent only with the calls
// that change something, never with reads.
package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/trawl-crawler/trawl/api/wire"
)

// DefaultTimeout bounds a call when Options.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// maxAnswerBytes bounds an answer's body: the API's largest, a list of
// crawls, is far smaller.
const maxAnswerBytes = 16 << 20

// Options configures New.
type Options struct {
	// Server is the API's base URL, e.g. http://127.0.0.1:8420. Required;
	// a path in it is kept as a prefix of every route.
	Server string
	// Token is the bearer token the API's changes need. Empty: none is
	// sent, and those calls get a 401.
	Token string
	// Timeout bounds each call, connecting included. Zero means
	// DefaultTimeout.
	Timeout time.Duration
	// HTTP is the client the calls go through. Nil means a new
	// http.Client; its own Timeout, if set, applies too.
	HTTP *http.Client
}

// Client calls one trawl server.
type Client struct {
	base    *url.URL
	token   string
	timeout time.Duration
	http    *http.Client
}

// New returns a Client, or an error if the server URL is unusable.
func New(o Options) (*Client, error) {
	u, err := url.Parse(o.Server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("apiclient: server %q: want an http(s) URL such as http://127.0.0.1:8420", o.Server)
	}
	if o.Timeout < 0 {
		return nil, fmt.Errorf("apiclient: timeout %v is negative", o.Timeout)
	}
	c := &Client{base: u, token: o.Token, timeout: o.Timeout, http: o.HTTP}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	if c.http == nil {
		c.http = &http.Client{}
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawQuery, u.Fragment = "", ""
	return c, nil
}

// Server returns the server's base URL.
func (c *Client) Server() string { return c.base.String() }

// Error is a failed call. Status is the HTTP status of the answer, or 0
// when none came (Err says why: the server is down, the name does not
// resolve, the deadline passed). Field and Message are the API's own
// error body, when it sent one.
type Error struct {
	Op      string // method and route, e.g. "POST /v1/crawls/3/pause"
	Server  string // the server's base URL
	Status  int
	Field   string // the request field at fault, as a JSON path; "" if none
	Message string
	Err     error // the transport's or the decoder's error; nil for an API error with a body
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiclient: %s on %s: ", e.Op, e.Server)
	switch {
	case e.Status == 0:
		fmt.Fprintf(&b, "no answer: %v", e.Err)
		return b.String()
	default:
		fmt.Fprintf(&b, "%d %s", e.Status, http.StatusText(e.Status))
	}
	if e.Field != "" && !strings.HasPrefix(e.Message, e.Field+": ") { // the server's messages start with the field
		fmt.Fprintf(&b, ": %s", e.Field)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Unreachable reports whether err is an *Error for a call that got no
// answer at all: nothing listens at the address, or it did not answer in
// time.
func Unreachable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == 0
}

// StatusOf returns the HTTP status of err if it is an *Error with an
// answer, else 0.
func StatusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// call sends method path (escaped, as url.PathEscape does its parts, and
// with its query if any) with in (if not nil) as its JSON body, and
// decodes a 2xx answer into out (if not nil). okStatus lists other
// statuses whose body is an answer rather than an error (the 503 of
// /readyz). It returns the answer's body as the server sent it.
func (c *Client) call(ctx context.Context, method, path string, in, out any, okStatus ...int) (int, []byte, error) {
	fail := func(status int, err error) (int, []byte, error) {
		return status, nil, &Error{Op: method + " " + path, Server: c.Server(), Status: status, Err: err}
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fail(0, err)
		}
		body = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	u := *c.base
	escaped, query, _ := strings.Cut(path, "?")
	unescaped, err := url.PathUnescape(escaped)
	if err != nil {
		return fail(0, err)
	}
	u.RawPath = u.EscapedPath() + escaped
	u.Path += unescaped
	u.RawQuery = query
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return fail(0, err)
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" && method != http.MethodGet && method != http.MethodHead {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error // repeats the method and URL the Error has
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %v: %w", c.timeout, err)
		}
		return fail(0, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err == nil && len(raw) > maxAnswerBytes {
		err = fmt.Errorf("the answer is over %d bytes", maxAnswerBytes)
	}
	if err != nil {
		return fail(resp.StatusCode, fmt.Errorf("read the answer: %w", err))
	}
	if resp.StatusCode/100 != 2 && !contains(okStatus, resp.StatusCode) {
		e := &Error{Op: method + " " + path, Server: c.Server(), Status: resp.StatusCode}
		var body wire.Error
		if json.Unmarshal(raw, &body) == nil && body.Error.Message != "" {
			e.Field, e.Message = body.Error.Field, body.Error.Message
		} else {
			e.Err = fmt.Errorf("not a trawl API error body: %q", clip(raw))
		}
		return resp.StatusCode, nil, e
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fail(resp.StatusCode, fmt.Errorf("decode the answer: %w", err))
		}
	}
	return resp.StatusCode, raw, nil
}

func contains(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// clip shortens a body quoted in an error.
func clip(b []byte) string {
	const most = 120
	if len(b) > most {
		return string(b[:most]) + "..."
	}
	return string(b)
}

// Probe is the answer of /healthz ("ok") and /readyz ("ready" or
// "loading").
type Probe = wire.Status

// Health asks GET /healthz: the process serves HTTP.
func (c *Client) Health(ctx context.Context) (Probe, error) {
	var p Probe
	_, raw, err := c.call(ctx, http.MethodGet, "/healthz", nil, &p)
	p.Raw = raw
	return p, err
}

// Ready asks GET /readyz: whether the node's state is loaded. A server
// still loading answers 503, which is an answer here, not an error:
// ready is false and p.Status "loading".
func (c *Client) Ready(ctx context.Context) (ready bool, p Probe, err error) {
	code, raw, err := c.call(ctx, http.MethodGet, "/readyz", nil, &p, http.StatusServiceUnavailable)
	p.Raw = raw
	return err == nil && code == http.StatusOK, p, err
}
