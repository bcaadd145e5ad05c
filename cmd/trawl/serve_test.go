package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
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
// loopback: it says where it listens and where its API token is, /healthz
// answers, /readyz turns 200 once the node is open, and SIGTERM stops it
// cleanly (exit 0). It runs twice on one data directory: a crawl created
// through the API in the first run is there in the second.
func TestServeProbesAndStop(t *testing.T) {
	bin := trawlbin.Build(t)
	data := t.TempDir()
	for run := range 2 {
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
			t.Fatalf("run %d: output %q, want a line \"listening on ADDR\"; stderr:\n%s", run, head, stderr.String())
		}
		if !strings.Contains(head, filepath.Join(data, "api.token")) {
			t.Errorf("run %d: output %q does not say where the API token is", run, head)
		}
		rest := make(chan string, 1)
		go func() {
			var b strings.Builder
			for lines.Scan() {
				b.WriteString(lines.Text() + "\n")
			}
			rest <- b.String()
		}()
		get := func(path string) (int, string) {
			resp, err := http.Get("http://" + addr + path)
			if err != nil {
				return 0, err.Error()
			}
			defer resp.Body.Close()
			var body struct{ Status string }
			json.NewDecoder(resp.Body).Decode(&body)
			return resp.StatusCode, body.Status
		}
		if code, st := get("/healthz"); code != 200 || st != "ok" {
			t.Errorf("run %d: /healthz = %d %q, want 200 ok", run, code, st)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			code, st := get("/readyz")
			if code == 200 && st == "ready" {
				break
			}
			if code != 503 || time.Now().After(deadline) {
				t.Fatalf("run %d: /readyz = %d %q, want 503 loading, then 200 ready", run, code, st)
			}
			time.Sleep(20 * time.Millisecond)
		}
		// A crawl created through the API in the first run is there in the
		// second: the restart resumed it. (Its seed is a closed loopback
		// port: nothing leaves the machine.)
		token, err := os.ReadFile(filepath.Join(data, "api.token"))
		if err != nil {
			t.Fatal(err)
		}
		if run == 0 {
			body := `{"name": "kept", "seeds": ["http://127.0.0.1:9/"], "limits": {"max_pages": 1}}`
			req, _ := http.NewRequest("POST", "http://"+addr+"/v1/crawls", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != 202 {
				t.Fatalf("run 0: POST /v1/crawls = %v, %v; want 202", resp, err)
			}
			resp.Body.Close()
		}
		resp, err := http.Get("http://" + addr + "/v1/crawls")
		if err != nil {
			t.Fatal(err)
		}
		var list struct{ Crawls []struct{ Name string } }
		json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		if len(list.Crawls) != 1 || list.Crawls[0].Name != "kept" {
			t.Errorf("run %d: GET /v1/crawls = %+v, want the crawl \"kept\"", run, list)
		}
		if resp, err := http.Get("http://" + addr + "/metrics"); err != nil {
			t.Error(err)
		} else {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(b), `trawl_pages_fetched_total{crawl="1"}`) {
				t.Errorf("run %d: GET /metrics = %d, want 200 with the crawl's pages counter", run, resp.StatusCode)
			}
		}
		if resp, err := http.Get("http://" + addr + "/"); err != nil {
			t.Error(err)
		} else {
			resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
				t.Errorf("run %d: GET / = %d %q, want the dashboard's page", run, resp.StatusCode, resp.Header.Get("Content-Type"))
			}
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("run %d: trawl serve after SIGTERM: %v; stderr:\n%s", run, err, stderr.String())
		}
		r := <-rest
		if !strings.Contains(r, "ready:") || !strings.Contains(r, "stopped") {
			t.Errorf("run %d: output after the address %q, want a ready line and \"stopped\"", run, r)
		}
		if want := "dashboard: http://" + addr + "/#token=" + strings.TrimSpace(string(token)) + "\n"; !strings.Contains(r, want) {
			t.Errorf("run %d: output after the address %q, want %q", run, r, want)
		}
	}
	if _, err := os.Stat(filepath.Join(data, "state")); err != nil {
		t.Errorf("no state directory after serving: %v", err)
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
		got, err := isLoopbackAddr(c.addr)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("isLoopbackAddr(%q) = %v, %v; want %v, error %v", c.addr, got, err, c.want, c.err)
		}
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
		if got := dashboardURL(c.addr, c.token); got != c.want {
			t.Errorf("dashboardURL(%v, %q) = %q, want %q", c.addr, c.token, got, c.want)
		}
	}
}
