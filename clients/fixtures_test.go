package clients_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The fixtures of clients/fixtures: a pytest fixture module and a JUnit 5
// extension that run zksim serve for a test, each with tests of its own
// that use only the fixture and the control endpoint.
const (
	pytestDir  = "fixtures/python"
	junitSrc   = "fixtures/java/src"
	junitTests = "fixtures/java/test"
	junitClass = "zksim.fixture.ZksimFixtureTest"
)

// junitJars are the JUnit 5 jars (Debian's junit5) under debianJava: the
// API to compile against, and the console launcher that runs the tests.
var junitJars = []string{"junit-jupiter-api.jar", "junit-platform-commons.jar", "opentest4j.jar", "apiguardian-api.jar"}

const junitConsole = "junit-platform-console-standalone.jar"

// fixtureTimeout bounds one run of a fixture's tests.
const fixtureTimeout = 3 * time.Minute

// buildZksim builds cmd/zksim into a temporary directory and returns the
// binary: the fixtures start it, as $ZKSIM_BIN.
func buildZksim(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "zksim")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/zksim").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ../cmd/zksim: %v\n%s", err, out)
	}
	return bin
}

// runFixture runs name args in dir with ZKSIM_BIN=bin and returns its
// output and exit status; it fails the test if the program cannot start or
// outlives fixtureTimeout.
func runFixture(t *testing.T, bin, dir, name string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), fixtureTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ZKSIM_BIN="+bin, "PYTHONDONTWRITEBYTECODE=1")
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %s: killed after %v\n%s", name, strings.Join(args, " "), fixtureTimeout, out.String())
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return filterNoise(out.String()), exit.ExitCode()
	case err != nil:
		t.Fatalf("%s: %v", name, err)
	}
	return filterNoise(out.String()), 0
}

// countDefs counts the matches of def in file.
func countDefs(t *testing.T, file string, def *regexp.Regexp) int {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return len(def.FindAllString(string(src), -1))
}

// TestPytestFixture runs the pytest fixture module's own tests with kazoo:
// every test passes, none skipped; the fixture started zksim serve
// itself, and reset it between tests.
func TestPytestFixture(t *testing.T) {
	needKazoo(t)
	err := exec.Command(python, "-c", "import pytest").Run()
	if err != nil {
		err = fmt.Errorf("%s cannot import pytest (Debian python3-pytest): %w", python, err)
	}
	need(t, "pytest", err)
	bin := buildZksim(t)
	want := countDefs(t, filepath.Join(pytestDir, "test_zksim_fixture.py"), regexp.MustCompile(`(?m)^def test_\w+\(zksim(_ensemble)?\):`))
	if want < 5 {
		t.Fatalf("%s: %d tests, want at least 5", pytestDir, want)
	}
	out, code := runFixture(t, bin, pytestDir, python, "-m", "pytest", "-v", "-p", "no:cacheprovider", ".")
	summary := regexp.MustCompile(`(?m)^=+ (.*) in [\d.]+s =+$`).FindStringSubmatch(out)
	if code != 0 || summary == nil || summary[1] != fmt.Sprintf("%d passed", want) &&
		!strings.HasPrefix(summary[1], fmt.Sprintf("%d passed, ", want)) || strings.Contains(out, " SKIPPED") {
		t.Fatalf("pytest: exit status %d, want %d passed and nothing else:\n%s", code, want, out)
	}
	if strings.Contains(summary[1], "failed") || strings.Contains(summary[1], "error") || strings.Contains(summary[1], "skipped") {
		t.Fatalf("pytest: %s\n%s", summary[1], out)
	}
	if _, err := os.Stat(filepath.Join(pytestDir, "__pycache__")); err == nil {
		t.Errorf("pytest left %s/__pycache__ in the repository", pytestDir)
	}
}

// TestJUnitExtension compiles the JUnit 5 extension and its own tests with
// Curator, and runs them with JUnit's console launcher: every test passes.
func TestJUnitExtension(t *testing.T) {
	needJDK(t)
	var err error
	for _, jar := range append(append([]string(nil), junitJars...), junitConsole) {
		if _, e := os.Stat(filepath.Join(debianJava, jar)); e != nil {
			err = errors.Join(err, e)
		}
	}
	need(t, "JUnit 5 (Debian junit5)", err)
	bin := buildZksim(t)
	classes := t.TempDir()
	var jars []string
	for _, jar := range junitJars {
		jars = append(jars, filepath.Join(debianJava, jar))
	}
	srcs, _ := filepath.Glob(filepath.Join(junitSrc, "zksim", "fixture", "*.java"))
	tests, _ := filepath.Glob(filepath.Join(junitTests, "zksim", "fixture", "*.java"))
	args := append([]string{"-Xlint:all,-path", "-Werror", "-d", classes, "-cp", curatorClasspath(jars...)}, append(srcs, tests...)...)
	if out, err := exec.Command("javac", args...).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	want := countDefs(t, filepath.Join(junitTests, "zksim", "fixture", "ZksimFixtureTest.java"), regexp.MustCompile(`(?m)^    @Test$`))
	if want < 5 {
		t.Fatalf("ZksimFixtureTest: %d tests, want at least 5", want)
	}
	out, code := runFixture(t, bin, ".", "java", "-jar", filepath.Join(debianJava, junitConsole),
		"--disable-banner", "--disable-ansi-colors", "--details=tree",
		"-cp", curatorClasspath(classes), "--select-class", junitClass)
	count := func(what string) string {
		m := regexp.MustCompile(`\[\s*(\d+) tests ` + what + `\s*\]`).FindStringSubmatch(out)
		if m == nil {
			return "?"
		}
		return m[1]
	}
	w := fmt.Sprint(want)
	if code != 0 || count("found") != w || count("successful") != w || count("failed") != "0" || count("skipped") != "0" || count("aborted") != "0" {
		t.Fatalf("JUnit: exit status %d, want %d tests found and successful:\n%s", code, want, out)
	}
}
