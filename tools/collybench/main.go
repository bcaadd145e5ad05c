// Command collybench compares trawl's CPU cost per page with colly's on the
// same synthetic web, measured from outside each process (the kernel's
// rusage of the child).
//
// It is its own Go module so that colly never becomes a dependency of
// trawl. Two subcommands:
//
//	collybench colly --seeds FILE --hosts FILE [--parallelism N]
//	    crawls the web with colly (links of a[href], within --domain,
//	    up to --max-depth) and prints one JSON object with the pages seen.
//	collybench compare --trawl PATH [--hosts N] [--runs N] [--web-flags FLAGS]
//	    starts `trawl testweb` (its own process), then crawls it with
//	    colly and with `trawl crawl` (gzipped WARC, durable completions,
//	    robots.txt, per-host gaps), alternating, and prints each run's
//	    pages, wall time, CPU-ms per page and peak RSS.
//
// Only loopback is crawled: names resolve through the web's hosts file,
// and any other address is refused by the dialer.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gocolly/colly/v2"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: collybench colly|compare [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "colly":
		err = runColly(os.Args[2:])
	case "compare":
		err = runCompare(os.Args[2:])
	default:
		err = fmt.Errorf("unknown subcommand %q (want colly or compare)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "collybench:", err)
		os.Exit(1)
	}
}

type collyResult struct {
	Pages    int64 `json:"pages"`
	Errors   int64 `json:"errors"`
	Bytes    int64 `json:"bytes"`
	Requests int64 `json:"requests"`
}

func runColly(args []string) error {
	fs := flag.NewFlagSet("colly", flag.ExitOnError)
	seedsFile := fs.String("seeds", "", "file of seed URLs")
	hostsFile := fs.String("hosts", "", "hosts file (IP NAME lines) of the synthetic web")
	parallelism := fs.Int("parallelism", 256, "requests in flight over all hosts")
	domain := fs.String("domain", "trawl.test", "crawl only this domain and its subdomains")
	maxDepth := fs.Int("max-depth", 20, "most links followed from a seed")
	logFile := fs.String("log", "", "write the URL of every response to this file")
	fs.Parse(args)
	seeds, err := readLines(*seedsFile)
	if err != nil {
		return err
	}
	names, err := readHosts(*hostsFile)
	if err != nil {
		return err
	}
	c := colly.NewCollector(
		colly.Async(true),
		colly.MaxDepth(*maxDepth),
		colly.URLFilters(regexp.MustCompile(`^https?://([^/]*\.)?`+regexp.QuoteMeta(*domain)+`(:\d+)?(/|$)`)),
	)
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: *parallelism}); err != nil {
		return err
	}
	c.WithTransport(&http.Transport{
		DialContext:         loopbackDialer(names),
		MaxIdleConns:        4096,
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     90 * time.Second,
	})
	var r collyResult
	c.OnRequest(func(*colly.Request) { atomic.AddInt64(&r.Requests, 1) })
	var logMu sync.Mutex
	var logW *bufio.Writer
	if *logFile != "" {
		f, err := os.Create(*logFile)
		if err != nil {
			return err
		}
		defer f.Close()
		logW = bufio.NewWriter(f)
		defer logW.Flush()
	}
	c.OnResponse(func(resp *colly.Response) {
		atomic.AddInt64(&r.Pages, 1)
		atomic.AddInt64(&r.Bytes, int64(len(resp.Body)))
		if logW != nil {
			logMu.Lock()
			fmt.Fprintln(logW, resp.Request.URL.String())
			logMu.Unlock()
		}
	})
	c.OnError(func(*colly.Response, error) { atomic.AddInt64(&r.Errors, 1) })
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		e.Request.Visit(e.Attr("href"))
	})
	for _, s := range seeds {
		c.Visit(s)
	}
	c.Wait()
	return json.NewEncoder(os.Stdout).Encode(r)
}

// loopbackDialer resolves names through the web's hosts file and refuses
// any address outside loopback.
func loopbackDialer(names map[string]string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		ip, ok := names[strings.ToLower(host)]
		if !ok {
			return nil, fmt.Errorf("%s is not in the synthetic web's hosts file", host)
		}
		if a := net.ParseIP(ip); a == nil || !a.IsLoopback() {
			return nil, fmt.Errorf("%s resolves to %s, not a loopback address", host, ip)
		}
		return d.DialContext(ctx, network, net.JoinHostPort(ip, port))
	}
}

type run struct {
	Crawler  string  `json:"crawler"`
	Pages    int64   `json:"pages"`
	Wall     float64 `json:"wall_s"`
	CPU      float64 `json:"cpu_s"`
	CPUMs    float64 `json:"cpu_ms_per_page"`
	Bytes    int64   `json:"bytes"` // response bodies fetched
	MaxRSS   int64   `json:"max_rss_bytes"`
	WARCSize int64   `json:"warc_bytes,omitempty"`
}

