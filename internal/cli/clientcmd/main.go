// Package clientcmd is the API's clients: `trawl crawls`, `trawl hosts`,
// `trawl node` (and the opening and failing of `trawl status`). Main opens
// a client of package apiclient as Options say, finding the token where
// the README says, runs one subcommand's Run and turns its error into the
// exit status and the message on stderr; each Run makes its calls and
// prints the answer, as text or as the API's JSON as sent.
//
// A Run's bad argument is a UsageError (exit 2); any other error is the
// API's (exit 1), said with what to do about it. Nothing here reads flags
// or keeps global state.
package clientcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/trawl-crawler/trawl/api/wire"
	"github.com/trawl-crawler/trawl/internal/cli/apiclient"
	"github.com/trawl-crawler/trawl/node"
)

// Options say how to reach the server and how to answer: the flags every
// client subcommand takes.
type Options struct {
	Server    string // the API's base URL
	TokenFile string // a file holding the token; "" none
	// TokenFileFromConfig says TokenFile came from the config file:
	// TRAWL_TOKEN then wins over it.
	TokenFileFromConfig bool
	// Data is the server's data directory, whose wire.TokenFile is the token
	// if none is given otherwise; "" means ./trawl-data for a Server on
	// loopback.
	Data    string
	Timeout time.Duration // bounds each call; 0 means apiclient.DefaultTimeout
	JSON    bool          // print the API's JSON answer instead of text
	// Getenv reads TRAWL_TOKEN. Nil means os.Getenv.
	Getenv func(string) string
}

// Run is one subcommand: its calls with c, for its arguments (flags
// removed), its answer written to w.
type Run func(ctx context.Context, c *apiclient.Client, o Options, args []string, w io.Writer) error

// UsageError is a bad argument a Run found: exit status 2.
type UsageError struct{ error }

func (e UsageError) Unwrap() error { return e.error }

// Main opens a client as o says and runs run with args; cmd is the
// subcommand's path ("crawls list"), for messages. It returns the exit
// status: 0 done, 1 the server refused or could not be reached, 2 bad
// options or arguments.
func Main(ctx context.Context, o Options, cmd string, run Run, args []string, stdout, stderr io.Writer) int {
	c, origin, err := Open(o)
	if err != nil {
		fmt.Fprintf(stderr, "trawl %s: %v\n", cmd, err)
		return 2
	}
	if err := run(ctx, c, o, args, stdout); err != nil {
		var ue UsageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "trawl %s: %v\n", cmd, ue.error)
			return 2
		}
		return Fail(stderr, cmd, o.Server, err, origin)
	}
	return 0
}

// Open returns a client for o, and where its token came from ("" if
// none), for messages. Its errors are usage errors.
func Open(o Options) (*apiclient.Client, string, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	token, origin, err := o.token(getenv)
	if err != nil {
		return nil, "", err
	}
	cl, err := apiclient.New(apiclient.Options{Server: o.Server, Token: token, Timeout: o.Timeout})
	if err != nil {
		return nil, "", errors.New(strings.TrimPrefix(err.Error(), "apiclient: ") + " (--server, env TRAWL_SERVER)")
	}
	return cl, origin, nil
}

// token finds the API token, the first of: TokenFile unless it came from
// the config file; TRAWL_TOKEN; TokenFile from the config file;
// Data/api.token; ./trawl-data/api.token for a server on loopback. It
// says where from. A token file that was named but cannot be read is an
// error; a missing Data/api.token is no token.
func (o Options) token(getenv func(string) string) (token, origin string, err error) {
	readFile := func(path, from string) (string, string, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", "", fmt.Errorf("token: %w (%s)", err, from)
		}
		t := strings.TrimSpace(string(b))
		if t == "" {
			return "", "", fmt.Errorf("token: %s is empty (%s)", path, from)
		}
		return t, path, nil
	}
	if o.TokenFile != "" && !o.TokenFileFromConfig {
		return readFile(o.TokenFile, "--token-file or TRAWL_TOKEN_FILE")
	}
	if t := strings.TrimSpace(getenv("TRAWL_TOKEN")); t != "" {
		return t, "TRAWL_TOKEN", nil
	}
	if o.TokenFile != "" {
		return readFile(o.TokenFile, "token-file in the config file")
	}
	dir := o.Data
	if dir == "" {
		if !loopbackURL(o.Server) {
			return "", "", nil
		}
		dir = node.DefaultDataDir
	}
	path := filepath.Join(dir, wire.TokenFile)
	if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) != "" {
		return strings.TrimSpace(string(b)), path, nil
	}
	return "", "", nil
}

// loopbackURL reports whether a server URL names a loopback host:
// 127.0.0.0/8, ::1 or "localhost" (another name may resolve anywhere).
func loopbackURL(server string) bool {
	u, err := url.Parse(server)
	if err != nil || u.Host == "" {
		return false
	}
	if u.Hostname() == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(u.Hostname())
	return err == nil && ip.IsLoopback()
}

// Fail says on stderr why a call to server failed, with what to do about
// it, and returns exit status 1. origin is where the token came from, ""
// if none was given.
func Fail(stderr io.Writer, cmd, server string, err error, origin string) int {
	msg := strings.TrimPrefix(err.Error(), "apiclient: ")
	fmt.Fprintf(stderr, "trawl %s: %s\n", cmd, msg)
	switch {
	case apiclient.Unreachable(err):
		fmt.Fprintf(stderr, "  no trawl server answers at %s: start one with 'trawl serve', or point --server (env TRAWL_SERVER) at yours\n", server)
	case apiclient.StatusOf(err) == 401 && origin == "":
		fmt.Fprintln(stderr, "  no token was given: use --token-file FILE, TRAWL_TOKEN_FILE or TRAWL_TOKEN, or --data with the server's data directory (its api.token)")
	case apiclient.StatusOf(err) == 401:
		fmt.Fprintf(stderr, "  the server refused the token from %s\n", origin)
	}
	return 1
}

// crawlID parses a crawl id argument.
func crawlID(arg string) (uint32, error) {
	id, err := strconv.ParseUint(arg, 10, 32)
	if err != nil || id == 0 {
		return 0, fmt.Errorf("%q is not a crawl id (a positive integer, as trawl crawls list shows)", arg)
	}
	return uint32(id), nil
}

// idArg parses the first argument, a crawl id.
func idArg(args []string) (uint32, error) {
	id, err := crawlID(args[0])
	if err != nil {
		return 0, UsageError{err}
	}
	return id, nil
}

// answer prints raw, the API's answer as sent, if o asks for JSON, and
// reports whether it did.
func (o Options) answer(w io.Writer, raw []byte) bool {
	if o.JSON {
		PrintJSON(w, raw)
	}
	return o.JSON
}
