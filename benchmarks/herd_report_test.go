package benchmarks_test

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zksim/zksim/benchmarks"
)

var (
	herdWrite    = flag.Bool("herd.write", false, "TestHerdReport: run the herd report and write herd.md, herd.svg and herd.json")
	herdSizes    = flag.String("herd.n", "10,100,1000,10000", "TestHerdReport: numbers of candidates, comma-separated")
	herdChanges  = flag.Int("herd.changes", 5, "TestHerdReport: leader changes measured per run (herd variants at N >= 10,000: at most 3)")
	herdOut      = flag.String("herd.out", ".", "TestHerdReport: directory to write herd.md, herd.svg and herd.json into")
	herdVariants = flag.String("herd.variants", "", "TestHerdReport: variants to run, comma-separated (default all)")
)

// reportCommand is the command that writes the committed report.
const reportCommand = benchmarks.ReportCommand

// TestHerdReport measures every variant at every N and writes the table
// (herd.md), the plot (herd.svg) and the figures as JSON (herd.json), with
// benchmarks.RunHerdReport and benchmarks.WriteHerdReport (which
// `zksim herd` runs too). It runs only with -herd.write:
//
//	go test ./benchmarks -run TestHerdReport -herd.write -v
//
// Runs go in parallel, one per CPU, the longest first; each logs a line
// when it is done.
func TestHerdReport(t *testing.T) {
	if !*herdWrite {
		t.Skip("run with -herd.write to measure and write herd.md, herd.svg and herd.json")
	}
	sizes, err := benchmarks.ParseSizes(*herdSizes)
	if err != nil {
		t.Fatalf("-herd.n: %v", err)
	}
	changed := func(name string) bool { f := flag.Lookup(name); return f.Value.String() != f.DefValue }
	partial := changed("herd.n") || changed("herd.variants") || changed("herd.changes")
	if partial && filepath.Clean(*herdOut) == "." {
		t.Fatalf("-herd.n, -herd.variants or -herd.changes make a partial report: give -herd.out=DIR, so that the committed one (%s) is not replaced", reportCommand)
	}
	variants := benchmarks.Variants
	if *herdVariants != "" {
		variants = nil
		for _, name := range strings.Split(*herdVariants, ",") {
			v, ok := benchmarks.VariantByName(strings.TrimSpace(name))
			if !ok {
				t.Fatalf("unknown variant %q", name)
			}
			variants = append(variants, v)
		}
	}
	start := time.Now()
	results, err := benchmarks.RunHerdReport(t, benchmarks.ReportOptions{Sizes: sizes, Changes: *herdChanges, Variants: variants})
	if err != nil {
		t.Fatal(err)
	}
	paths, err := benchmarks.WriteHerdReport(*herdOut, variants, results)
	for _, p := range paths {
		t.Logf("herd: wrote %s", p)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("herd: all %d runs took %v", len(results), time.Since(start).Round(time.Second))
}

// herdSubtitle is the plot's subtitle for figures measured under the cost
// model described by costModel.
func herdSubtitle(costModel string) string { return benchmarks.HerdSubtitle(costModel) }
