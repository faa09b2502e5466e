package clients_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// kazooFile is the kazoo test program, relative to the package directory.
const kazooFile = "testdata/kazoo_test.py"

var (
	kazooTestDef = regexp.MustCompile(`(?m)^    def (test_\w+)\(self\):`)
	// unittest's last line: "OK", "OK (skipped=1)", "FAILED (failures=1)".
	unittestSummary = regexp.MustCompile(`(?m)^(OK|FAILED)(?: \((.*)\))?\s*$`)
	unittestRan     = regexp.MustCompile(`(?m)^Ran (\d+) tests? in `)
	unittestSkip    = regexp.MustCompile(`\.\.\. skipped ['"](.*)['"]`)
)

// kazooTests lists the test_ methods of the kazoo program, in file order.
func kazooTests(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile(kazooFile)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range kazooTestDef.FindAllStringSubmatch(string(src), -1) {
		names = append(names, m[1])
	}
	if len(names) < 10 {
		t.Fatalf("%s: found %d test methods, want at least 10: %v", kazooFile, len(names), names)
	}
	return names
}

// kazooNeedsControl reports whether a test of the kazoo program needs the
// control endpoint (its name starts test_control_).
func kazooNeedsControl(name string) bool { return strings.HasPrefix(name, "test_control_") }

// TestKazoo runs each kazoo recipe test as its own python3 process. The
// test_control_ methods run only where there is a control endpoint.
func TestKazoo(t *testing.T) {
	needKazoo(t)
	names := kazooTests(t)
	forEachBackend(t, func(t *testing.T, b backend) {
		for _, name := range names {
			if kazooNeedsControl(name) && b.control == "" {
				t.Logf("%s not run: it needs a control endpoint", name)
				continue
			}
			t.Run(strings.TrimPrefix(name, "test_"), func(t *testing.T) {
				runKazoo(t, b, name)
			})
		}
	})
}

// runKazoo runs one test method and reads unittest's verdict. A skip is
// allowed only where the backend has no control endpoint.
func runKazoo(t *testing.T, b backend, name string) {
	t.Helper()
	r := run(t, b, "testdata", python, "-W", "ignore::DeprecationWarning",
		"kazoo_test.py", "-v", "KazooRecipes."+name)
	ran := unittestRan.FindStringSubmatch(r.stderr)
	sum := unittestSummary.FindStringSubmatch(r.stderr)
	switch {
	case r.code != 0 || sum == nil || sum[1] != "OK":
		t.Fatalf("kazoo %s failed against %s:\n%s", name, b.name, r)
	case ran == nil || ran[1] != "1":
		t.Fatalf("kazoo %s: want 1 test run:\n%s", name, r)
	case strings.Contains(sum[2], "skipped"):
		reason := "?"
		if m := unittestSkip.FindStringSubmatch(r.stderr); m != nil {
			reason = m[1]
		}
		if b.control != "" {
			t.Fatalf("kazoo %s skipped against %s, which has a control endpoint: %s", name, b.name, reason)
		}
		t.Skipf("kazoo %s: %s", name, reason)
	}
}
