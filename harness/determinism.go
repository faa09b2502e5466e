package harness

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// CompareTraceDumps is the determinism check of a machine: it runs the
// test named dump of the running test binary again under -cpu 1, 2 and 4,
// and once more with go test -race in the current directory, and fails t
// unless the four runs wrote the same file, byte for byte. Each run gets
// ZKSIM_TRACE_OUT (the file to write) and ZKSIM_TRACE_CHECKS (checks) in
// its environment; dump is expected to run that many checks and write a
// line per trace (a digest, say) to the file. The four runs are processes
// of their own, started at once (the -race run, which builds its test
// binary first, takes longest; the others run beside it). CompareTraceDumps
// returns the file's lines. It blocks until the four runs have ended.
//
// Call it from a test that skips itself when ZKSIM_TRACE_OUT is set (it
// runs inside its own dumps otherwise); see TestElectorDeterminism.
func CompareTraceDumps(t *testing.T, dump string, checks int) []string {
	t.Helper()
	dir := t.TempDir()
	env := func(out string) []string {
		return append(os.Environ(), "ZKSIM_TRACE_OUT="+out, "ZKSIM_TRACE_CHECKS="+strconv.Itoa(checks))
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command for the -race run: %v", err)
	}
	type dumpRun struct {
		name string // "-cpu 1", ..., "-race"
		out  string // the file it writes
		cmd  *exec.Cmd
	}
	var runs []dumpRun
	for _, cpu := range []string{"1", "2", "4"} {
		out := filepath.Join(dir, "cpu"+cpu)
		cmd := exec.Command(os.Args[0], "-test.run=^"+dump+"$", "-test.cpu="+cpu, "-test.count=1")
		runs = append(runs, dumpRun{"-cpu " + cpu, out, cmd})
	}
	race := filepath.Join(dir, "race")
	runs = append(runs, dumpRun{"-race", race, exec.Command(goTool, "test", "-race", "-count=1", "-run=^"+dump+"$", ".")})
	outputs := make([]bytes.Buffer, len(runs))
	for i, r := range runs {
		r.cmd.Env = env(r.out)
		r.cmd.Stdout, r.cmd.Stderr = &outputs[i], &outputs[i]
		if err := r.cmd.Start(); err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
	}
	var failed []string
	for i, r := range runs {
		if err := r.cmd.Wait(); err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v\n%s", r.name, err, outputs[i].Bytes()))
		}
	}
	if len(failed) > 0 {
		t.Fatalf("%s", strings.Join(failed, "\n"))
	}
	files := make([]string, len(runs))
	for i, r := range runs {
		files[i] = r.out
	}
	want, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files[1:] {
		got, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(got, want) {
			continue
		}
		a, b := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
		for i := range min(len(a), len(b)) {
			if a[i] != b[i] {
				t.Fatalf("%s differs from %s at trace %d: %s vs %s", filepath.Base(f), filepath.Base(files[0]), i+1, b[i], a[i])
			}
		}
		t.Fatalf("%s differs from %s in length", filepath.Base(f), filepath.Base(files[0]))
	}
	return strings.Split(strings.TrimSuffix(string(want), "\n"), "\n")
}

// Trace runs the one check of rapid's seed, without shrinking and without
// a fail file, and returns its trace and whether it failed. It does not
// fail t: a failing check's trace is recorded like any other (a dump of
// traces for CompareTraceDumps, say).
func Trace[P any](t *testing.T, m Machine[P], seed uint64) (trace string, failed bool) {
	t.Helper()
	r := newRunner(t, m)
	r.sink = func(tr string) {
		if trace == "" {
			trace = tr
		}
	}
	defer setFlags(t, map[string]string{
		"rapid.checks": "1", "rapid.seed": strconv.FormatUint(seed, 10), "rapid.shrinktime": "1ms",
		"rapid.nofailfile": "true", "rapid.failfile": "",
	})()
	c := &recorder{name: t.Name()}
	rapid.Check(c, r.property)
	return trace, c.Failed()
}
