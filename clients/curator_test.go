package clients_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
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
	{"expiry", true},
	{"disconnect", true},
	{"lost-create", true},
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

var curatorVerdict = regexp.MustCompile(`(?m)^(PASS|SKIP|FAIL) (\S+)(?:: (.*))?$`)

// TestCurator compiles the Curator program with javac and runs each
// scenario as its own JVM.
func TestCurator(t *testing.T) {
	needJDK(t)
	classes := compileJava(t)
	forEachBackend(t, func(t *testing.T, b backend) {
		for _, scenario := range curatorScenarios {
			sc := scenario.name
			if scenario.needsControl && b.control == "" {
				t.Logf("%s not run: it needs a control endpoint", sc)
				continue
			}
			t.Run(sc, func(t *testing.T) {
				r := run(t, b, ".", "java", "-cp", curatorClasspath(classes), "CuratorRecipes", sc)
				m := curatorVerdict.FindStringSubmatch(r.stdout)
				switch {
				case r.code != 0 || m == nil || m[1] == "FAIL" || m[2] != sc:
					t.Fatalf("curator %s failed against %s:\n%s", sc, b.name, r)
				case m[1] == "SKIP" && b.control != "":
					t.Fatalf("curator %s skipped against %s, which has a control endpoint: %s", sc, b.name, m[3])
				case m[1] == "SKIP":
					t.Skipf("curator %s: %s", sc, m[3])
				}
			})
		}
	})
}
