// Package clustertest holds what the fleet's tests share: loopback
// addresses for servers to listen on, and host names of a given partition.
// For tests only; safe for concurrent use.
package clustertest

import (
	"fmt"
	"net"
	"testing"

	"github.com/trawl-crawler/trawl/internal/store/partition"
)

// FreeAddrs returns n loopback addresses (127.0.0.1:port) whose ports were
// free a moment ago: for servers that must know each other's addresses
// before any of them listens (a cluster's routes).
func FreeAddrs(t testing.TB, n int) []string {
	t.Helper()
	out := make([]string, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, l.Addr().String())
		l.Close()
	}
	return out
}

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
