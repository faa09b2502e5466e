package clients_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// processTimeout bounds every client program a test runs; the program is
// killed after it. The programs bound their own waits at 20 seconds.
const processTimeout = 60 * time.Second

// Where Debian puts the tools.
const (
	python     = "/usr/bin/python3" // Debian's python3-* packages load only here
	zkCli      = "/usr/share/zookeeper/bin/zkCli.sh"
	debianJava = "/usr/share/java"
)

// curatorJars is the classpath of the Curator programs, under debianJava.
var curatorJars = []string{
	"curator-recipes.jar", "curator-framework.jar", "curator-client.jar",
	"zookeeper.jar", "zookeeper-jute.jar", "guava.jar", "slf4j-api.jar",
}

// installHint says how to get every tool these tests use.
const installHint = "apt-get install python3-kazoo python3-pytest libcurator-recipes-java libcurator-framework-java junit5 " +
	"libcurator-client-java default-jdk-headless zookeeper (or run .ci/run as root)"

// underCI reports whether the real-client tests are required (CI=true).
func underCI() bool { return os.Getenv("CI") == "true" }

// need skips the test when a tool is missing (err != nil), or fails it
// under CI=true.
func need(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if underCI() {
		t.Fatalf("%s: %v. CI=true requires the real-client tests to run: %s", what, err, installHint)
	}
	t.Skipf("%s: %v; skipping (install with: %s)", what, err, installHint)
}

// needKazoo checks that Debian's python3 imports kazoo.
func needKazoo(t testing.TB) {
	t.Helper()
	err := exec.Command(python, "-c", "import kazoo.client").Run()
	if err != nil {
		err = fmt.Errorf("%s cannot import kazoo: %w", python, err)
	}
	need(t, "kazoo", err)
}

// needJDK checks for javac, java and the Curator jars.
func needJDK(t testing.TB) {
	t.Helper()
	var err error
	for _, tool := range []string{"javac", "java"} {
		if _, e := exec.LookPath(tool); e != nil {
			err = errors.Join(err, e)
		}
	}
	for _, jar := range curatorJars {
		if _, e := os.Stat(debianJava + "/" + jar); e != nil {
			err = errors.Join(err, e)
		}
	}
	need(t, "Curator and a JDK", err)
}

// needZkCli checks for zkCli.sh.
func needZkCli(t testing.TB) {
	t.Helper()
	_, err := os.Stat(zkCli)
	need(t, "zkCli.sh", err)
}

// result is what a finished client program left.
type result struct {
	cmd            string
	code           int
	stdout, stderr string
}

// String shows the program's outcome and output, for failure messages.
func (r result) String() string {
	return fmt.Sprintf("%s: exit status %d\n--- stdout:\n%s\n--- stderr:\n%s", r.cmd, r.code, r.stdout, filterNoise(r.stderr))
}

// filterNoise drops the lines SLF4J prints when no logger is bound.
func filterNoise(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if !strings.HasPrefix(line, "SLF4J:") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// run runs a program in dir with the backend's environment and returns
// its result; it fails the test only when the program cannot be started or
// outlives processTimeout.
func run(t testing.TB, b backend, dir string, name string, args ...string) result {
	t.Helper()
	return runWithin(t, processTimeout, b, dir, name, args...)
}

// runWithin is run with another time limit than processTimeout.
func runWithin(t testing.TB, limit time.Duration, b backend, dir string, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = b.env()
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{cmd: name + " " + strings.Join(args, " "), stdout: stdout.String(), stderr: stderr.String()}
	if ctx.Err() != nil {
		t.Fatalf("%s: killed after %v\n%s", r.cmd, limit, r)
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("%s: %v", r.cmd, err)
	}
	return r
}
