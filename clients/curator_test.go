package clients_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// curatorScenarios are the scenarios of testdata/CuratorRecipes.java, and
// whether each needs the control endpoint (it runs only where there is one).
var curatorScenarios = []struct {
	name         string
	needsControl bool
}{
	{"mutex", false},
	{"leader", false},
	{"queue", false},
	{"cache", false},
	{"semaphore", false},
	{"double-barrier", false},
	{"transaction", false},
	{"admin", false},
	{"expiry", true},
	{"disconnect", true},
	{"lost-create", true},
	{"pause", true},
}

// javaBuild is the one compilation of the Java programs per test binary.
var javaBuild struct {
	once sync.Once
	dir  string // classes, under a directory removed by removeJavaBuild
	out  string // javac's output when it failed
	err  error
}

// compileJava compiles the .java files of testdata (the test's Curator
// program) once per test binary and returns the classes directory.
func compileJava(t *testing.T) string {
	t.Helper()
	javaBuild.once.Do(func() {
		javaBuild.dir, javaBuild.err = os.MkdirTemp("", "zksim-clients-java-")
		if javaBuild.err != nil {
			return
		}
		out, err := exec.Command("javac", "-d", javaBuild.dir, "-cp", curatorClasspath(),
			"testdata/CuratorRecipes.java").CombinedOutput()
		javaBuild.out, javaBuild.err = string(out), err
	})
	if javaBuild.err != nil {
		t.Fatalf("javac: %v\n%s", javaBuild.err, javaBuild.out)
	}
	return javaBuild.dir
}

// removeJavaBuild removes the compiled classes; TestMain calls it.
func removeJavaBuild() {
	if javaBuild.dir != "" {
		_ = os.RemoveAll(javaBuild.dir)
	}
}

// curatorClasspath is the Debian jars Curator and ZooKeeper's client need.
func curatorClasspath(extra ...string) string {
	cp := append([]string(nil), extra...)
	for _, jar := range curatorJars {
		cp = append(cp, filepath.Join(debianJava, jar))
	}
	return strings.Join(cp, string(os.PathListSeparator))
}

// curatorTimeout bounds the one JVM that runs every scenario for a backend.
const curatorTimeout = 4 * time.Minute

var curatorVerdict = regexp.MustCompile(`(?m)^(PASS|SKIP|FAIL) (\S+)(?:: (.*))?$`)

// TestCurator compiles the Curator program with javac, runs every scenario
// in one JVM per backend (a JVM per scenario costs a second or more each)
// and reports each scenario as a subtest.
func TestCurator(t *testing.T) {
	needJDK(t)
	classes := compileJava(t)
	forEachBackend(t, func(t *testing.T, b backend) {
		var names []string
		for _, sc := range curatorScenarios {
			if sc.needsControl && b.control == "" {
				t.Logf("%s not run: it needs a control endpoint", sc.name)
				continue
			}
			names = append(names, sc.name)
		}
		r := runWithin(t, curatorTimeout, b, ".", "java",
			append([]string{"-cp", curatorClasspath(classes), "CuratorRecipes"}, names...)...)
		sections := curatorSections(r.stdout)
		for _, sc := range names {
			t.Run(sc, func(t *testing.T) {
				out, ok := sections[sc]
				m := curatorVerdict.FindStringSubmatch(out)
				switch {
				case !ok || m == nil || m[2] != sc:
					t.Fatalf("curator %s: no verdict against %s:\n%s", sc, b.name, r)
				case m[1] == "FAIL":
					t.Fatalf("curator %s failed against %s:\n%s", sc, b.name, out)
				case m[1] == "SKIP" && b.control != "":
					t.Fatalf("curator %s skipped against %s, which has a control endpoint: %s", sc, b.name, m[3])
				case m[1] == "SKIP":
					t.Skipf("curator %s: %s", sc, m[3])
				}
			})
		}
		if failed := slices.ContainsFunc(names, func(sc string) bool {
			return strings.HasPrefix(curatorVerdict.FindString(sections[sc]), "FAIL")
		}); r.code != 0 && !failed {
			t.Fatalf("curator exited %d with no scenario failed:\n%s", r.code, r)
		}
	})
}

// curatorSections splits the program's output at its "=== RUN scenario"
// lines.
func curatorSections(stdout string) map[string]string {
	sections := map[string]string{}
	var cur string
	for line := range strings.Lines(stdout) {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "=== RUN "); ok {
			cur = name
			continue
		}
		if cur != "" {
			sections[cur] += line
		}
	}
	return sections
}
