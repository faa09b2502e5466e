package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
)

// Counts sums up a set of results.
type Counts struct {
	Total        int `json:"total"`
	Killed       int `json:"killed"`
	Survived     int `json:"survived"`
	Timeout      int `json:"timeout"`
	Uncompilable int `json:"uncompilable"`
	Equivalent   int `json:"equivalent"`
	NotRun       int `json:"not_run"`
	// Score is killed / (total - equivalent - uncompilable - not run), in
	// percent; -1 if nothing counts.
	Score float64 `json:"score"`
	// Fast counts the mutants killed within FastSeconds whose failing
	// schedule (shrunk, or replayed from a fail file) has at most
	// FastActions actions, or that failed without one (a panic);
	// FastScore is their share of Score's denominator.
	Fast      int     `json:"fast"`
	FastScore float64 `json:"fast_score"`
}

// The bounds of a fast kill (Counts.Fast), issue 24's: killed within 30 s
// of the killer's run, with a failing schedule of at most 15 actions.
const (
	FastSeconds = 30
	FastActions = 15
)

func (c *Counts) add(r Result) {
	c.Total++
	switch r.Status {
	case Killed:
		c.Killed++
		if r.Seconds <= FastSeconds && r.Shrunk <= FastActions {
			c.Fast++
		}
	case Survived:
		c.Survived++
	case Timeout:
		c.Timeout++
	case Uncompilable:
		c.Uncompilable++
	case Equivalent:
		c.Equivalent++
	case NotRun:
		c.NotRun++
	}
	c.Score, c.FastScore = -1, -1
	if d := c.Total - c.Equivalent - c.Uncompilable - c.NotRun; d > 0 {
		c.Score = 100 * float64(c.Killed) / float64(d)
		c.FastScore = 100 * float64(c.Fast) / float64(d)
	}
}

// Dist is a distribution of values: quantiles and a histogram.
type Dist struct {
	N      int       `json:"n"`
	Min    float64   `json:"min"`
	Median float64   `json:"median"`
	P90    float64   `json:"p90"`
	Max    float64   `json:"max"`
	Bins   []float64 `json:"bins"`   // upper bounds; the last bin is open
	Counts []int     `json:"counts"` // len(Bins)+1
}

// distribution returns the distribution of vs over bins.
func distribution(vs []float64, bins []float64) Dist {
	d := Dist{N: len(vs), Bins: bins, Counts: make([]int, len(bins)+1)}
	if len(vs) == 0 {
		return d
	}
	s := slices.Sorted(slices.Values(vs))
	q := func(p float64) float64 { return s[int(p*float64(len(s)-1)+0.5)] }
	d.Min, d.Median, d.P90, d.Max = s[0], q(0.5), q(0.9), s[len(s)-1]
	for _, v := range s {
		i, _ := slices.BinarySearch(bins, v)
		d.Counts[i]++
	}
	return d
}

// Report is the machine-readable result of a run.
type Report struct {
	Command   string             `json:"command"`
	Started   string             `json:"started"`
	Finished  string             `json:"finished,omitempty"`
	Sample    int                `json:"sample"`
	Seed      uint64             `json:"seed"`
	Generated int                `json:"generated"`
	Baseline  map[string]float64 `json:"baseline_s,omitempty"`
	Summary   Counts             `json:"summary"`
	Packages  map[string]Counts  `json:"packages"`
	KillTime  Dist               `json:"kill_time_s"`
	Shrunk    Dist               `json:"shrunk_steps"`
	Results   []Result           `json:"results"`
}

var (
	timeBins   = []float64{5, 10, 30, 60}
	shrunkBins = []float64{5, 10, 15, 30}
)

// summarize fills in the counts and distributions of rep from its results.
func (rep *Report) summarize() {
	slices.SortFunc(rep.Results, func(a, b Result) int {
		return cmp.Or(strings.Compare(a.File, b.File), a.Line-b.Line, a.Col-b.Col, strings.Compare(a.Op, b.Op))
	})
	rep.Summary = Counts{Score: -1, FastScore: -1}
	rep.Packages = map[string]Counts{}
	var times, shrunk []float64
	for _, r := range rep.Results {
		rep.Summary.add(r)
		c := rep.Packages[r.Pkg]
		c.add(r)
		rep.Packages[r.Pkg] = c
		if r.Status == Killed {
			times = append(times, r.Seconds)
			if r.Shrunk >= 0 {
				shrunk = append(shrunk, float64(r.Shrunk))
			}
		}
	}
	rep.KillTime = distribution(times, timeBins)
	rep.Shrunk = distribution(shrunk, shrunkBins)
}

