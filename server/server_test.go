package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/api/wire"
	"github.com/trawl-crawler/trawl/cluster/fleet"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/node"
)

// lockedBuffer is a bytes.Buffer safe to write from Run while the test
// reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// started is a Run going on in the background.
type started struct {
	addr           string
	stdout, stderr *lockedBuffer
	stop           func() error // cancels Run's context and returns its error
}

// start runs Run with o on a loopback port of its own.
func start(t *testing.T, o Options) *started {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.Listener = ln
	s := &started{addr: ln.Addr().String(), stdout: new(lockedBuffer), stderr: new(lockedBuffer)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, o, s.stdout, s.stderr) }()
	var once sync.Once
	var runErr error
	s.stop = func() error {
		once.Do(func() { cancel(); runErr = <-done })
		return runErr
	}
	t.Cleanup(func() { s.stop() })
	return s
}

// get returns path's status and the "status" field of its JSON body.
func (s *started) get(path string) (int, string) {
	resp, err := http.Get("http://" + s.addr + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	var body struct{ Status string }
	json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body.Status
}

// waitReady waits for /readyz to say ready; before, it says 503.
func (s *started) waitReady(t *testing.T, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		code, st := s.get("/readyz")
		if code == 200 && st == "ready" {
			return
		}
		if code != 503 || time.Now().After(deadline) {
			t.Fatalf("/readyz = %d %q, want 503 loading, then 200 ready; stderr:\n%s", code, st, s.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRunProbesAndStop runs the server on loopback without a token: it
// says where the token it made is, where it listens and the dashboard's
// link with the token; /healthz answers, /readyz turns 200 once the node
// is open, and a cancelled context stops it cleanly. It runs twice on one
// data directory: a crawl created through the API in the first run is
// there in the second, with its metrics, and the token is the same.
func TestRunProbesAndStop(t *testing.T) {
	data := t.TempDir()
	var firstToken string
	for run := range 2 {
		s := start(t, Options{Node: node.Options{DataDir: data, AllowNets: loopback}})
		if code, st := s.get("/healthz"); code != 200 || st != "ok" {
			t.Errorf("run %d: /healthz = %d %q, want 200 ok", run, code, st)
		}
		s.waitReady(t, 30*time.Second)
		b, err := os.ReadFile(filepath.Join(data, wire.TokenFile))
		if err != nil {
			t.Fatal(err)
		}
		token := strings.TrimSpace(string(b))
		if run == 0 {
			firstToken = token
			// Its seed is a closed loopback port: nothing leaves the machine.
			body := `{"name": "kept", "seeds": ["http://127.0.0.1:9/"], "limits": {"max_pages": 1}}`
			req, _ := http.NewRequest("POST", "http://"+s.addr+"/v1/crawls", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != 202 {
				t.Fatalf("run 0: POST /v1/crawls = %v, %v; want 202", resp, err)
			}
			resp.Body.Close()
		} else if token != firstToken {
			t.Errorf("run 1: token %q, want the first run's %q", token, firstToken)
		}
		resp, err := http.Get("http://" + s.addr + "/v1/crawls")
		if err != nil {
			t.Fatal(err)
		}
		var list struct{ Crawls []struct{ Name string } }
		json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		if len(list.Crawls) != 1 || list.Crawls[0].Name != "kept" {
			t.Errorf("run %d: GET /v1/crawls = %+v, want the crawl \"kept\"", run, list)
		}
		if resp, err := http.Get("http://" + s.addr + "/metrics"); err != nil {
			t.Error(err)
		} else {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(b), `trawl_pages_fetched_total{crawl="1"}`) {
				t.Errorf("run %d: GET /metrics = %d, want 200 with the crawl's pages counter", run, resp.StatusCode)
			}
		}
		if resp, err := http.Get("http://" + s.addr + "/"); err != nil {
			t.Error(err)
		} else {
			resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
				t.Errorf("run %d: GET / = %d %q, want the dashboard's page", run, resp.StatusCode, resp.Header.Get("Content-Type"))
			}
		}
		if err := s.stop(); err != nil {
			t.Fatalf("run %d: Run after the context ended: %v; stderr:\n%s", run, err, s.stderr.String())
		}
		want := "API token in " + filepath.Join(data, wire.TokenFile) + "\n" +
			"listening on " + s.addr + "\n" +
			"dashboard: http://" + s.addr + "/#token=" + token + "\n" +
			"ready: 1 jobs, data in " + data + "\n" +
			"stopped\n"
		if run == 0 {
			want = strings.Replace(want, "ready: 1 jobs", "ready: 0 jobs", 1)
		}
		if got := s.stdout.String(); got != want {
			t.Errorf("run %d: stdout\n%s\nwant\n%s", run, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(data, "state")); err != nil {
		t.Errorf("no state directory after serving: %v", err)
	}
}

// TestRunWithToken: given a token, Run makes no token file, the API's
// changes need that token, and on loopback the dashboard's link carries
// it.
func TestRunWithToken(t *testing.T) {
	data := t.TempDir()
	s := start(t, Options{Node: node.Options{DataDir: data, AllowNets: loopback}, Token: "given"})
	s.waitReady(t, 30*time.Second)
	if _, err := os.Stat(filepath.Join(data, wire.TokenFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("token file with a token given: %v", err)
	}
	for _, c := range []struct {
		token string
		want  int
	}{{"wrong", 401}, {"given", 200}} {
		req, _ := http.NewRequest("POST", "http://"+s.addr+"/v1/node/pause", nil)
		req.Header.Set("Authorization", "Bearer "+c.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("POST /v1/node/pause with token %q = %d, want %d", c.token, resp.StatusCode, c.want)
		}
	}
	if want := "dashboard: http://" + s.addr + "/#token=given\n"; !strings.Contains(s.stdout.String(), want) {
		t.Errorf("stdout %q, want %q (on loopback the link carries the token)", s.stdout.String(), want)
	}
	if err := s.stop(); err != nil {
		t.Error(err)
	}
}

// TestRunNodeFails: a node that cannot open fails the run after the API
// was up, and the listener is closed again.
func TestRunNodeFails(t *testing.T) {
	var stdout, stderr bytes.Buffer
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	err = Run(context.Background(), Options{Listener: ln, Token: "t",
		Node: node.Options{DataDir: t.TempDir(), Concurrency: -1}}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "Concurrency") {
		t.Errorf("Run with a bad node option = %v, want the node's error", err)
	}
	if !strings.Contains(stdout.String(), "listening on") || strings.Contains(stdout.String(), "ready:") {
		t.Errorf("stdout %q: want the API up and the node never ready", stdout.String())
	}
	if _, err := http.Get("http://" + ln.Addr().String() + "/healthz"); err == nil {
		t.Error("the API still answers after the run failed")
	}
}

// TestValidate: the API beyond loopback needs a token; every bad field is
// named, the fleet's too, and Run refuses before binding anything.
func TestValidate(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want []string
	}{
		{Options{}, nil},
		{Options{Listen: "localhost:0"}, nil},
		{Options{Listen: "0.0.0.0:0", Token: "t"}, nil},
		{Options{Listen: "0.0.0.0:0"}, []string{"Token"}},
		{Options{Listen: ":0"}, []string{"Token"}},
		{Options{Listen: "example.test:0"}, []string{"Token"}},
		{Options{Listen: "127.0.0.1"}, []string{"Listen", "Token"}},
		{Options{Fleet: &fleet.JoinOptions{}}, []string{"fleet: Name: empty", "no NATS"}},
	} {
		err := c.o.Validate()
		if len(c.want) == 0 && err != nil {
			t.Errorf("Validate(%+v) = %v, want nil", c.o, err)
		}
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("Validate(%+v) = %v, want it to name %s", c.o, err, w)
			}
		}
	}
	data := t.TempDir()
	var stdout bytes.Buffer
	err := Run(context.Background(), Options{Node: node.Options{DataDir: data}, Listen: "0.0.0.0:0"}, &stdout, io.Discard)
	if err == nil || stdout.Len() > 0 {
		t.Errorf("Run beyond loopback without a token = %v, stdout %q; want an error and nothing done", err, stdout.String())
	}
	if entries, _ := os.ReadDir(data); len(entries) > 0 {
		t.Errorf("Run refused, yet wrote %d entries in the data directory", len(entries))
	}
}

func TestIsLoopbackAddr(t *testing.T) {
	for _, c := range []struct {
		addr string
		want bool
		err  bool
	}{
		{"127.0.0.1:8420", true, false}, {"127.9.9.9:1", true, false}, {"[::1]:80", true, false},
		{"localhost:80", true, false}, {"0.0.0.0:80", false, false}, {":80", false, false},
		{"10.0.0.5:80", false, false}, {"[::]:80", false, false}, {"example.test:80", false, false},
		{"127.0.0.1", false, true},
	} {
		got, err := IsLoopbackAddr(c.addr)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("IsLoopbackAddr(%q) = %v, %v; want %v, error %v", c.addr, got, err, c.want, c.err)
		}
	}
}

// TestDashboardURL: the token rides in the fragment on loopback only.
func TestDashboardURL(t *testing.T) {
	for _, c := range []struct {
		addr  net.Addr
		token string
		want  string
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8420}, "abc", "http://127.0.0.1:8420/#token=abc"},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 8420}, "abc", "http://[::1]:8420/#token=abc"},
		{&net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 8420}, "abc", "http://10.0.0.5:8420/"},
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8420}, "", "http://127.0.0.1:8420/"},
	} {
		if got := DashboardURL(c.addr, c.token); got != c.want {
			t.Errorf("DashboardURL(%v, %q) = %q, want %q", c.addr, c.token, got, c.want)
		}
	}
}

