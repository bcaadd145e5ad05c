package urlnorm

import "testing"

// TestAddressSpellings checks that every way a link can spell a loopback
// (or other special) address comes out of Parse and Normalize as the one
// canonical address the fetcher's IP guard judges. The WHATWG vectors in
// testdata/url_whatwg_subset.json hold the general rules (0x and octal
// parts, short forms, fullwidth and ideographic dots, "ends in a number");
// these are the spellings an SSRF link would use.
func TestAddressSpellings(t *testing.T) {
	cases := []struct {
		in, host string // host "" means Parse must fail
	}{
		{"http://127.0.0.1/", "127.0.0.1"},
		{"http://2130706433/", "127.0.0.1"},
		{"http://0177.0.0.1/", "127.0.0.1"},
		{"http://017700000001/", "127.0.0.1"},
		{"http://0x7f.1/", "127.0.0.1"},
		{"http://0x7f000001/", "127.0.0.1"},
		{"http://0X7F.0.0.0X1/", "127.0.0.1"},
		{"http://127.1/", "127.0.0.1"},
		{"http://127.0.1/", "127.0.0.1"},
		{"http://127.0.0.1./", "127.0.0.1"},
		{"http://0177.1./", "127.0.0.1"},
		{"http://%31%32%37.0.0.1/", "127.0.0.1"},
		{"http://127.0.0.1%2e/", "127.0.0.1"},
		{"http://１２７．０．０．１/", "127.0.0.1"},
		{"http://127。0。0。1/", "127.0.0.1"},
		{"http://127｡0｡0｡1/", "127.0.0.1"},
		{"http://①②⑦.0.0.1/", "127.0.0.1"},
		{"http://０ｘ７ｆ.1/", "127.0.0.1"},
		{"http://0xa9fea9fe/", "169.254.169.254"},
		{"http://169.254.43518/", "169.254.169.254"},
		{"http://0/", "0.0.0.0"},
		{"http://[::]/", "[::]"},
		{"http://127.0.0.1\\@evil.example/", "127.0.0.1"}, // '\\' is '/' in special URLs
		{"http:\\\\127.0.0.1\\x", "127.0.0.1"},
		{"http://evil.example#@127.0.0.1/", "evil.example"},
		{"http://user@127.0.0.1:80@evil.example/", "evil.example"},
		{"http://LOCALHOST/", "localhost"},
		{"http://localhost./", "localhost."}, // the fetcher drops the dot before lookup
		{"http://ｌｏｃａｌｈｏｓｔ/", "localhost"},
		{"http://[::1]/", "[::1]"},
		{"http://[0:0:0:0:0:0:0:1]/", "[::1]"},
		{"http://[::0:1]/", "[::1]"},
		{"http://[::ffff:127.0.0.1]/", "[::ffff:127.0.0.1]"},
		{"http://[::ffff:7f00:1]/", "[::ffff:127.0.0.1]"},
		{"http://[::127.0.0.1]/", "[::7f00:1]"},
		{"http://[64:ff9b::127.0.0.1]/", "[64:ff9b::7f00:1]"},
		{"http://[2002:7F00:0001::]/", "[2002:7f00:1::]"},
		{"http://[::1%25lo]/", ""},       // no zone IDs in WHATWG URLs
		{"http://[fe80::1%25eth0]/", ""}, // likewise
		{"http://256.0.0.1/", ""},        // a number part over 255
		{"http://08.0.0.1/", ""},         // not octal
	}
	for _, c := range cases {
		u, err := Parse(c.in, nil)
		if c.host == "" {
			if err == nil {
				t.Errorf("Parse(%q) = %q, want an error", c.in, u)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		n := Normalize(u)
		if got := HostKey(n); got != c.host {
			t.Errorf("HostKey(Normalize(Parse(%q))) = %q, want %q", c.in, got, c.host)
		}
		if got := n.Host; got != c.host {
			t.Errorf("Normalize(Parse(%q)).Host = %q, want %q", c.in, got, c.host)
		}
	}
}
