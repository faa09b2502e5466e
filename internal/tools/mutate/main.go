package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	list        bool
	sample      int
	seed        uint64
	only        string
	killerPkg   string
	mapping     string
	timeout     time.Duration
	factor      float64
	exclude     string
	equivalent  string
	jsonPath    string
	baseline    bool
	killerFlags string
	root        string
	outDir      string
	rescore     string
	resume      string
}

func parseFlags(args []string, stderr io.Writer) (*options, []string, error) {
	fs := flag.NewFlagSet("mutate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{}
	fs.BoolVar(&o.list, "list", false, "list the mutants and exit")
	fs.IntVar(&o.sample, "sample", 0, "run only this many mutants, chosen by -seed (0: all)")
	fs.Uint64Var(&o.seed, "seed", 1, "the seed choosing the -sample")
	fs.StringVar(&o.only, "only", "", "comma-separated mutant ids to run (overrides -sample)")
	fs.StringVar(&o.killerPkg, "killer", "./property_test", "the test package that kills mutants")
	fs.StringVar(&o.mapping, "map", defaultMap, "which tests of the killer run for which package: pkg=pattern;...;*=pattern")
	// Two minutes: a kill's shrink runs to the machine's budget of checks,
	// not for a time (20,000 checks of a recipe machine take about 30s of
	// CPU, twice that on a loaded machine), and a timeout is not a kill.
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "per-mutant limit on the killer's run (not its build)")
	fs.Float64Var(&o.factor, "timeout-factor", 2.5, "raise a mutant's limit to this many times the baseline run of its test pattern, if that is above -timeout (0: -timeout alone)")
	fs.StringVar(&o.exclude, "exclude", `(^|/)internal/backendtest$`, "regexp of package directories to leave out")
	fs.StringVar(&o.equivalent, "equivalent", "internal/tools/mutate/equivalent.txt", "file of equivalent mutant ids with reasons")
	fs.StringVar(&o.jsonPath, "json", "", "write the report as JSON to this file (rewritten after each mutant)")
	fs.BoolVar(&o.baseline, "baseline", true, "first run each test pattern on the unmutated code; stop if it fails")
	fs.StringVar(&o.killerFlags, "killer-flags", "-rapid.nofailfile", "extra space-separated flags for the test binary (the default keeps rapid from writing fail files into the tree)")
	fs.StringVar(&o.root, "root", ".", "the module root")
	fs.StringVar(&o.outDir, "out", "", "keep each killer's output in this directory")
	fs.StringVar(&o.resume, "resume", "", "take the results of mutants already measured from this JSON report instead of running them again")
	fs.StringVar(&o.rescore, "rescore", "", "run nothing: read this JSON report, apply the -equivalent file again and report")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: go run ./internal/tools/mutate [flags] packages (e.g. ./recipes/...)\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	pkgs := fs.Args()
	if len(pkgs) == 0 {
		pkgs = []string{"./recipes/..."}
	}
	return o, pkgs, nil
}

