package testwebcmd

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
)

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestServe(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreTopFunction("os/signal.signal_recv"), goleak.IgnoreTopFunction("os/signal.loop"))
	dir := t.TempDir()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main(Options{Web: testweb.Options{Seed: 3, Hosts: 6}, Out: dir, For: 2 * time.Second}, &stdout, &stderr)
	}()

	seedsPath := filepath.Join(dir, "seeds.txt")
	var seeds []byte
	for deadline := time.Now().Add(5 * time.Second); ; {
		if strings.Contains(stdout.String(), "serving") {
			var err error
			if seeds, err = os.ReadFile(seedsPath); err != nil {
				t.Fatal(err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("testweb did not start; stdout %q, stderr %q", stdout.String(), stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	hostsFile, err := os.ReadFile(filepath.Join(dir, "hosts"))
	if err != nil {
		t.Fatal(err)
	}
	addr := map[string]string{}
	for _, line := range strings.Split(string(hostsFile), "\n") {
		if f := strings.Fields(line); len(f) == 2 && !strings.HasPrefix(line, "#") {
			addr[f[1]] = f[0]
		}
	}
	if len(addr) != 6 {
		t.Fatalf("hosts file has %d hosts, want 6:\n%s", len(addr), hostsFile)
	}
	seed := strings.Fields(string(seeds))[0]
	if !strings.Contains(stdout.String(), "seed "+seed) || !strings.Contains(stdout.String(), "wrote "+seedsPath) {
		t.Errorf("stdout %q does not show the seed %s and the files", stdout.String(), seed)
	}

	// The seed is served at the address the hosts file gives.
	tr := &http.Transport{DialContext: func(ctx context.Context, network, a string) (net.Conn, error) {
		host, port, _ := net.SplitHostPort(a)
		var d net.Dialer
		return d.DialContext(ctx, network, net.JoinHostPort(addr[host], port))
	}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get(seed)
	if err != nil {
		t.Fatalf("GET %s: %v", seed, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.HasPrefix(body, []byte("<!DOCTYPE html>")) {
		t.Errorf("GET %s = %d %.40q, want 200 and a page", seed, resp.StatusCode, body)
	}
	tr.CloseIdleConnections()

	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("Main = %d, want 0; stderr %q", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Main did not stop after --for 2s")
	}
	if !strings.Contains(stdout.String(), "stopped after 1 requests") {
		t.Errorf("stdout %q, want it to report the one request served", stdout.String())
	}
}

func TestTestwebBadOptions(t *testing.T) {
	for _, o := range []Options{{Web: testweb.Options{Hosts: -4}}, {For: -time.Second}} {
		var stdout, stderr bytes.Buffer
		if code := Main(o, &stdout, &stderr); code != 2 || stderr.Len() == 0 {
			t.Errorf("Main(%+v) = %d, stderr %q; want 2 and a message", o, code, stderr.String())
		}
	}
}
