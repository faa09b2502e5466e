package benchmarks

import (
	"bytes"
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
)

// ReportCommand is the command that writes the committed herd report.
const ReportCommand = "go test ./benchmarks -run TestHerdReport -herd.write -v"

// FullSizes are the numbers of candidates of the committed herd report.
var FullSizes = []int{10, 100, 1000, 10000}

// ReportOptions say what RunHerdReport measures.
type ReportOptions struct {
	// Sizes are the numbers of candidates (default FullSizes).
	Sizes []int
	// Changes is the number of leader changes measured per run (default
	// 5; the herd variants at N >= 10,000: at most 3).
	Changes int
	// Variants are the variants measured (default Variants).
	Variants []Variant
	// Done, if set, is called as each run ends (from several goroutines,
	// one at a time) with a line that says what it measured.
	Done func(line string)
}

// RunHerdReport measures every variant at every size, each run a subtest
// of t (which must not be parallel), one run per CPU at a time, the
// longest first. It returns the results in the order of the variants, then
// the sizes, or an error if a run failed (its subtest failed, with the
// details in its log).
func RunHerdReport(t *testing.T, o ReportOptions) ([]HerdResult, error) {
	t.Helper()
	if o.Sizes == nil {
		o.Sizes = FullSizes
	}
	if o.Changes == 0 {
		o.Changes = 5
	}
	if o.Variants == nil {
		o.Variants = Variants
	}
	type job struct {
		v       Variant
		n, k    int
		weight  float64 // rough cost, to start the longest runs first
		out     *HerdResult
		ok      bool
		elapsed time.Duration
	}
	var jobs []*job
	for _, v := range o.Variants {
		for _, n := range o.Sizes {
			k := o.Changes
			rounds := 1.0 // every candidate lists the directory once at setup
			if v.herd {
				if n >= 10000 {
					k = min(k, 3)
				}
				rounds += float64(k) // and again at every change
			}
			jobs = append(jobs, &job{v: v, n: n, k: k, weight: rounds * float64(n) * float64(n), out: new(HerdResult)})
		}
	}
	order := slices.Clone(jobs)
	slices.SortStableFunc(order, func(a, b *job) int {
		switch {
		case a.weight > b.weight:
			return -1
		case a.weight < b.weight:
			return 1
		}
		return 0
	})
	// The runs list directories of up to 10,000 names 10,000 times over:
	// trade memory for less collection.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	t.Logf("herd: %d runs (%d variants × N in %v), cost model: %s", len(jobs), len(o.Variants), o.Sizes, CostModelDescription())
	// One worker per CPU takes the runs, longest first; each run is a
	// subtest (t.Run may be called from several goroutines at once).
	queue := make(chan *job, len(order))
	for _, j := range order {
		queue <- j
	}
	close(queue)
	var (
		wg     sync.WaitGroup
		doneMu sync.Mutex
	)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for j := range queue {
				j.ok = t.Run(fmt.Sprintf("%s/n=%d", j.v.Name, j.n), func(t *testing.T) {
					began := time.Now()
					*j.out = MeasureHerd(t, j.v, j.n, j.k, 1)
					j.elapsed = time.Since(began)
					notifications, reads, bytes, _, failover := j.out.Mean()
					line := fmt.Sprintf("%s n=%d: per change %.1f notifications, %.1f reads, %.0f bytes, failover %v (virtual); took %v",
						j.v.Name, j.n, notifications, reads, bytes, failover.Round(time.Microsecond), j.elapsed.Round(time.Millisecond))
					t.Logf("herd: done %s", line)
					if o.Done != nil {
						doneMu.Lock()
						defer doneMu.Unlock()
						o.Done(line)
					}
				})
			}
		})
	}
	wg.Wait()
	var (
		results []HerdResult
		failed  []string
	)
	for _, j := range jobs {
		if !j.ok {
			failed = append(failed, fmt.Sprintf("%s n=%d", j.v.Name, j.n))
		}
		results = append(results, *j.out)
	}
	if failed != nil {
		return nil, fmt.Errorf("%d herd run(s) failed: %s", len(failed), strings.Join(failed, ", "))
	}
	return results, nil
}

// WriteHerdReport writes the report of results (measured for variants)
// into dir: the table (herd.md), the plot (herd.svg) and the figures as
// JSON (herd.json). It returns the paths it wrote.
func WriteHerdReport(dir string, variants []Variant, results []HerdResult) ([]string, error) {
	var md, svg, js bytes.Buffer
	fmt.Fprintf(&md, "# The herd effect: cost of one leader change\n\n")
	fmt.Fprintf(&md, "Produced by `%s` (package benchmarks, `herd_report_test.go`);\nsee [RESULTS.md](RESULTS.md) for the machine and the date.\n\n", ReportCommand)
	md.WriteString(herdExplanation(variants))
	if err := HerdTable(&md, results); err != nil {
		return nil, err
	}
	md.WriteString("\n![the herd effect: notifications, reads, bytes and failover time per leader change against N](herd.svg)\n")
	if err := HerdSVG(&svg, results, HerdSubtitle(CostModelDescription())); err != nil {
		return nil, err
	}
	if err := HerdJSON(&js, results); err != nil {
		return nil, err
	}
	var paths []string
	for _, f := range []struct {
		name string
		data []byte
	}{{"herd.md", md.Bytes()}, {"herd.svg", svg.Bytes()}, {"herd.json", js.Bytes()}} {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, f.data, 0o644); err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// HerdSubtitle is the plot's subtitle for figures measured under the cost
// model described by costModel.
func HerdSubtitle(costModel string) string {
	return "mean over the changes measured; made by " + ReportCommand + "\ncost model: " +
		strings.Replace(costModel, "; replies", ";\nreplies", 1)
}

func herdExplanation(variants []Variant) string {
	var b strings.Builder
	b.WriteString("N candidates wait in a simulated World (package `sim`, in a `testing/synctest` bubble, so every\n")
	b.WriteString("figure is the same on every run); then the leader changes a few times. For each change the\n")
	b.WriteString("table gives, summed over all clients and averaged over the changes: the watch notifications\n")
	b.WriteString("delivered; the reads issued (getChildren, getData and exists calls); the bytes those reads\n")
	b.WriteString("returned (jute-encoded reply: 16-byte header, names, data, 68-byte Stat); the writes issued;\n")
	b.WriteString("and the failover time: virtual time from the change until the next leader (or lock holder)\n")
	b.WriteString("returns from Campaign (or Lock). Cost model: " + CostModelDescription() + ".\n\n")
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

// ParseSizes reads a comma-separated list of numbers of candidates
// ("10,100,1_000"), each at least 2.
func ParseSizes(s string) ([]int, error) {
	var sizes []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(strings.ReplaceAll(f, "_", "")))
		if err != nil || n < 2 {
			return nil, fmt.Errorf("bad size %q (want integers >= 2, comma-separated)", f)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}
