package main

import (
	"net/netip"
	"strings"
	"testing"
)

// TestSourceAddrFlag: --source-addr reaches node.Options.SourceAddr, and a
// value that is not an IP address is refused by name.
func TestSourceAddrFlag(t *testing.T) {
	nf := nodeFlags{minDelay: 1, maxDelay: 2, maxAdaptive: 1, gzipLevel: 6, hostBudget: 1, dupAllow: 1, nearRes: 0.8, expected: 1,
		sourceAddr: "127.0.0.12"}
	o, err := nf.options()
	if err != nil || o.SourceAddr != netip.MustParseAddr("127.0.0.12") {
		t.Fatalf("options() = SourceAddr %v, %v; want 127.0.0.12", o.SourceAddr, err)
	}
	nf.sourceAddr = "node-1"
	if _, err := nf.options(); err == nil || !strings.Contains(err.Error(), "--source-addr") {
		t.Errorf("--source-addr node-1: %v, want an error naming the flag", err)
	}
}
