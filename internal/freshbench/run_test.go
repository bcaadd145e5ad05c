package freshbench

import (
	"os"
	"testing"
)

func TestPrintDefault(t *testing.T) {
	if os.Getenv("FB") == "" {
		t.Skip()
	}
	for _, mix := range []string{"web", "churn"} {
		r, err := Run(Config{Pages: 10000, Days: 60, Warmup: 14, Seed: 1, Mix: mix, LastModified: 0.5, Lying: 0.2})
		if err != nil {
			t.Fatal(err)
		}
		Print(os.Stdout, r)
	}
}