// TestLocalToken: made once (64 hex digits, mode 0600), then read back.
func TestLocalToken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", wire.TokenFile)
	tok, err := LocalToken(path)
	if err != nil || len(tok) != 64 {
		t.Fatalf("LocalToken = %q, %v; want 64 hex digits", tok, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file: %v, %v; want mode 0600", fi, err)
	}
	if again, err := LocalToken(path); again != tok || err != nil {
		t.Errorf("LocalToken again = %q, %v; want %q", again, err, tok)
	}
}

// TestRunFleetOfOne: with Fleet, the node joins a fleet (here of one, its
// NATS server embedded): the API acts fleet-wide (GET /v1/nodes lists the
// member owning every partition, with its API address), /metrics has the
// fleet's figures, and the run stops cleanly, leaving the fleet.
func TestRunFleetOfOne(t *testing.T) {
	if testing.Short() {
		t.Skip("a JetStream server and a fleet's start-up")
	}
	s := start(t, Options{Node: node.Options{DataDir: t.TempDir(), AllowNets: loopback}, Token: "t",
		Fleet: &fleet.JoinOptions{Name: "n1", Embedded: true, Heartbeat: 250 * time.Millisecond, MemberTTL: time.Second}})
	s.waitReady(t, 60*time.Second)
	type nodes struct {
		Fleet bool
		Self  string
		Nodes []struct {
			Name string
			Info struct{ API string }
			Owns []int
		}
	}
	var v nodes
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get("http://" + s.addr + "/v1/nodes")
		if err != nil {
			t.Fatal(err)
		}
		v = nodes{}
		json.NewDecoder(resp.Body).Decode(&v)
		resp.Body.Close()
		if len(v.Nodes) == 1 && len(v.Nodes[0].Owns) == partition.Count {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /v1/nodes = %+v after 30 s, want n1 owning %d partitions", v, partition.Count)
		}
	}
	if !v.Fleet || v.Nodes[0].Name != "n1" || v.Nodes[0].Info.API != "http://"+s.addr {
		t.Errorf("GET /v1/nodes = %+v, want the fleet, n1 at http://%s", v, s.addr)
	}
	resp, err := http.Get("http://" + s.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "trawl_fleet_members 1") {
		t.Errorf("/metrics lacks trawl_fleet_members 1")
	}
	if err := s.stop(); err != nil {
		t.Errorf("Run: %v; stderr:\n%s", err, s.stderr.String())
	}
	out := s.stdout.String()
	for _, want := range []string{"nats: server n1", "fleet: joined as n1\n", "ready: 0 jobs", "stopped\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(s.stderr.String(), "member=n1") {
		t.Errorf("stderr: the fleet's log lacks the member's name:\n%s", s.stderr.String())
	}
}
