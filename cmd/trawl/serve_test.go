package main

import (
	"bufio"
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/testkit/trawlbin"
)

// TestServeProbesAndStop runs `trawl serve` as a separate process on
// loopback (the assembly itself is package server's, tested there): it
// says where it listens and where its API token is, /readyz turns 200,
// and SIGTERM stops it cleanly (exit 0, "stopped").
func TestServeProbesAndStop(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the trawl binary on a crawl: the full suite runs it")
	}
	bin := trawlbin.Build(t)
	data := t.TempDir()
	cmd := exec.Command(bin, "serve", "--data", data, "--listen", "127.0.0.1:0", "--allow-net", "127.0.0.0/8")
	cmd.Env = append(os.Environ(), "TRAWL_TOKEN=", "TRAWL_TOKEN_FILE=", "TRAWL_LISTEN=")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	addr, head := "", ""
	for addr == "" && lines.Scan() {
		head += lines.Text() + "\n"
		if a, ok := strings.CutPrefix(lines.Text(), "listening on "); ok {
			addr = a
		}
	}
	if addr == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("output %q, want a line \"listening on ADDR\"; stderr:\n%s", head, stderr.String())
	}
	if !strings.Contains(head, filepath.Join(data, "api.token")) {
		t.Errorf("output %q does not say where the API token is", head)
	}
	rest := make(chan string, 1)
	go func() {
		var b strings.Builder
		for lines.Scan() {
			b.WriteString(lines.Text() + "\n")
		}
		rest <- b.String()
	}()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz not 200 after 30 s: %v", err)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("trawl serve after SIGTERM: %v; stderr:\n%s", err, stderr.String())
	}
	if r := <-rest; !strings.Contains(r, "dashboard: http://"+addr+"/#token=") || !strings.Contains(r, "ready:") || !strings.HasSuffix(r, "stopped\n") {
		t.Errorf("output after the address %q, want the dashboard's link, a ready line and \"stopped\"", r)
	}
}

// TestServeRefusesOpenListenWithoutToken: beyond loopback, the API needs a
// token; the refusal names the address and how to give one, and binds
// nothing.
func TestServeRefusesOpenListenWithoutToken(t *testing.T) {
	t.Setenv("TRAWL_TOKEN", "")
	t.Setenv("TRAWL_TOKEN_FILE", "")
	for _, listen := range []string{"0.0.0.0:0", ":0", "[::]:0", "example.test:0"} {
		var out, errb bytes.Buffer
		code := run([]string{"serve", "--data", t.TempDir(), "--listen", listen}, &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), listen) || !strings.Contains(errb.String(), "token") {
			t.Errorf("serve --listen %s without a token: exit %d, stderr %q; want 2 and an error naming the address and the token", listen, code, errb.String())
		}
	}
	empty := filepath.Join(t.TempDir(), "token")
	os.WriteFile(empty, []byte(" \n"), 0o600)
	var out, errb bytes.Buffer
	if code := run([]string{"serve", "--listen", "127.0.0.1:0", "--token-file", empty}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "empty") {
		t.Errorf("serve with an empty token file: exit %d, stderr %q; want 2 saying it is empty", code, errb.String())
	}
}

func TestReadTokenPrecedence(t *testing.T) {
	dir := t.TempDir()
	flagFile, envFile := filepath.Join(dir, "flag"), filepath.Join(dir, "env")
	os.WriteFile(flagFile, []byte("from-flag\n"), 0o600)
	os.WriteFile(envFile, []byte("from-env-file"), 0o600)
	t.Setenv("TRAWL_TOKEN", "from-env")
	t.Setenv("TRAWL_TOKEN_FILE", envFile)
	for _, c := range []struct{ flag, want string }{{flagFile, "from-flag"}, {"", "from-env-file"}} {
		if got, err := readToken(c.flag); got != c.want || err != nil {
			t.Errorf("readToken(%q) = %q, %v; want %q", c.flag, got, err, c.want)
		}
	}
	t.Setenv("TRAWL_TOKEN_FILE", "")
	if got, _ := readToken(""); got != "from-env" {
		t.Errorf("readToken with TRAWL_TOKEN only = %q, want from-env", got)
	}
	if _, err := readToken(filepath.Join(dir, "missing")); err == nil {
		t.Error("readToken(missing file): no error")
	}
}

// TestServeFleetFlagsRefused: contradictory or bad fleet flags are usage
// errors (exit 2) naming the flag, before anything starts.
func TestServeFleetFlagsRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--nats", "nats://127.0.0.1:4222", "--nats-embedded"}, "choose one"},
		{[]string{"--nats-embedded", "--fleet-takeover-hold", "-1s"}, "--fleet-takeover-hold -1s: negative"},
		{[]string{"--nats-embedded", "--fleet-checkpoint-every", "0s"}, "--fleet-checkpoint-every 0s: must be positive"},
		{[]string{"--nats-embedded", "--fleet-heartbeat", "5s", "--fleet-member-ttl", "10s"}, "--fleet-member-ttl 10s"},
		{[]string{"--nats-embedded", "--nats-cluster-name", "crawl.prod"}, `--nats-cluster-name "crawl.prod": spaces, '.', '*' and '>' are not allowed`},
		{[]string{"--nats", "nats://127.0.0.1:4222", "--nats-cluster-name", "prod"}, "--nats-cluster-name need --nats-embedded"},
	} {
		var out, errb strings.Builder
		args := append([]string{"serve", "--listen", "127.0.0.1:0", "--data", t.TempDir()}, tc.args...)
		if code := run(args, &out, &errb); code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("trawl %s: exit %d, stderr %q; want 2 and %q", strings.Join(args, " "), code, errb.String(), tc.want)
		}
	}
}
