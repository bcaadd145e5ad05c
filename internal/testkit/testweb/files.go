package testweb

import (
	"bufio"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// WriteFiles writes dir/hosts (one "IP NAME" line per host, the
// /etc/hosts format) and dir/seeds.txt (one URL per line), so that
// another process can crawl the web srv serves, and returns their paths.
// The hosts file is written first: once seeds.txt holds a line, both
// are whole.
func WriteFiles(dir string, srv *Server) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("testweb: create %s: %w", dir, err)
	}
	var hosts strings.Builder
	fmt.Fprintf(&hosts, "# trawl testweb, port %d, written %s\n", srv.Port(), time.Now().UTC().Format(time.RFC3339))
	for _, h := range srv.Web().Hosts() {
		fmt.Fprintf(&hosts, "%s %s\n", h.IP, h.Name)
	}
	files := []struct{ name, text string }{
		{"hosts", hosts.String()},
		{"seeds.txt", strings.Join(srv.Seeds(), "\n") + "\n"},
	}
	var paths []string
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, []byte(f.text), 0o644); err != nil {
			return nil, fmt.Errorf("testweb: write %s: %w", p, err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// ReadSeeds reads the seeds file WriteFiles wrote in dir: its lines that
// are neither empty nor # comments.
func ReadSeeds(dir string) ([]string, error) {
	var seeds []string
	err := scanFile(filepath.Join(dir, "seeds.txt"), func(_ int, line string) error {
		seeds = append(seeds, line)
		return nil
	})
	return seeds, err
}

// ReadHosts reads the hosts file WriteFiles wrote in dir: the addresses
// of each host name.
func ReadHosts(dir string) (map[string][]netip.Addr, error) {
	path := filepath.Join(dir, "hosts")
	m := make(map[string][]netip.Addr)
	var errs []error
	err := scanFile(path, func(n int, line string) error {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			errs = append(errs, fmt.Errorf("%s: line %d: want ADDRESS NAME, got %q", path, n, line))
			return nil
		}
		a, err := netip.ParseAddr(fields[0])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: line %d: %w", path, n, err))
			return nil
		}
		for _, name := range fields[1:] {
			name = strings.ToLower(name)
			m[name] = append(m[name], a)
		}
		return nil
	})
	return m, errors.Join(append([]error{err}, errs...)...)
}

// scanFile calls fn with each line of path, trimmed, that is neither
// empty nor a # comment, and its 1-based number.
func scanFile(path string, fn func(n int, line string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := fn(n, line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}