// writeJSON writes rep to path.
func (rep *Report) writeJSON(path string) error {
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// writeText writes rep as tables: one per package, then the summary.
func (rep *Report) writeText(w io.Writer) {
	pkgs := slices.Sorted(func(yield func(string) bool) {
		for p := range rep.Packages {
			if !yield(p) {
				return
			}
		}
	})
	for _, p := range pkgs {
		fmt.Fprintf(w, "\n## %s\n", p)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "mutant\tstatus\tkill s\tcpu s\town s\tchecks\tshrunk\tchange")
		for _, r := range rep.Results {
			if r.Pkg != p {
				continue
			}
			secs, cpu, own, checks, shrunk := "-", "-", "-", "-", "-"
			if r.Status == Killed && r.Own > 0 {
				own = fmt.Sprintf("%.1f", r.Own)
			}
			if r.Status == Killed || r.Status == Survived || r.Status == Timeout {
				secs = fmt.Sprintf("%.1f", r.Seconds)
				if r.CPU > 0 {
					cpu = fmt.Sprintf("%.1f", r.CPU)
				}
			}
			if r.Checks >= 0 {
				checks = fmt.Sprint(r.Checks)
			}
			if r.Replay != "" {
				checks = "replay"
			}
			if r.Shrunk >= 0 {
				shrunk = fmt.Sprint(r.Shrunk)
			}
			change := r.Desc
			if r.Reason != "" {
				change += " (" + r.Reason + ")"
			}
			if r.Replay != "" {
				change += " [replay of " + r.Replay + "]"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", strings.TrimPrefix(r.ID, p+"/"), r.Status, secs, cpu, own, checks, shrunk, change)
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "\n## Summary\n")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "package\ttotal\tkilled\tsurvived\ttimeout\tuncompilable\tequivalent\tnot run\tscore\tfast\tfast score\t")
	row := func(name string, c Counts) {
		score, fast := "-", "-"
		if c.Score >= 0 {
			score = fmt.Sprintf("%.1f%%", c.Score)
			fast = fmt.Sprintf("%.1f%%", c.FastScore)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%d\t%s\t\n", name, c.Total, c.Killed, c.Survived, c.Timeout, c.Uncompilable, c.Equivalent, c.NotRun, score, c.Fast, fast)
	}
	for _, p := range pkgs {
		row(p, rep.Packages[p])
	}
	row("all", rep.Summary)
	tw.Flush()
	fmt.Fprintf(w, "\nscore = killed / (total - equivalent - uncompilable - not run); a timeout is not a kill\n")
	fmt.Fprintf(w, "cpu s = the CPU time of the killer's run; own s = the failing test's own time (kill s less the tests run before it, one at a time)\n")
	fmt.Fprintf(w, "fast = killed within %ds (wall time of the killer's run) with a failing schedule of at most %d actions (or none: a panic); fast score = fast / the same denominator\n", FastSeconds, FastActions)
	if n := rep.replays(); n > 0 {
		fmt.Fprintf(w, "%d kills replayed a committed fail file (checks \"replay\"): their schedule is the file's, run under the mutant, not shrunk\n", n)
	}
	fmt.Fprintf(w, "time to kill (s): %s\n", rep.KillTime.format("%.1f", "s"))
	fmt.Fprintf(w, "shrunk schedule (actions): %s\n", rep.Shrunk.format("%.0f", ""))
}

// replays counts the kills that replayed a fail file.
func (rep *Report) replays() int {
	n := 0
	for _, r := range rep.Results {
		if r.Status == Killed && r.Replay != "" {
			n++
		}
	}
	return n
}

// format renders d on one line: quantiles, then the histogram.
func (d Dist) format(vf, unit string) string {
	if d.N == 0 {
		return "none"
	}
	f := func(v float64) string { return fmt.Sprintf(vf, v) }
	var b strings.Builder
	fmt.Fprintf(&b, "n=%d min %s, median %s, p90 %s, max %s;", d.N, f(d.Min), f(d.Median), f(d.P90), f(d.Max))
	lo := "0"
	for i, c := range d.Counts {
		if i < len(d.Bins) {
			fmt.Fprintf(&b, " %s-%s%s: %d,", lo, f(d.Bins[i]), unit, c)
			lo = f(d.Bins[i])
		} else {
			fmt.Fprintf(&b, " >%s%s: %d", lo, unit, c)
		}
	}
	return b.String()
}
