// Package benchweb serves the synthetic web (package testweb) from a
// child `trawl testweb` process for the benchmarks, so that the CPU they
// measure in their own process is the crawler's alone. Start returns once
// the child has written its seeds and hosts files; the child exits on
// Stop or, whatever happens to the bench, after Options.Lifetime.
package benchweb

import (
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
)

// Options say which web to serve and how.
type Options struct {
	Exe      string // the trawl binary
	Dir      string // the web's files are written in Dir/web
	Seed     int64
	Hosts    int
	Latency  time.Duration // each host's latency, fixed
	BigPages int           // pages of each big host (0: testweb's default)
	Lifetime time.Duration // the child exits after this long
	Stderr   io.Writer     // the child's stderr
	Extra    []string      // more `trawl testweb` flags
}

// Web is a running child `trawl testweb`.
type Web struct {
	Cmd       *exec.Cmd
	Seeds     []string
	HostsFile string                  // the /etc/hosts-style file the child wrote
	Hosts     map[string][]netip.Addr // HostsFile's contents
}

// Stop stops the child and waits for it; it may be called again.
func (w *Web) Stop() {
	if w.Cmd.ProcessState == nil {
		w.Cmd.Process.Signal(syscall.SIGTERM)
		w.Cmd.Wait()
	}
}

// Start starts the child and waits (up to 60 s) for its seeds.
func Start(o Options) (*Web, error) {
	lat := strconv.Quote(o.Latency.String())
	webDir := filepath.Join(o.Dir, "web")
	cmd := exec.Command(o.Exe, "testweb", "--seed", strconv.FormatInt(o.Seed, 10),
		"--hosts", strconv.Itoa(o.Hosts), "--latency", lat[1:len(lat)-1], "--max-latency", lat[1:len(lat)-1],
		"--big-pages", strconv.Itoa(o.BigPages), "--out", webDir, "--for", o.Lifetime.String())
	cmd.Args = append(cmd.Args, o.Extra...)
	cmd.Stdout, cmd.Stderr = io.Discard, o.Stderr
	cmd.Env = append(os.Environ(), "TRAWL_CONFIG=") // no config file of the user's
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start synthetic web: %w", err)
	}
	w := &Web{Cmd: cmd, HostsFile: filepath.Join(webDir, "hosts")}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var err error
		if w.Seeds, err = testweb.ReadSeeds(webDir); err == nil && len(w.Seeds) > 0 {
			if _, err := os.Stat(w.HostsFile); err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			w.Stop()
			return nil, fmt.Errorf("synthetic web did not start: no %s after 60s", filepath.Join(webDir, "seeds.txt"))
		}
	}
	var err error
	if w.Hosts, err = testweb.ReadHosts(webDir); err != nil {
		w.Stop()
		return nil, err
	}
	return w, nil
}
