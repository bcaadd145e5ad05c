package urlnorm

import (
	"net/url"
	"testing"
)

func TestHostKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://Example.COM/a", "example.com"},
		{"https://example.com:8443/", "example.com"},
		{"http://[::1]:8080/", "[::1]"},
		{"http://[2001:DB8::1]/", "[2001:db8::1]"},
		{"http://127.0.0.1:80/", "127.0.0.1"},
		{"http://bücher.example/", "xn--bcher-kva.example"},
		{"http://user:pw@a.test/", "a.test"},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := HostKey(u); got != tt.want {
			t.Errorf("HostKey(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRegisteredDomain(t *testing.T) {
	tests := []struct{ in, want string }{
		{"www.example.com", "example.com"},
		{"a.b.example.co.uk", "example.co.uk"},
		{"WWW.Example.COM", "example.com"},
		{"example.com", "example.com"},
		{"www.example.com.", "example.com"},
		{"www.example.com:8080", "example.com"},
		{"www.a.test", "a.test"}, // "test" is not in the list: default rule
		{"a.test", "a.test"},
		{"foo.blogspot.com", "foo.blogspot.com"}, // a private suffix counts
		{"bücher.example", "xn--bcher-kva.example"},
		// No registrable domain: the host itself.
		{"localhost", "localhost"},
		{"co.uk", "co.uk"},
		{"com", "com"},
		{"127.0.0.1", "127.0.0.1"},
		{"127.0.0.1:8080", "127.0.0.1"},
		{"[::1]", "[::1]"},
		{"[::1]:443", "[::1]"},
		{"::1", "[::1]"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := RegisteredDomain(tt.in); got != tt.want {
			t.Errorf("RegisteredDomain(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
