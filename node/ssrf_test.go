package node

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/crawllog"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/urlnorm"
)

// ssrfService is the service an attacker wants the crawler to reach: an
// HTTP server on 127.0.0.1 and, if the machine has it, [::1], on one port,
// outside the node's allowed ranges. It logs every connection and request.
type ssrfService struct {
	port int
	srv  *http.Server
	wg   sync.WaitGroup

	mu    sync.Mutex
	conns []string // remote addresses of accepted connections
	reqs  []string // "HOST PATH" of requests
}

func newSSRFService(t *testing.T) *ssrfService {
	t.Helper()
	s := &ssrfService{}
	s.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.mu.Lock()
			s.reqs = append(s.reqs, r.Host+" "+r.RequestURI)
			s.mu.Unlock()
			w.Write([]byte("<html>internal secret</html>"))
		}),
		ConnState: func(c net.Conn, st http.ConnState) {
			if st == http.StateNew {
				s.mu.Lock()
				s.conns = append(s.conns, c.RemoteAddr().String())
				s.mu.Unlock()
			}
		},
		ReadHeaderTimeout: 5 * time.Second,
	}
	ln4, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.port = ln4.Addr().(*net.TCPAddr).Port
	lns := []net.Listener{ln4}
	if ln6, err := net.Listen("tcp", "[::1]:"+strconv.Itoa(s.port)); err == nil {
		lns = append(lns, ln6)
	} else {
		t.Logf("service: no [::1] listener: %v", err)
	}
	for _, ln := range lns {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			_ = s.srv.Serve(ln)
		}()
	}
	t.Cleanup(func() {
		s.srv.Close()
		s.wg.Wait()
	})
	return s
}

func (s *ssrfService) log() (conns, reqs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.conns...), append([]string(nil), s.reqs...)
}

// ssrfHosts are the ways a link can name the service: {P} is its port.
// The names under probe.trawl.test are in the node's Hosts map (the
// resolver path); localhost goes to the system resolver (/etc/hosts).
var ssrfHosts = []string{
	"127.0.0.1:{P}",
	"2130706433:{P}",      // decimal
	"0177.0.0.1:{P}",      // octal
	"017700000001:{P}",    // octal, one part
	"0x7f.1:{P}",          // hex, short
	"0x7f000001:{P}",      // hex, one part
	"0X7F.0.0.0X1:{P}",    // hex parts
	"127.1:{P}",           // short
	"127.0.1:{P}",         // three parts
	"127.0.0.1.:{P}",      // trailing dot
	"0177.1.:{P}",         // octal, short, trailing dot
	"%31%32%37.0.0.1:{P}", // percent-encoded
	"１２７．０．０．１:{P}",       // fullwidth digits and dots
	"127。0。0。1:{P}",       // ideographic full stops
	"①②⑦.0.0.1:{P}",       // circled digits (IDNA maps them)
	"０ｘ７ｆ.1:{P}",          // fullwidth hex
	"0:{P}",               // 0.0.0.0: Linux connects it to the local host
	"0.0.0.0:{P}",
	"[::]:{P}",
	"127.0.0.1\\@evil.example:{P}", // '\\' ends the authority (WHATWG): host 127.0.0.1
	"localhost:{P}",                // the system resolver's name
	"LOCALHOST.:{P}",               // upper case, trailing dot
	"ｌｏｃａｌｈｏｓｔ:{P}",                // fullwidth name
	"name.probe.trawl.test:{P}",    // the node's Hosts map: 127.0.0.1
	"name6.probe.trawl.test:{P}",
	"mapped.probe.trawl.test:{P}",
	"[::1]:{P}",
	"[0:0:0:0:0:0:0:1]:{P}",
	"[::1%25lo]:{P}", // a zone: no WHATWG URL, dropped at parsing
	"[::ffff:127.0.0.1]:{P}",
	"[::ffff:7f00:1]:{P}",
	"[::127.0.0.1]:{P}",                    // IPv4-compatible (deprecated)
	"[64:ff9b::127.0.0.1]:{P}",             // NAT64
	"[2002:7f00:1::]:{P}",                  // 6to4
	"[2001:0:5db8:d70e:0:0:80ff:fffe]:{P}", // Teredo, client 127.0.0.1
}

