// Package clustertest holds what the fleet's tests share: loopback
// addresses for servers to listen on, and host names of a given partition.
// For tests only; safe for concurrent use.
package clustertest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/trawl-crawler/trawl/internal/store/partition"
)

// FreeAddrs returns n loopback addresses (127.0.0.1:port) whose ports were
// free a moment ago: for servers that must know each other's addresses
// before any of them listens (a cluster's routes). The ports are drawn
// below the kernel's ephemeral range (from 32768 on Linux), which it hands
// to outgoing connections: a port from there, closed and then listened on
// again a while later, was seen taken by another test's client. No port
// is given twice in one process: tests running in parallel may each hold
// addresses they listen on only later (a member that joins mid-test).
func FreeAddrs(t testing.TB, n int) []string {
	t.Helper()
	const lo, hi = 20000, 32000
	out := make([]string, 0, n)
	given.Lock()
	defer given.Unlock()
	seen := map[int]bool{}
	for tries := 0; len(out) < n; tries++ {
		if tries > 1000 {
			t.Fatalf("no free port in [%d, %d) after %d tries", lo, hi, tries)
		}
		p := lo + rand.IntN(hi-lo)
		if seen[p] || given.ports[p] {
			continue
		}
		seen[p] = true
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue // taken
		}
		out = append(out, l.Addr().String())
		l.Close()
		given.ports[p] = true
	}
	return out
}

// given holds the ports FreeAddrs gave in this process.
var given = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// HostsIn returns the first n host names of the sequence h0.test,
// h1.test, ... that fall in partition p.
func HostsIn(p partition.ID, n int) []string {
	out := make([]string, 0, n)
	for i := 0; len(out) < n; i++ {
		if h := fmt.Sprintf("h%d.test", i); partition.Of(h) == p {
			out = append(out, h)
		}
	}
	return out
}

// HostIn returns the i-th (from 0) host name of HostsIn's sequence in
// partition p.
func HostIn(p partition.ID, i int) string { return HostsIn(p, i+1)[i] }
