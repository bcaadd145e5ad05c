package testweb

import "testing"

func BenchmarkRenderHTML(b *testing.B) {
	w := Generate(Options{Seed: 1, Hosts: 20})
	r := w.hosts[5].regular[1]
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n += len(w.renderHTML(r))
	}
	b.SetBytes(int64(n / b.N))
}