// TestSSRFJudged: a synthetic-web host (allowed:
// the node allows exactly the web's addresses) links to a service on
// 127.0.0.1 and [::1] in every spelling of ssrfHosts and redirects to it
// in each spelling too. The job is seeded with the link page and with one
// URL per canonical host the spellings name (a job's scope is its seeds'
// hosts, and an IPv6 host cannot be a scope domain), so that nothing but
// the IP guard stands between the crawler and the service. The service
// must see no connection at all; the crawl log must show every such host
// refused with the blocked class, and every link and redirect target
// discovered and never fetched. A control run, the same crawl with the
// service's addresses allowed, shows that the service is reachable and
// its log would show what arrived.
func TestSSRFJudged(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: crawls of a web of private addresses; the full suite runs it")
	}
	t.Parallel()
	t.Run("guarded", func(t *testing.T) { ssrfCrawl(t, false) })
	t.Run("control: service allowed", func(t *testing.T) { ssrfCrawl(t, true) })
}

func ssrfCrawl(t *testing.T, allowService bool) {
	svc := newSSRFService(t)
	P := strconv.Itoa(svc.port)
	var links, redirects []string
	for i, h := range ssrfHosts {
		hp := strings.ReplaceAll(h, "{P}", P)
		links = append(links, "http://"+hp+"/link/"+strconv.Itoa(i))
		redirects = append(redirects, "http://"+hp+"/redirected/"+strconv.Itoa(i))
	}
	web := testweb.Generate(testweb.Options{Seed: 12, Hosts: 2, BigHosts: -1, MinPages: 3, MaxPages: 3, Latency: -1})
	const probe = "probe.trawl.test"
	if _, err := web.AddLinkHost(probe, links, redirects); err != nil {
		t.Fatal(err)
	}
	srv, err := testweb.Serve(web, testweb.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })

	// The node allows the web's addresses, one /32 each, and nothing else.
	hosts := srv.Resolver()
	var allow []netip.Prefix
	for _, addrs := range hosts {
		for _, a := range addrs {
			allow = append(allow, netip.PrefixFrom(a, 32))
		}
	}
	if allowService {
		allow = append(allow, netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("::1/128"))
	}
	hosts["name.probe.trawl.test"] = []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	hosts["name6.probe.trawl.test"] = []netip.Addr{netip.MustParseAddr("::1")}
	hosts["mapped.probe.trawl.test"] = []netip.Addr{netip.MustParseAddr("::ffff:127.0.0.1")}

	home := "http://" + probe + ":" + strconv.Itoa(srv.Port()) + "/"
	seeds := []string{home}
	canon := map[string]string{} // link or redirect target as written → canonical URL
	targetHosts := map[string]bool{}
	for _, raw := range append(append([]string(nil), links...), redirects...) {
		u, err := urlnorm.Parse(raw, nil)
		if err != nil {
			if !strings.Contains(raw, "%25") {
				t.Fatalf("urlnorm.Parse(%q): %v", raw, err)
			}
			continue // a zone ID: no URL, nothing to fetch
		}
		u = urlnorm.Normalize(u)
		canon[raw] = u.String()
		if hk := urlnorm.HostKey(u); !targetHosts[hk] && !strings.HasSuffix(hk, "."+probe) {
			targetHosts[hk] = true
			seeds = append(seeds, "http://"+u.Host+"/seed")
		}
	}
	t.Logf("%d spellings name %d canonical hosts: %v", len(ssrfHosts), len(targetHosts), keys(targetHosts))

	opts := Options{
		DataDir:          t.TempDir(),
		MinDelay:         10 * time.Millisecond,
		Concurrency:      4,
		AllowNets:        allow,
		Hosts:            hosts,
		RobotsRetry:      100 * time.Millisecond,
		MaxAdaptiveDelay: time.Second,
	}
	n, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	j, err := n.Submit(job.Spec{Name: "ssrf", Seeds: seeds, MaxDepth: 3, RobotsGiveUp: 300 * time.Millisecond})
	if err != nil {
		n.Close()
		t.Fatal(err)
	}
	n.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	select {
	case <-j.Ended():
	case <-ctx.Done():
		t.Errorf("the crawl did not end within 60 s")
	}
	if err := n.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	sum := n.Summary(j.ID)

	// The service's own log: nothing arrived.
	conns, reqs := svc.log()
	t.Logf("service on 127.0.0.1 and [::1] port %s: %d connections, %d requests", P, len(conns), len(reqs))
	if allowService {
		if len(reqs) == 0 {
			t.Errorf("control: the service, allowed, saw no request: the guarded run proves nothing")
		}
		return
	}
	if len(conns) != 0 || len(reqs) != 0 {
		t.Errorf("the service saw %d connections %v and %d requests %v; want none", len(conns), conns, len(reqs), reqs)
	}

	var entries []crawllog.Entry
	if err := crawllog.Scan(filepath.Join(opts.DataDir, logDir), crawllog.Filter{
		OnBad: func(file string, line int, err error) { t.Errorf("crawl log %s:%d: %v", file, line, err) },
	}, func(e crawllog.Entry) error {
		entries = append(entries, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Every host the spellings name is refused when first leased (the
	// node resolves through the guard before robots.txt: a refused host
	// is dropped with its queue, detail "blocked"); the rest of its URLs,
	// and those found later, are dropped with it ("host dropped").
	byURL := map[string][]crawllog.Entry{}
	blocked := map[string]int{} // canonical host → entries refused with class blocked
	for _, e := range entries {
		byURL[e.URL] = append(byURL[e.URL], e)
		if testing.Verbose() {
			t.Logf("crawl log: %s status=%d error=%q dropped=%q detail=%q via=%s", e.URL, e.Status, e.Error, e.Dropped, e.Detail, e.Via)
		}
		u, err := urlnorm.Parse(e.URL, nil)
		if err != nil {
			t.Errorf("crawl log URL %q: %v", e.URL, err)
			continue
		}
		hk := urlnorm.HostKey(u)
		if hk != probe && (e.Status != 0 || e.Dropped != crawllog.DropUnreachable) {
			t.Errorf("crawl log: %s: status %d, dropped %q: want only drops as unreachable outside the web", e.URL, e.Status, e.Dropped)
		}
		if e.Dropped == crawllog.DropUnreachable && e.Detail == "blocked" {
			blocked[hk]++
		}
	}
	for _, name := range []string{"name", "name6", "mapped"} {
		targetHosts[name+"."+probe] = true
	}
	for hk := range targetHosts {
		if blocked[hk] == 0 {
			t.Errorf("crawl log: host %s never refused with class blocked", hk)
		}
	}
	if got := byURL[home]; len(got) == 0 || got[0].Status != 200 {
		t.Errorf("crawl log: the link page %s: %+v, want status 200", home, got)
	}
	for i, raw := range links {
		c, ok := canon[raw]
		if !ok {
			continue
		}
		if got := byURL[c]; len(got) == 0 || got[0].Via != home {
			t.Errorf("crawl log: link %d %q (%s): %+v, want a drop via %s", i, raw, c, got, home)
		}
	}
	followed := 0
	for i, raw := range redirects {
		from := "http://" + probe + ":" + strconv.Itoa(srv.Port()) + "/redirect/" + strconv.Itoa(i)
		got := byURL[from]
		// A Location net/url cannot parse (percent-encoded hosts, '\\' in
		// an authority) is returned as sent and parsed by the node as a
		// link is: followed, then refused, as any other.
		if len(got) == 0 || got[0].Status != 302 {
			t.Errorf("crawl log: redirect %s: %+v, want status 302", from, got)
			continue
		}
		c, ok := canon[raw]
		if !ok {
			continue // a zone ID: the node cannot parse the Location (bad-location)
		}
		if got := byURL[c]; len(got) == 0 || got[0].Via != from {
			t.Errorf("crawl log: redirect target %q (%s): %+v, want a drop via %s", raw, c, got, from)
			continue
		}
		followed++
	}
	if sum.Errors["blocked"] == 0 {
		t.Errorf("job errors %v: no blocked", sum.Errors)
	}
	t.Logf("job %s (%s): errors %v; crawl log: %d lines; %d redirects to the service followed and refused; refusals (blocked) per host %v",
		sum.State, sum.StopReason, sum.Errors, len(entries), followed, blocked)
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
