package benchmarks_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
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
const reportCommand = "go test ./benchmarks -run TestHerdReport -herd.write -v"

// TestHerdReport measures every variant at every N and writes the table
// (herd.md), the plot (herd.svg) and the figures as JSON (herd.json, which
// cmd/zksim reads). It runs only with -herd.write:
//
//	go test ./benchmarks -run TestHerdReport -herd.write -v
//
// Runs go in parallel, one per CPU, the longest first; each logs a line
// when it is done.
func TestHerdReport(t *testing.T) {
	if !*herdWrite {
		t.Skip("run with -herd.write to measure and write herd.md, herd.svg and herd.json")
	}
	sizes, err := parseSizes(*herdSizes)
	if err != nil {
		t.Fatal(err)
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
	type job struct {
		v       benchmarks.Variant
		n, k    int
		weight  float64 // rough cost, to start the longest runs first
		out     *benchmarks.HerdResult
		elapsed time.Duration
	}
	var jobs []*job
	for _, v := range variants {
		for _, n := range sizes {
			k := *herdChanges
			rounds := 1.0 // every candidate lists the directory once at setup
			if isHerd(v) {
				if n >= 10000 {
					k = min(k, 3)
				}
				rounds += float64(k) // and again at every change
			}
			jobs = append(jobs, &job{v: v, n: n, k: k, weight: rounds * float64(n) * float64(n), out: new(benchmarks.HerdResult)})
		}
	}
	order := slices.Clone(jobs)
	slices.SortStableFunc(order, func(a, b *job) int { return -cmpFloat(a.weight, b.weight) })
	// The runs list directories of up to 10,000 names 10,000 times over:
	// trade memory for less collection.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	start := time.Now()
	t.Logf("herd: %d runs (%d variants × N in %v), cost model: %s", len(jobs), len(variants), sizes, benchmarks.CostModelDescription())
	// One worker per CPU takes the runs, longest first; each run is a
	// subtest (t.Run may be called from several goroutines at once).
	queue := make(chan *job, len(order))
	for _, j := range order {
		queue <- j
	}
	close(queue)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for j := range queue {
				t.Run(fmt.Sprintf("%s/n=%d", j.v.Name, j.n), func(t *testing.T) {
					began := time.Now()
					*j.out = benchmarks.MeasureHerd(t, j.v, j.n, j.k, 1)
					j.elapsed = time.Since(began)
					notifications, reads, bytes, _, failover := j.out.Mean()
					t.Logf("herd: done %s n=%d: per change %.1f notifications, %.1f reads, %.0f bytes, failover %v (virtual); took %v",
						j.v.Name, j.n, notifications, reads, bytes, failover.Round(time.Microsecond), j.elapsed.Round(time.Millisecond))
				})
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	var results []benchmarks.HerdResult
	for _, j := range jobs {
		results = append(results, *j.out)
	}
	var md, svg, js bytes.Buffer
	fmt.Fprintf(&md, "# The herd effect: cost of one leader change\n\n")
	fmt.Fprintf(&md, "Produced by `%s` (package benchmarks, `herd_report_test.go`);\nsee [RESULTS.md](RESULTS.md) for the machine and the date.\n\n", reportCommand)
	md.WriteString(herdExplanation(variants))
	if err := benchmarks.HerdTable(&md, results); err != nil {
		t.Fatal(err)
	}
	md.WriteString("\n![the herd effect: notifications, reads, bytes and failover time per leader change against N](herd.svg)\n")
	if err := benchmarks.HerdSVG(&svg, results, herdSubtitle(benchmarks.CostModelDescription())); err != nil {
		t.Fatal(err)
	}
	if err := benchmarks.HerdJSON(&js, results); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"herd.md": md.Bytes(), "herd.svg": svg.Bytes(), "herd.json": js.Bytes()} {
		p := filepath.Join(*herdOut, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("herd: wrote %s", p)
	}
	t.Logf("herd: all %d runs took %v", len(jobs), time.Since(start).Round(time.Second))
}

// herdSubtitle is the plot's subtitle for figures measured under the cost
// model described by costModel.
func herdSubtitle(costModel string) string {
	return "mean over the changes measured; made by " + reportCommand + "\ncost model: " +
		strings.Replace(costModel, "; replies", ";\nreplies", 1)
}

func herdExplanation(variants []benchmarks.Variant) string {
	var b strings.Builder
	b.WriteString("N candidates wait in a simulated World (package `sim`, in a `testing/synctest` bubble, so every\n")
	b.WriteString("figure is the same on every run); then the leader changes a few times. For each change the\n")
	b.WriteString("table gives, summed over all clients and averaged over the changes: the watch notifications\n")
	b.WriteString("delivered; the reads issued (getChildren, getData and exists calls); the bytes those reads\n")
	b.WriteString("returned (jute-encoded reply: 16-byte header, names, data, 68-byte Stat); the writes issued;\n")
	b.WriteString("and the failover time: virtual time from the change until the next leader (or lock holder)\n")
	b.WriteString("returns from Campaign (or Lock). Cost model: " + benchmarks.CostModelDescription() + ".\n\n")
	b.WriteString("| variant | waiters watch | a change is |\n| --- | --- | --- |\n")
	for _, v := range variants {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", v.Name, v.About, v.Change)
	}
	b.WriteString(`
Each run measures 5 changes, except the two herd variants at N = 10,000 (3 changes: each costs
about as much as the whole setup). After each change the line is one shorter, so the herd
figures are N-1, N-2, ... averaged. The schedule is drawn from seed 1; the herd's failover
time depends on where the next leader's requests fall in the server's queue among the N
waiters' reads, so it varies from change to change around N/2 reads' worth. What the predecessor figures count: for the election, the
next candidate is notified, lists the directory, reads its own node and sets the exists watch
that tracks its leadership (the expired leader's own watches end with EventNotWatching, which
is not counted); for the lock the same, plus the releasing holder's own exists watch on its
node, which fires when it deletes it. The single-node election's failover grows with N although
the first create wins: the winner's next read waits in the server's queue behind the other
N-2 creates and reads of the herd.

`)
	return b.String()
}

func isHerd(v benchmarks.Variant) bool {
	return v.Name == "election-herd" || v.Name == "lock-herd"
}

func parseSizes(s string) ([]int, error) {
	var sizes []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(strings.ReplaceAll(f, "_", "")))
		if err != nil || n < 2 {
			return nil, fmt.Errorf("-herd.n: bad size %q (want integers >= 2)", f)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
