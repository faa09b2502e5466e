package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zksim/zksim/explore"
)

// TestInstalled installs zksim as `go install` does (GOBIN=$tmp go install
// ./cmd/zksim) and runs each command of the installed binary in a
// directory outside the repository: it needs no source tree.
func TestInstalled(t *testing.T) {
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("-short: installing and running zksim takes a compile")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("no go command: ", err)
	}
	gobin := t.TempDir()
	install := exec.Command("go", "install", ".")
	install.Env = append(os.Environ(), "GOBIN="+gobin)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("GOBIN=%s go install ./cmd/zksim: %v\n%s", gobin, err, out)
	}
	bin := filepath.Join(gobin, "zksim")
	work := t.TempDir() // outside the repository: no go.mod above it
	if _, err := os.Stat(filepath.Join(work, "..", "go.mod")); err == nil {
		t.Fatalf("%s is inside a module", work)
	}
	run := func(t *testing.T, wantStatus int, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "TMPDIR="+work) // where a directory left behind would be
		out, err := cmd.CombinedOutput()
		status := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			status = exit.ExitCode()
		} else if err != nil {
			t.Fatalf("zksim %s: %v", strings.Join(args, " "), err)
		}
		if status != wantStatus {
			t.Fatalf("zksim %s: exit status %d, want %d\n%s", strings.Join(args, " "), status, wantStatus, out)
		}
		for _, l := range strings.Split(string(out), "\n") {
			if l == "PASS" || l == "FAIL" || strings.HasPrefix(l, "--- ") {
				t.Errorf("zksim %s: the testing runner's line %q in the output", strings.Join(args, " "), l)
			}
		}
		return string(out)
	}
	contains := func(t *testing.T, out string, wants ...string) {
		t.Helper()
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Errorf("output lacks %q:\n%s", w, out)
			}
		}
	}

	t.Run("help", func(t *testing.T) {
		out := run(t, 0, "help")
		for _, c := range commands {
			contains(t, out, "\n  "+c.name+" ")
		}
		for _, c := range []string{"herd", "explore", "serve"} {
			contains(t, run(t, 0, c, "-h"), "usage: zksim "+c)
		}
		contains(t, run(t, 2, "explore", "stray"), `unexpected argument "stray"`, "usage: zksim explore")
	})
	t.Run("herd", func(t *testing.T) {
		report := filepath.Join(work, "report")
		out := run(t, 0, "herd", "-n", "10", "-out", report)
		contains(t, out, "lock-herd n=10: per change", "election-predecessor n=10: per change",
			"watch notifications per leader change:", "wrote "+filepath.Join(report, "herd.md"))
		if _, err := os.Stat(filepath.Join(report, "herd.svg")); err != nil {
			t.Errorf("herd -out: %v", err)
		}
		contains(t, run(t, 2, "herd", "-write"), "not one: run it inside a checkout")
	})
	t.Run("explore", func(t *testing.T) {
		out := run(t, 0, "explore", "-checks", "5", "-seed", "3", "-flawed")
		for _, m := range explore.Recipes {
			contains(t, out, m.What+strings.Repeat(" ", 46-len(m.What))+" ok      5 random runs, no violation")
		}
		if n := strings.Count(out, " flaw caught: VIOLATION: "); n != len(explore.Flaws) {
			t.Errorf("%d flaws caught, want %d:\n%s", n, len(explore.Flaws), out)
		}
		contains(t, out, "Replay this exploration: zksim explore -seed 3 -checks 5 -flawed")
	})
	t.Run("parallel", func(t *testing.T) {
		// The same checks, verdicts and traces whatever the workers, in the
		// same order; only the timings differ.
		var outs [2]string
		for i, workers := range []string{"1", "2"} {
			out := run(t, 0, "explore", "-checks", "3", "-seed", "5", "-digest", "-parallel", workers)
			on := map[string]string{"1": "on 1 worker: ", "2": "on 2 workers: "}[workers]
			contains(t, out, fmt.Sprintf("%d checks in ", 3*len(explore.Recipes)), on, " checks per second")
			if n := strings.Count(out, "trace digest: "); n != len(explore.Recipes) {
				t.Errorf("-parallel %s: %d trace digests, want %d:\n%s", workers, n, len(explore.Recipes), out)
			}
			outs[i] = timings.ReplaceAllString(out, "")
		}
		if outs[0] != outs[1] {
			t.Errorf("-parallel 1 and -parallel 2 differ:\n%s\n---\n%s", outs[0], outs[1])
		}
	})
	t.Run("default", func(t *testing.T) {
		out := run(t, 0, "-n", "10", "-checks", "2", "-seed", "3")
		contains(t, out, "[1/2] herd comparison", "[2/2] fault exploration", "summary", "double barrier",
			fmt.Sprintf("all %d recipes ok, no violation", len(explore.Recipes)))
		// It fits a screen or two: the coverage tables are behind -coverage.
		if n := strings.Count(out, "\n"); n > 75 || strings.Contains(out, "coverage:") {
			t.Errorf("zksim printed %d lines (want at most 75, no coverage table):\n%s", n, out)
		}
		contains(t, run(t, 0, "explore", "-checks", "2", "-seed", "3", "-coverage"), "coverage: requests by area and op")
		// No run left a directory behind (TMPDIR is work).
		if left, _ := filepath.Glob(filepath.Join(work, "zksim-herd-*")); len(left) != 0 {
			t.Errorf("left behind: %v", left)
		}
	})
	t.Run("serve", func(t *testing.T) {
		cmd := exec.Command(bin, "serve", "-addr", "127.0.0.1:0")
		cmd.Dir = work
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		first := make(chan string, 1)
		go func() {
			line, _ := bufio.NewReader(stdout).ReadString('\n')
			first <- line
			io.Copy(io.Discard, stdout)
		}()
		select {
		case line := <-first:
			if !strings.HasPrefix(line, "listening on 127.0.0.1:") {
				t.Fatalf("first line %q, want the address", line)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("zksim serve printed no address")
		}
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("zksim serve after an interrupt: %v", err)
		}
	})
}

// timings matches what differs between two runs of an exploration: the
// wall-clock times, the workers and the rate.
var timings = regexp.MustCompile(`\[ *[0-9.]+s\]|\((?:[0-9]+h)?(?:[0-9]+m)?[0-9.]+m?s\)|in [0-9.]+s on [0-9]+ workers?: [0-9]+ checks per second`)
