package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/trawl-crawler/trawl/internal/cli/apiclient"
	"github.com/trawl-crawler/trawl/internal/cli/config"
)

// The API's clients: `trawl status` (status.go), and the groups of
// clientCommand (crawls.go): `trawl crawls` (crawls.go), `trawl hosts`
// (hosts.go) and `trawl node` (node.go).

// DefaultServer is the API the clients talk to unless told otherwise:
// where `trawl serve` listens by default.
const DefaultServer = "http://" + DefaultListen

// clientEnv are the clients' environment variables. TRAWL_DATA is the
// server's, read only for its api.token; TRAWL_TOKEN (no flag) holds the
// token itself.
var clientEnv = map[string]string{"server": "TRAWL_SERVER", "token-file": "TRAWL_TOKEN_FILE", "data": "TRAWL_DATA"}

// clientFlags are the flags every client subcommand takes.
type clientFlags struct {
	server    string
	tokenFile string
	data      string
	timeout   time.Duration
	json      bool
}

func (c *clientFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.server, "server", DefaultServer, "URL of the trawl serve to talk to")
	fs.StringVar(&c.tokenFile, "token-file", "", "file holding the API token, which changes need (or the token itself in TRAWL_TOKEN)")
	fs.StringVar(&c.data, "data", "", "the server's data directory: its api.token is the token if none is given otherwise (default: ./trawl-data, for a --server on loopback)")
	fs.DurationVar(&c.timeout, "timeout", apiclient.DefaultTimeout, "give up a call to the server after this long")
	fs.BoolVar(&c.json, "json", false, "print the API's JSON answer instead of text")
}

// tokenHelp says where the clients find the token; every client's --help
// ends with it.
const tokenHelp = `
The token (changes need it; reads do not) is the first of: --token-file or
TRAWL_TOKEN_FILE; TRAWL_TOKEN; token-file in the config file; DATA/api.token
with DATA from --data, TRAWL_DATA or the config file; ./trawl-data/api.token
if --server is on loopback (where trawl serve writes it when run there
without a token).`

// clientExitHelp is the exit statuses of the clients but status.
const clientExitHelp = `
Exit status: 0 done, 1 the server refused or could not be reached, 2 a
usage error.`

// open returns a client for the flags (src says where each came from), and
// where its token came from ("" if none), for messages.
func (c *clientFlags) open(src map[string]config.Source) (*apiclient.Client, string, error) {
	token, origin, err := c.token(src, os.Getenv)
	if err != nil {
		return nil, "", err
	}
	cl, err := apiclient.New(apiclient.Options{Server: c.server, Token: token, Timeout: c.timeout})
	if err != nil {
		return nil, "", errors.New(strings.TrimPrefix(err.Error(), "apiclient: ") + " (--server, env TRAWL_SERVER)")
	}
	return cl, origin, nil
}

// token finds the API token as tokenHelp says, and says where from. A
// token file that was named but cannot be read is an error; a missing
// DATA/api.token is no token.
func (c *clientFlags) token(src map[string]config.Source, getenv func(string) string) (token, origin string, err error) {
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
	if c.tokenFile != "" && src["token-file"] != config.FromFile {
		return readFile(c.tokenFile, "--token-file or TRAWL_TOKEN_FILE")
	}
	if t := strings.TrimSpace(getenv("TRAWL_TOKEN")); t != "" {
		return t, "TRAWL_TOKEN", nil
	}
	if c.tokenFile != "" {
		return readFile(c.tokenFile, "token-file in the config file")
	}
	dir := c.data
	if dir == "" {
		if !loopbackURL(c.server) {
			return "", "", nil
		}
		dir = "./trawl-data"
	}
	path := filepath.Join(dir, TokenFile)
	if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) != "" {
		return strings.TrimSpace(string(b)), path, nil
	}
	return "", "", nil
}

// loopbackURL reports whether a server URL names a loopback host.
func loopbackURL(server string) bool {
	u, err := url.Parse(server)
	if err != nil || u.Host == "" {
		return false
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	ok, _ := isLoopbackAddr(net.JoinHostPort(u.Hostname(), port))
	return ok
}

// fail says on stderr why a call failed, with what to do about it, and
// returns exit status 1.
func (c *clientFlags) fail(stderr io.Writer, cmd string, err error, origin string) int {
	msg := strings.TrimPrefix(err.Error(), "apiclient: ")
	fmt.Fprintf(stderr, "trawl %s: %s\n", cmd, msg)
	switch {
	case apiclient.Unreachable(err):
		fmt.Fprintf(stderr, "  no trawl server answers at %s: start one with 'trawl serve', or point --server (env TRAWL_SERVER) at yours\n", c.server)
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
