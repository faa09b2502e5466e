package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zksim/zksim/benchmarks"
)

// herdOptions are the flags of the herd comparison.
type herdOptions struct {
	sizes    string
	sizesSet bool // -n was given
	write    bool
	out      string // -out
	dir      string // where the report goes, "" for nowhere: set by checkHerd
}

// fullSizes are the sizes of the committed herd report.
const fullSizes = "10,100,1000,10000"

// herdFlags defines the herd comparison's flags in fs.
func herdFlags(fs *flag.FlagSet, o *herdOptions) {
	fs.StringVar(&o.sizes, "n", "10,100,1000", "numbers of candidates of the herd comparison, comma-separated (the full report: "+fullSizes+")")
	fs.BoolVar(&o.write, "write", false, "replace the committed herd report (herd.md, herd.svg, herd.json) in benchmarks/ of the zksim checkout zksim runs in; it runs the full sizes, "+fullSizes)
	fs.StringVar(&o.out, "out", "", "write the herd report (herd.md, herd.svg, herd.json) into this directory, made if missing (default: none written)")
}

// herdMain runs "zksim herd".
func herdMain(args []string) int {
	var o herdOptions
	fs := flag.NewFlagSet("zksim herd", flag.ContinueOnError)
	herdFlags(fs, &o)
	setUsage(fs, "zksim herd [flags]", "Compares leader election and the lock, with predecessor watches and without, with N\n"+
		"candidates in the deterministic simulator: per leader change, the watch notifications,\n"+
		"reads, bytes and the failover time in virtual time. With -out DIR it writes the report\n"+
		"(herd.md, herd.svg, herd.json) into DIR, with -write into benchmarks/ of the checkout.")
	if ok, status := parseFlags(fs, args, func() error {
		o.sizesSet = isSet(fs, "n")
		return checkHerd(&o)
	}); !ok {
		return status
	}
	inTestRunner(func(t *testing.T) error {
		start := time.Now()
		rows, err := runHerd(t, o, "", os.Stdout)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stdout, "\n================ summary (%s) ================\n", time.Since(start).Round(time.Second))
		printHerd(os.Stdout, o, rows)
		return nil
	})
	return 0 // not reached: inTestRunner exits
}

// isSet reports whether the flag called name was given.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// checkHerd checks the herd comparison's flags: -write alone runs the full
// sizes, and needs a checkout to write into.
func checkHerd(o *herdOptions) error {
	if _, err := benchmarks.ParseSizes(o.sizes); err != nil {
		return fmt.Errorf("-n: %w", err)
	}
	if o.write && o.out != "" {
		return errors.New("-write and -out both say where the herd report goes: give one")
	}
	if !o.write {
		o.dir = o.out
		return nil
	}
	if !sameSizes(o.sizes, fullSizes) {
		if o.sizesSet {
			return fmt.Errorf("-write -n %s would replace the committed herd report (N = %s) with a partial one; "+
				"drop -write (and give -out DIR to keep this report), or drop -n", o.sizes, fullSizes)
		}
		o.sizes = fullSizes
	}
	root, err := checkout()
	if errors.Is(err, errNoCheckout) {
		return fmt.Errorf("-write replaces the committed herd report in benchmarks/ of a checkout of %s, "+
			"and this is not one: run it inside a checkout (git clone https://%[1]s), or write the report elsewhere with -out DIR instead of -write", modulePath)
	}
	if err != nil {
		return err
	}
	o.dir = filepath.Join(root, "benchmarks")
	return nil
}

// sameSizes reports whether two -n lists name the same sizes.
func sameSizes(a, b string) bool {
	x, _ := benchmarks.ParseSizes(a)
	y, _ := benchmarks.ParseSizes(b)
	set := map[int]bool{}
	for _, n := range x {
		set[n] = true
	}
	for _, n := range y {
		if !set[n] {
			return false
		}
		delete(set, n)
	}
	return len(set) == 0
}

