package harness

import (
	"bytes"
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
// line per trace (a digest, say) to the file. CompareTraceDumps returns
// the file's lines. It blocks until the four runs have ended.
//
// Call it from a test that skips itself when ZKSIM_TRACE_OUT is set (it
// runs inside its own dumps otherwise); see TestElectorDeterminism.
func CompareTraceDumps(t *testing.T, dump string, checks int) []string {
	t.Helper()
	dir := t.TempDir()
	env := func(out string) []string {
		return append(os.Environ(), "ZKSIM_TRACE_OUT="+out, "ZKSIM_TRACE_CHECKS="+strconv.Itoa(checks))
	}
	run := "-run=^" + dump + "$"
	var files []string
	for _, cpu := range []string{"1", "2", "4"} {
		out := filepath.Join(dir, "cpu"+cpu)
		cmd := exec.Command(os.Args[0], "-test.run=^"+dump+"$", "-test.cpu="+cpu, "-test.count=1")
		cmd.Env = env(out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("-cpu %s: %v\n%s", cpu, err, b)
		}
		files = append(files, out)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command for the -race run: %v", err)
	}
	race := filepath.Join(dir, "race")
	cmd := exec.Command(goTool, "test", "-race", "-count=1", run, ".")
	cmd.Env = env(race)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("-race: %v\n%s", err, b)
	}
	files = append(files, race)
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
