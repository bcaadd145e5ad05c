// Package nginxtest runs a real nginx for tests: a child process serving a
// directory of static files on a loopback port, with its configuration,
// pid file, temp paths and logs in the test's temp directory, killed when
// the test ends. nginx sends ETag and Last-Modified for static files and
// answers If-None-Match and If-Modified-Since, which is what the
// conditional GET tests need from a server trawl did not write. It is a
// test helper; a Server is safe for concurrent use.
//
// nginx must be installed (scripts/test.sh installs it for CI): a test
// that needs it fails, not skips, when it is missing.
package nginxtest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startTimeout bounds how long Start waits for nginx to accept
// connections.
const startTimeout = 10 * time.Second

// Server is a running nginx.
type Server struct {
	URL  string // "http://127.0.0.1:PORT", no trailing slash
	dir  string // the instance's directory: config, logs, temp paths
	cmd  *exec.Cmd
	exit chan error // receives the process's exit, once
}

// Binary returns the path of the nginx executable: nginx on PATH, else
// /usr/sbin/nginx (Debian's, often not on a non-root PATH).
func Binary() (string, error) {
	if p, err := exec.LookPath("nginx"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/sbin/nginx"); err == nil {
		return "/usr/sbin/nginx", nil
	}
	return "", errors.New("nginxtest: no nginx on PATH or at /usr/sbin/nginx: install it (apt-get install -y nginx-light; scripts/test.sh does)")
}

// config is the instance's nginx.conf. One process (no master, no
// daemon), so that killing it leaves nothing behind; every path it writes
// is under the instance's directory. The access log records, for each
// request, what nginx sent: status, bytes of the whole response and of
// the body, and the URI.
const config = `daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 64; }
http {
	types { text/html html; text/css css; application/javascript js; text/plain txt; }
	default_type application/octet-stream;
	map "$http_if_none_match$http_if_modified_since" $conditional { "" 0; default 1; }
	log_format sent '$status $bytes_sent $body_bytes_sent $conditional $uri';
	access_log %[1]s/access.log sent;
	client_body_temp_path %[1]s/tmp/body;
	proxy_temp_path %[1]s/tmp/proxy;
	fastcgi_temp_path %[1]s/tmp/fastcgi;
	uwsgi_temp_path %[1]s/tmp/uwsgi;
	scgi_temp_path %[1]s/tmp/scgi;
	sendfile off;
	gzip off;
	etag on;
	if_modified_since exact;
	server {
		listen 127.0.0.1:%[2]d;
		root %[3]s;
	}
}
`

// Start runs nginx serving root (a directory) on a free loopback port and
// waits until it accepts connections. The process is killed in
// t.Cleanup. A missing nginx or a failure to start fails t.
func Start(t testing.TB, root string) *Server {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Fatal(err)
	}
	root, err = filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	// The port is found free and then handed to nginx, so another process
	// may take it in between: try a few.
	var last error
	for range 5 {
		s, err := start(t, bin, root)
		if err == nil {
			return s
		}
		last = err
	}
	t.Fatalf("nginxtest: start: %v", last)
	return nil
}

func start(t testing.TB, bin, root string) (*Server, error) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, config, dir, port, root), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-p", dir+"/", "-c", conf, "-e", filepath.Join(dir, "error.log"))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("run %s: %w", bin, err)
	}
	s := &Server{URL: "http://127.0.0.1:" + strconv.Itoa(port), dir: dir, cmd: cmd, exit: make(chan error, 1)}
	go func() { s.exit <- cmd.Wait() }()
	deadline := time.Now().Add(startTimeout)
	for {
		c, err := net.DialTimeout("tcp", s.URL[len("http://"):], time.Second)
		if err == nil {
			c.Close()
			break
		}
		select {
		case werr := <-s.exit:
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			return nil, fmt.Errorf("nginx exited (%v): %s", werr, log)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.kill()
			return nil, fmt.Errorf("nginx did not accept connections on port %d within %v", port, startTimeout)
		}
	}
	t.Cleanup(s.kill)
	return s, nil
}

// kill ends the process and waits for it.
func (s *Server) kill() {
	_ = s.cmd.Process.Kill()
	<-s.exit
	s.exit <- nil // for a second kill
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Sent is one request as nginx's access log recorded it.
type Sent struct {
	Status    int
	Bytes     int64 // $bytes_sent: the whole response, head included
	BodyBytes int64 // $body_bytes_sent
	// Conditional reports a request with If-None-Match or
	// If-Modified-Since.
	Conditional bool
	URI         string
}

// Log returns the requests served so far, in order. nginx writes a
// request's log line after its response, so a request whose response the
// client has read in full is in it.
func (s *Server) Log() ([]Sent, error) {
	f, err := os.Open(filepath.Join(s.dir, "access.log"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("nginxtest: access log: %w", err)
	}
	defer f.Close()
	var out []Sent
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 5 {
			return nil, fmt.Errorf("nginxtest: access log line %q", sc.Text())
		}
		var e Sent
		var errs [3]error
		e.Status, errs[0] = strconv.Atoi(fs[0])
		e.Bytes, errs[1] = strconv.ParseInt(fs[1], 10, 64)
		e.BodyBytes, errs[2] = strconv.ParseInt(fs[2], 10, 64)
		if err := errors.Join(errs[:]...); err != nil {
			return nil, fmt.Errorf("nginxtest: access log line %q: %w", sc.Text(), err)
		}
		e.Conditional, e.URI = fs[3] == "1", fs[4]
		out = append(out, e)
	}
	return out, sc.Err()
}
