package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// herdResult is one row of benchmarks' herd.json.
type herdResult struct {
	Variant       string  `json:"variant"`
	N             int     `json:"n"`
	Notifications float64 `json:"notifications_per_change"`
	Reads         float64 `json:"reads_per_change"`
	ReplyBytes    float64 `json:"bytes_per_change"`
	FailoverNanos int64   `json:"failover_ns"`
	Changes       int     `json:"changes"`
}

// herdReport is benchmarks' herd.json.
type herdReport struct {
	CostModel string       `json:"cost_model"`
	Results   []herdResult `json:"results"`
}

// runHerd runs the herd report test for the given sizes, writing into
// outDir, and prints a line as each run ends.
func runHerd(ctx context.Context, root, outDir, sizes string, log io.Writer, verbose io.Writer) (herdReport, error) {
	args := []string{"./benchmarks", "-run", "^TestHerdReport$", "-count=1", "-v", "-timeout=30m",
		"-herd.write", "-herd.n=" + sizes, "-herd.out=" + outDir}
	start := time.Now()
	failed := false
	other, err := goTest(ctx, root, args, verbose, func(ev testEvent) {
		if ev.Action == "fail" && ev.Test != "" {
			failed = true
		}
		if i := strings.Index(ev.Output, "herd: done "); i >= 0 {
			fmt.Fprintf(log, "  [%5.1fs] %s\n", time.Since(start).Seconds(), strings.TrimSpace(ev.Output[i+len("herd: done "):]))
		}
		if ev.Action == "output" && failed && verbose == nil {
			fmt.Fprint(log, "    "+ev.Output)
		}
	})
	if err != nil {
		return herdReport{}, fmt.Errorf("the herd benchmark failed: %v\n%s", err, other)
	}
	data, err := os.ReadFile(filepath.Join(outDir, "herd.json"))
	if err != nil {
		return herdReport{}, err
	}
	var rep herdReport
	if err := json.Unmarshal(data, &rep); err != nil {
		return herdReport{}, fmt.Errorf("reading herd.json: %w", err)
	}
	return rep, nil
}

// printHerdSummary prints, for each variant, notifications per change and
// failover time at every N.
func printHerdSummary(w io.Writer, rep herdReport) {
	var variants []string
	var sizes []int
	byKey := map[string]herdResult{}
	for _, r := range rep.Results {
		if _, ok := byKey[r.Variant]; !ok && !contains(variants, r.Variant) {
			variants = append(variants, r.Variant)
		}
		if !containsInt(sizes, r.N) {
			sizes = append(sizes, r.N)
		}
		byKey[fmt.Sprintf("%s/%d", r.Variant, r.N)] = r
	}
	cell := func(v string, n int, f func(herdResult) string) string {
		if r, ok := byKey[fmt.Sprintf("%s/%d", v, n)]; ok {
			return f(r)
		}
		return "-"
	}
	sections := []struct {
		title string
		f     func(herdResult) string
	}{
		{"watch notifications per leader change", func(r herdResult) string { return count(r.Notifications) }},
		{"reads per leader change", func(r herdResult) string { return count(r.Reads) }},
		{"bytes returned per leader change", func(r herdResult) string { return byteSize(r.ReplyBytes) }},
		{"failover time (virtual)", func(r herdResult) string { return duration(time.Duration(r.FailoverNanos)) }},
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

func byteSize(x float64) string {
	switch {
	case x >= 1e9:
		return fmt.Sprintf("%.1f GB", x/1e9)
	case x >= 1e6:
		return fmt.Sprintf("%.1f MB", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.1f kB", x/1e3)
	}
	return fmt.Sprintf("%.0f B", x)
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