func run(args []string, stdout, stderr io.Writer) error {
	o, pkgs, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	root, err := filepath.Abs(o.root)
	if err != nil {
		return err
	}
	if o.rescore != "" {
		return rescore(o, root, stdout, stderr)
	}
	tm, err := parseMap(o.mapping)
	if err != nil {
		return err
	}
	var exclude *regexp.Regexp
	if o.exclude != "" {
		if exclude, err = regexp.Compile(o.exclude); err != nil {
			return err
		}
	}
	dirs, err := packageDirs(root, pkgs, exclude)
	if err != nil {
		return err
	}
	var all []*Mutant
	for _, d := range dirs {
		ms, err := packageMutants(root, d)
		if err != nil {
			return err
		}
		all = append(all, ms...)
	}
	equiv, err := readEquivalent(o.equivalentPath(root))
	if err != nil {
		return err
	}
	ids := map[string]*Mutant{}
	for _, m := range all {
		ids[m.ID] = m
		ids[m.Key] = m
	}
	for _, id := range slices.Sorted(mapKeys(equiv)) {
		if ids[id] == nil {
			fmt.Fprintf(stderr, "mutate: warning: equivalent mutant %s matches no mutant (its line changed, or a stale line number)\n", id)
		}
	}

	chosen := sample(all, o.sample, o.seed)
	if o.only != "" {
		chosen = nil
		for id := range strings.SplitSeq(o.only, ",") {
			m := ids[strings.TrimSpace(id)]
			if m == nil {
				return fmt.Errorf("-only: no mutant %q", id)
			}
			chosen = append(chosen, m)
		}
	}
	if o.list {
		for _, m := range all {
			mark := ""
			if r, ok := equivalentOf(equiv, m); ok {
				mark = "\t[equivalent: " + r + "]"
			}
			fmt.Fprintf(stdout, "%s\t%s\t%s%s\n", m.ID, m.Key, m.Desc, mark)
		}
		fmt.Fprintf(stdout, "%d mutants in %d packages\n", len(all), len(dirs))
		return nil
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	work, err := os.MkdirTemp("", "mutate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	k := &killer{root: root, pkg: o.killerPkg, work: work, timeout: o.timeout, factor: o.factor, args: strings.Fields(o.killerFlags), outDir: o.outDir}
	if o.outDir != "" {
		if err := os.MkdirAll(o.outDir, 0o755); err != nil {
			return err
		}
	}
	rep := &Report{
		Command:   "go run ./internal/tools/mutate " + strings.Join(args, " "),
		Started:   time.Now().UTC().Format(time.RFC3339),
		Sample:    o.sample,
		Seed:      o.seed,
		Generated: len(all),
	}
	save := func() error {
		rep.summarize()
		if o.jsonPath == "" {
			return nil
		}
		return rep.writeJSON(o.jsonPath)
	}
	if o.baseline {
		rep.Baseline, err = baseline(ctx, k, tm, chosen, stderr)
		if err != nil {
			return err
		}
		k.baseline = rep.Baseline
	}
	done := map[string]Result{}
	if o.resume != "" {
		prev, err := readReport(o.resume)
		if err != nil {
			return err
		}
		for _, r := range prev.Results {
			switch r.Status {
			case Killed, Survived, Timeout, Uncompilable:
				done[r.ID] = r
			}
		}
	}
	for i, m := range chosen {
		if reason, ok := equivalentOf(equiv, m); ok {
			rep.Results = append(rep.Results, Result{Mutant: m, Status: Equivalent, Reason: reason, Checks: -1, Shrunk: -1})
			fmt.Fprintf(stderr, "[%d/%d] %s: equivalent\n", i+1, len(chosen), m.ID)
			continue
		}
		if r, ok := done[m.ID]; ok && r.Desc == m.Desc {
			r.Mutant = m
			rep.Results = append(rep.Results, r)
			fmt.Fprintf(stderr, "[%d/%d] %s: %s (from %s)\n", i+1, len(chosen), m.ID, r.Status, o.resume)
			continue
		}
		pat, err := tm.pattern(m.Pkg)
		if err != nil {
			return err
		}
		r, err := k.mutant(ctx, m, pat)
		if err != nil {
			if errors.Is(err, context.Canceled) {
				break
			}
			return fmt.Errorf("%s: %w", m.ID, err)
		}
		rep.Results = append(rep.Results, r)
		fmt.Fprintf(stderr, "[%d/%d] %s: %s in %.1fs (build %.1fs) checks %d shrunk %d %s\n",
			i+1, len(chosen), m.ID, r.Status, r.Seconds, r.Build, r.Checks, r.Shrunk, r.Failure)
		if err := save(); err != nil {
			return err
		}
	}
	for _, m := range chosen[len(rep.Results):] {
		rep.Results = append(rep.Results, Result{Mutant: m, Status: NotRun, Checks: -1, Shrunk: -1})
	}
	rep.Finished = time.Now().UTC().Format(time.RFC3339)
	if err := save(); err != nil {
		return err
	}
	rep.writeText(stdout)
	return ctx.Err()
}

// baseline builds the killer without mutants and runs each pattern the
// chosen mutants need; it fails if any of them fails, since a killer that
// fails on the original code kills every mutant. It returns each
// pattern's run time in seconds.
func baseline(ctx context.Context, k *killer, tm *testMap, chosen []*Mutant, stderr io.Writer) (map[string]float64, error) {
	pats := map[string]bool{}
	for _, m := range chosen {
		p, err := tm.pattern(m.Pkg)
		if err != nil {
			return nil, err
		}
		pats[p] = true
	}
	k.measuring = true
	defer func() { k.measuring = false }()
	bin := filepath.Join(k.work, "baseline.test")
	if err := k.build(ctx, "", bin); err != nil {
		return nil, fmt.Errorf("baseline build: %w", err)
	}
	out := map[string]float64{}
	for _, p := range slices.Sorted(mapKeys(pats)) {
		o, err := k.run(ctx, bin, p)
		if err != nil {
			return nil, err
		}
		if !o.passed {
			return nil, fmt.Errorf("baseline: %s -test.run %q does not pass on the original code (timed out: %v):\n%s", k.pkg, p, o.timedOut, o.output)
		}
		out[p] = round(o.elapsed)
		fmt.Fprintf(stderr, "baseline %q passed in %.1fs\n", p, o.elapsed.Seconds())
	}
	return out, nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// equivalentPath is the -equivalent file, relative to the module root
// unless absolute.
func (o *options) equivalentPath(root string) string {
	if o.equivalent == "" || filepath.IsAbs(o.equivalent) {
		return o.equivalent
	}
	return filepath.Join(root, o.equivalent)
}

// rescore reads the JSON report o.rescore, marks the mutants the
// -equivalent file lists as equivalent (and those it no longer lists as
// not run), and reports again: for survivors reviewed after a run.
func rescore(o *options, root string, stdout, stderr io.Writer) error {
	rep, err := readReport(o.rescore)
	if err != nil {
		return err
	}
	equiv, err := readEquivalent(o.equivalentPath(root))
	if err != nil {
		return err
	}
	for i := range rep.Results {
		r := &rep.Results[i]
		if reason, ok := equivalentOf(equiv, r.Mutant); ok {
			r.Status, r.Reason = Equivalent, reason
		} else if r.Status == Equivalent {
			fmt.Fprintf(stderr, "mutate: %s is no longer listed as equivalent and was not run\n", r.ID)
			r.Status, r.Reason = NotRun, ""
		}
	}
	rep.summarize()
	if o.jsonPath != "" {
		if err := rep.writeJSON(o.jsonPath); err != nil {
			return err
		}
	}
	rep.writeText(stdout)
	return nil
}

// readReport reads a JSON report.
func readReport(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rep := &Report{}
	if err := json.Unmarshal(data, rep); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rep, nil
}
