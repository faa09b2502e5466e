package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// testEvent is one line of `go test -json` (see `go doc test2json`).
type testEvent struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// goTest runs `go test -json args...` in dir and calls on for every event,
// in order. It returns the output of the build and of go test itself that
// was not part of any event (compile errors, say) and the command's error.
func goTest(ctx context.Context, dir string, args []string, verbose io.Writer, on func(testEvent)) (string, error) {
	cmd := exec.CommandContext(ctx, "go", append([]string{"test", "-json", "-vet=off"}, args...)...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	var other strings.Builder
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var ev testEvent
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			other.Write(line)
			other.WriteByte('\n')
			continue
		}
		if verbose != nil && ev.Output != "" {
			fmt.Fprint(verbose, ev.Output)
		}
		if ev.Action == "build-output" {
			other.WriteString(ev.Output)
		}
		on(ev)
	}
	scanErr := sc.Err()
	err = cmd.Wait()
	other.WriteString(stderr.String())
	if err == nil {
		err = scanErr
	}
	return other.String(), err
}

// moduleRoot returns the directory of the main module's go.mod, checking
// that it is zksim's.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("running go env GOMOD: %w (is Go installed?)", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("not inside a Go module: run zksim from the zksim repository")
	}
	data, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	if !strings.Contains(string(data), "module "+modulePath) {
		return "", fmt.Errorf("%s is not the %s module: run zksim from the zksim repository", gomod, modulePath)
	}
	return strings.TrimSuffix(gomod, string(os.PathSeparator)+"go.mod"), nil
}

const modulePath = "github.com/zksim/zksim"

// prebuild compiles the tests of pkgs in one go command, running none, so
// that the go test runs that follow find them in the build cache. It
// returns the compiler's output as an error when the build fails.
func prebuild(ctx context.Context, dir string, pkgs []string) error {
	cmd := exec.CommandContext(ctx, "go", append([]string{"test", "-vet=off", "-count=1", "-run", "^$"}, pkgs...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("compiling the tests: %v\n%s", err, out)
	}
	return nil
}