func runCompare(args []string) error {
	fs := flag.NewFlagSet("compare", flag.ExitOnError)
	trawl := fs.String("trawl", "", "path of the trawl binary to compare")
	hosts := fs.Int("hosts", 2000, "hosts in the synthetic web")
	seed := fs.Int64("seed", 1, "seed of the synthetic web")
	latency := fs.Duration("latency", 5*time.Millisecond, "per-host latency before the first byte")
	runs := fs.Int("runs", 1, "runs of each crawler, alternating")
	concurrency := fs.Int("concurrency", 256, "trawl's fetch workers and colly's parallelism")
	only := fs.String("only", "", "run only this crawler (colly or trawl)")
	jsonOut := fs.Bool("json", false, "print the runs as JSON lines")
	webBinFlag := fs.String("web-bin", "", "trawl binary that serves the web (default: --trawl)")
	webFlags := fs.String("web-flags", "", "more `trawl testweb` flags, space-separated, that shape the web (e.g. \"--gzip --links 30\")")
	fs.Parse(args)
	if *trawl == "" && *only != "colly" {
		return errors.New("--trawl PATH is required")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "collybench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	webBin := *trawl
	if *webBinFlag != "" {
		webBin = *webBinFlag
	}
	if webBin == "" {
		return errors.New("--trawl PATH is required (it serves the synthetic web)")
	}
	lat := *latency
	webArgs := append([]string{"testweb", "--seed", strconv.FormatInt(*seed, 10), "--hosts", strconv.Itoa(*hosts),
		"--latency", lat.String(), "--max-latency", lat.String(), "--out", filepath.Join(dir, "web"), "--for", "2h"},
		strings.Fields(*webFlags)...)
	web := exec.Command(webBin, webArgs...)
	web.Stderr = os.Stderr
	if err := web.Start(); err != nil {
		return err
	}
	defer func() { web.Process.Signal(syscall.SIGTERM); web.Wait() }()
	seedsFile, hostsFile := filepath.Join(dir, "web", "seeds.txt"), filepath.Join(dir, "web", "hosts")
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if s, err := readLines(seedsFile); err == nil && len(s) > 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the synthetic web did not start: no %s after 60s", seedsFile)
		}
	}
	var all []run
	for i := 0; i < *runs; i++ {
		if *only != "trawl" {
			r, err := measure("colly", self, "colly", "--seeds", seedsFile, "--hosts", hostsFile,
				"--parallelism", strconv.Itoa(*concurrency))
			if err != nil {
				return err
			}
			all = append(all, r)
			report(r, *jsonOut)
		}
		if *only != "colly" {
			data := filepath.Join(dir, fmt.Sprintf("trawl-%d", i))
			r, err := measure("trawl", *trawl, "crawl", "--data", data, "--seeds", seedsFile, "--hosts", hostsFile,
				"--domain", "trawl.test", "--allow-net", "127.0.0.0/8", "--min-delay", "0",
				"--robots-give-up", "4s", "--concurrency", strconv.Itoa(*concurrency), "--progress", "1h")
			if err != nil {
				return err
			}
			if r.Pages, r.Bytes, err = trawlPages(filepath.Join(data, "summary.json")); err != nil {
				return err
			}
			r.CPUMs = r.CPU * 1000 / float64(max(r.Pages, 1))
			r.WARCSize = dirSize(filepath.Join(data, "warc"))
			all = append(all, r)
			report(r, *jsonOut)
			os.RemoveAll(data)
		}
	}
	if !*jsonOut {
		summarise(all)
	}
	return nil
}

// measure runs one crawler as a child process and takes its CPU time and
// peak RSS from the kernel's accounting of that child alone.
func measure(name, bin string, args ...string) (run, error) {
	cmd := exec.Command(bin, args...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return run{}, fmt.Errorf("%s: %w\n%s", name, err, out.String())
	}
	r := run{Crawler: name, Wall: time.Since(start).Seconds()}
	ps := cmd.ProcessState
	r.CPU = (ps.UserTime() + ps.SystemTime()).Seconds()
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		r.MaxRSS = ru.Maxrss * 1024
	}
	if name == "colly" {
		var cr collyResult
		if err := json.Unmarshal([]byte(lastLine(out.String())), &cr); err != nil {
			return r, fmt.Errorf("colly's result: %w", err)
		}
		r.Pages, r.Bytes = cr.Pages, cr.Bytes
		r.CPUMs = r.CPU * 1000 / float64(max(r.Pages, 1))
	}
	return r, nil
}

func report(r run, asJSON bool) {
	if asJSON {
		json.NewEncoder(os.Stdout).Encode(r)
		return
	}
	fmt.Printf("%-6s %6d pages of %4.1f KB  %6.2f s wall  %6.2f CPU-s  %.3f CPU-ms/page  %.3f CPU-ms/MB  peak RSS %4d MiB",
		r.Crawler, r.Pages, float64(r.Bytes)/1e3/float64(max(r.Pages, 1)), r.Wall, r.CPU, r.CPUMs, r.CPU*1000/(float64(r.Bytes)/1e6), r.MaxRSS>>20)
	if r.WARCSize > 0 {
		fmt.Printf("  WARC %.1f MB", float64(r.WARCSize)/1e6)
	}
	fmt.Println()
}

func summarise(all []run) {
	by := map[string][]float64{}
	for _, r := range all {
		by[r.Crawler] = append(by[r.Crawler], r.CPUMs)
	}
	med := map[string]float64{}
	for k, v := range by {
		sort.Float64s(v)
		med[k] = v[len(v)/2]
		fmt.Printf("median %-6s %.3f CPU-ms/page over %d runs\n", k, med[k], len(v))
	}
	if med["colly"] > 0 && med["trawl"] > 0 {
		fmt.Printf("trawl / colly = %.2f\n", med["trawl"]/med["colly"])
	}
}

func trawlPages(summary string) (pages, bytes int64, err error) {
	data, err := os.ReadFile(summary)
	if err != nil {
		return 0, 0, err
	}
	var s struct {
		Pages int64 `json:"pages"`
		Bytes int64 `json:"bytes"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", summary, err)
	}
	return s.Pages, s.Bytes, nil
}

func dirSize(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return lines, sc.Err()
}

// readHosts reads IP NAME lines into a map from name to IP.
func readHosts(path string) (map[string]string, error) {
	lines, err := readLines(path)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) < 2 {
			return nil, fmt.Errorf("%s: line %q: want IP NAME", path, l)
		}
		for _, name := range f[1:] {
			m[strings.ToLower(name)] = f[0]
		}
	}
	return m, nil
}
