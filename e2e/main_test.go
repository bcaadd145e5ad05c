// Package e2e runs the trawl binary as a user does, as a black box: the
// crash rig (SIGKILL and full disks mid-crawl), the continuous crawl
// across crashes, the fleet of `trawl serve` processes, trawl serve end
// to end, and the API clients against a running server. The binary is
// built once per test run (package trawlbin); the synthetic web is
// served in the test process, so its request log spans every run.
package e2e

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"

	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/internal/testkit/trawlbin"
)

func TestMain(m *testing.M) { os.Exit(trawlbin.Main(m)) }

// trawl runs the trawl binary with args, in the environment set for t
// (environ), and returns its exit status and output.
func trawl(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(trawlbin.Build(t), args...)
	cmd.Env = environ(t)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("trawl %q: %v", args, err)
	}
	return code, out.String(), errb.String()
}

// childEnv holds, by test, the variables (KEY=value) that the trawl
// processes a test runs get on top of the test process's environment:
// what t.Setenv would set, which a parallel test may not.
var childEnv sync.Map // *testing.T -> []string

// environ is the environment of the trawl processes t runs: the test
// process's, then the variables set for t.
func environ(t *testing.T) []string {
	env, _ := childEnv.Load(t)
	set, _ := env.([]string)
	return append(os.Environ(), set...)
}

// setEnv sets KEY=value pairs for the trawl processes t runs from now on
// (trawl), until the test ends; a later pair for a key wins.
func setEnv(t *testing.T, kv ...string) {
	t.Helper()
	old, seen := childEnv.Load(t)
	if !seen {
		old = []string(nil)
		t.Cleanup(func() { childEnv.Delete(t) })
	}
	childEnv.Store(t, append(slices.Clone(old.([]string)), kv...))
}

// startClientsServer runs `trawl serve` on a loopback port over a node
// crawling a small synthetic web, with the token in DATA/api.token as
// trawl serve writes it, for the clients' tests: for the trawl processes
// the test runs (setEnv), the token and config variables are cleared and
// TRAWL_SERVER names the server. It returns the API's URL and the data
// directory, and stops the server (checking its clean exit) at the end of
// the test.
func startClientsServer(t *testing.T) (server, data string, web *testweb.Server) {
	t.Helper()
	setEnv(t, "TRAWL_TOKEN=", "TRAWL_TOKEN_FILE=", "TRAWL_DATA=", "TRAWL_CONFIG=")
	web, err := testweb.Serve(testweb.Generate(testweb.Options{Seed: 4, Hosts: 5, Latency: -1}), testweb.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { web.Close() })
	files, err := testweb.WriteFiles(t.TempDir(), web)
	if err != nil {
		t.Fatal(err)
	}
	data = t.TempDir()
	s := startServe(t, trawlbin.Build(t), data, "--min-delay", "30ms", "--concurrency", "4",
		"--allow-net", "127.0.0.0/8", "--hosts", files[0])
	t.Cleanup(func() { s.stop() })
	server = "http://" + s.addr
	setEnv(t, "TRAWL_SERVER="+server)
	return server, data, web
}

// closedServer is an http URL where nothing listens.
func closedServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + ln.Addr().String()
	ln.Close()
	return u
}