// runHerd runs the herd comparison under t, printing a line as each run
// ends, and writes the report into o.dir (nowhere if unset). step is the "[1/2]" of the header ("" for none).
func runHerd(t *testing.T, o herdOptions, step string, out io.Writer) ([]benchmarks.HerdRow, error) {
	sizes, err := benchmarks.ParseSizes(o.sizes)
	if err != nil {
		return nil, err
	}
	if step != "" {
		step += " "
	}
	fmt.Fprintf(out, "\n%sherd comparison: election and lock, N = %s candidates, in the simulator\n", step, o.sizes)
	fmt.Fprintf(out, "      (one line per variant and N as it finishes; the largest run first)\n")
	start := time.Now()
	results, err := benchmarks.RunHerdReport(t, benchmarks.ReportOptions{Sizes: sizes, Done: func(line string) {
		fmt.Fprintf(out, "  [%5.1fs] %s\n", time.Since(start).Seconds(), line)
	}})
	if err != nil {
		return nil, err
	}
	if o.dir != "" {
		if err := os.MkdirAll(o.dir, 0o755); err != nil {
			return nil, err
		}
		paths, err := benchmarks.WriteHerdReport(o.dir, benchmarks.Variants, results)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(out, "  wrote %s\n", strings.Join(paths, ", "))
	}
	var rows []benchmarks.HerdRow
	for _, r := range results {
		rows = append(rows, r.Row())
	}
	return rows, nil
}

// printHerd prints the herd comparison's part of the summary.
func printHerd(out io.Writer, o herdOptions, rows []benchmarks.HerdRow) {
	fmt.Fprintf(out, "\nherd effect, mean cost of one leader change (deterministic: the same on every run)\n")
	fmt.Fprintf(out, "cost model: %s\n\n", benchmarks.CostModelDescription())
	printHerdSummary(out, rows)
	fmt.Fprintf(out, "\n  With predecessor watches a change wakes one waiter whatever N is; watching every\n")
	fmt.Fprintf(out, "  candidate (or one leader node) wakes all N, and each of them reads again.\n")
	if !sameSizes(o.sizes, fullSizes) {
		fmt.Fprintf(out, "  The full report (2 to 3 minutes): %s herd -n %s\n", self(), fullSizes)
	}
}

// printHerdSummary prints, for each variant, notifications per change and
// failover time at every N.
func printHerdSummary(w io.Writer, rows []benchmarks.HerdRow) {
	var variants []string
	var sizes []int
	byKey := map[string]benchmarks.HerdRow{}
	for _, r := range rows {
		if _, ok := byKey[r.Variant]; !ok && !contains(variants, r.Variant) {
			variants = append(variants, r.Variant)
		}
		if !containsInt(sizes, r.N) {
			sizes = append(sizes, r.N)
		}
		byKey[fmt.Sprintf("%s/%d", r.Variant, r.N)] = r
	}
	cell := func(v string, n int, f func(benchmarks.HerdRow) string) string {
		if r, ok := byKey[fmt.Sprintf("%s/%d", v, n)]; ok {
			return f(r)
		}
		return "-"
	}
	sections := []struct {
		title string
		f     func(benchmarks.HerdRow) string
	}{
		{"watch notifications per leader change", func(r benchmarks.HerdRow) string { return count(r.Notifications) }},
		{"reads per leader change", func(r benchmarks.HerdRow) string { return count(r.Reads) }},
		{"failover time (virtual)", func(r benchmarks.HerdRow) string { return duration(time.Duration(r.FailoverNanos)) }},
	}
	for _, s := range sections {
		fmt.Fprintf(w, "  %s:\n", s.title)
		fmt.Fprintf(w, "    %-22s", "")
		for _, n := range sizes {
			fmt.Fprintf(w, " %10s", "N="+count(float64(n)))
		}
		fmt.Fprintln(w)
		for _, v := range variants {
			fmt.Fprintf(w, "    %-22s", v)
			for _, n := range sizes {
				fmt.Fprintf(w, " %10s", cell(v, n, s.f))
			}
			fmt.Fprintln(w)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func containsInt(list []int, n int) bool {
	for _, x := range list {
		if x == n {
			return true
		}
	}
	return false
}

// count prints a mean count with thousands separators, one decimal below 100.
func count(x float64) string {
	if x < 100 && x != float64(int64(x)) {
		return fmt.Sprintf("%.1f", x)
	}
	s := fmt.Sprintf("%d", int64(x+0.5))
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func duration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%dµs", d.Microseconds())
}
