package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func defaults() options {
	return options{
		herdOptions:    herdOptions{sizes: "10,100,1000"},
		exploreOptions: exploreOptions{checks: 100, parallel: runtime.GOMAXPROCS(0)},
		herd:           true, explore: true,
	}
}

func TestCheckOptions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		change  func(*options)
		wantErr string // "" for none
		sizes   string // the sizes to run with, when no error
	}{
		{name: "defaults", change: func(*options) {}, sizes: "10,100,1000"},
		{name: "nothing to do", change: func(o *options) { o.herd, o.explore = false, false }, wantErr: "nothing to do"},
		{name: "write alone runs the full sizes", change: func(o *options) { o.write = true }, sizes: fullSizes},
		{name: "write with the full sizes", change: func(o *options) { o.write, o.sizes, o.sizesSet = true, "10000,1000,100,10", true }, sizes: "10000,1000,100,10"},
		{name: "write with partial sizes", change: func(o *options) { o.write, o.sizes, o.sizesSet = true, "10,100", true }, wantErr: "partial"},
		{name: "write with a size twice", change: func(o *options) { o.write, o.sizes, o.sizesSet = true, "10,100,1000,10000,10", true }, sizes: "10,100,1000,10000,10"},
		{name: "write without the herd", change: func(o *options) { o.write, o.herd = true, false }, wantErr: "-write writes the herd report"},
		{name: "write and out", change: func(o *options) { o.write, o.out = true, "x" }, wantErr: "-write and -out"},
		{name: "out alone", change: func(o *options) { o.out = "x" }, sizes: "10,100,1000"},
		{name: "bad size", change: func(o *options) { o.sizes = "10,x" }, wantErr: "bad size"},
		{name: "no checks", change: func(o *options) { o.checks = 0 }, wantErr: "-checks"},
		{name: "no workers", change: func(o *options) { o.parallel = 0 }, wantErr: "-parallel must be at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := defaults()
			tc.change(&o)
			err := checkOptions(&o)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("checkOptions: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("checkOptions: %v, want an error containing %q", err, tc.wantErr)
			case tc.wantErr == "" && o.sizes != tc.sizes:
				t.Fatalf("sizes %q, want %q", o.sizes, tc.sizes)
			}
		})
	}
}

// TestCheckout: the test runs in cmd/zksim of a checkout, whose root holds
// zksim's go.mod; -write writes into its benchmarks/.
func TestCheckout(t *testing.T) {
	root, err := checkout()
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := filepath.Abs("../.."); root != want {
		t.Fatalf("checkout() = %s, want %s", root, want)
	}
	o := herdOptions{sizes: "10,100,1000", write: true}
	if err := checkHerd(&o); err != nil || o.dir != filepath.Join(root, "benchmarks") || o.sizes != fullSizes {
		t.Fatalf("checkHerd(-write) = %v, dir %q, sizes %q", err, o.dir, o.sizes)
	}
	for gomod, want := range map[string]bool{
		"module github.com/zksim/zksim\n\ngo 1.26\n":                        true,
		"// a fork\nmodule \"github.com/zksim/zksim\"\n":                    true,
		"module example.com/app\n\nrequire github.com/zksim/zksim v0.1.0\n": false,
		"module github.com/zksim/zksim/v2\n":                                false,
	} {
		if got := isModule(gomod); got != want {
			t.Errorf("isModule(%q) = %v, want %v", gomod, got, want)
		}
	}
}

// zksimCommand returns the command that runs this test binary as zksim
// with args (see TestMain), in dir ("" for the test's).
func zksimCommand(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ZKSIM_TEST_MAIN=1", "ZKSIM_TEST_ARGS="+strings.Join(args, " "))
	return cmd
}

// TestCommandLineErrors runs the command: a bad command line prints the
// problem and the usage, and exits with status 2, before running anything.
func TestCommandLineErrors(t *testing.T) {
	outside := t.TempDir()
	for _, tc := range []struct {
		args, want, usage string
		dir               string // "" for the checkout
	}{
		{"stray", `unknown command "stray"`, "usage: zksim [command]", ""},
		{"-herd=false -explore=false", "nothing to do", "usage: zksim [flags]", ""},
		{"-write -n 10,100", "partial", "usage: zksim [flags]", ""},
		{"-nosuchflag", "flag provided but not defined: -nosuchflag", "usage: zksim [flags]", ""},
		{"herd stray", `unexpected argument "stray"`, "usage: zksim herd", ""},
		{"herd -n 1", "bad size", "usage: zksim herd", ""},
		{"herd -write", "not one: run it inside a checkout", "usage: zksim herd", outside},
		{"-write", "not one: run it inside a checkout", "usage: zksim [flags]", outside},
		{"explore -checks 0", "-checks must be at least 1", "usage: zksim explore", ""},
		{"explore -parallel 0", "-parallel must be at least 1", "usage: zksim explore", ""},
		{"explore stray", `unexpected argument "stray"`, "usage: zksim explore", ""},
		{"serve stray", `unexpected argument "stray"`, "usage: zksim serve", ""},
		{"serve -nosuchflag", "flag provided but not defined: -nosuchflag", "usage: zksim serve", ""},
		{"help nosuch", `unknown command "nosuch"`, "usage: zksim [command]", ""},
		{"help herd explore", `unexpected argument "explore"`, "usage: zksim [command]", ""},
	} {
		t.Run(tc.args, func(t *testing.T) {
			out, err := zksimCommand(tc.dir, strings.Fields(tc.args)...).CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 {
				t.Fatalf("zksim %s: %v, want exit status 2\n%s", tc.args, err, out)
			}
			for _, want := range []string{tc.want, tc.usage} {
				if !strings.Contains(string(out), want) {
					t.Errorf("zksim %s printed %q; want it to contain %q", tc.args, out, want)
				}
			}
		})
	}
}

// TestHelp: zksim help lists every command and the exit statuses, and
// every command has -h (as has zksim itself), which prints its usage to
// stdout, nothing to stderr, and exits with status 0.
func TestHelp(t *testing.T) {
	stdoutOnly := func(args ...string) string {
		t.Helper()
		cmd := zksimCommand("", args...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() != 0 {
			t.Errorf("zksim %s: %v, stderr %q; want status 0 and nothing on stderr", strings.Join(args, " "), err, stderr.String())
		}
		return string(out)
	}
	out := stdoutOnly("help")
	for _, c := range commands {
		if !strings.Contains(out, "\n  "+c.name+" ") {
			t.Errorf("zksim help does not list %s:\n%s", c.name, out)
		}
	}
	for _, want := range []string{"exit status:\n", "\n  0  done", "\n  1  a violation found", "\n  2  usage"} {
		if !strings.Contains(out, want) {
			t.Errorf("zksim help does not say %q:\n%s", want, out)
		}
	}
	for args, want := range map[string]string{
		"-h": "usage: zksim [flags]", "herd -h": "usage: zksim herd", "explore -h": "usage: zksim explore",
		"serve -h": "usage: zksim serve", "help -h": "usage: zksim [command]", "help serve": "usage: zksim serve",
		"help herd": "usage: zksim herd", "-help": "usage: zksim [flags]",
	} {
		if out := stdoutOnly(strings.Fields(args)...); !strings.Contains(out, want) {
			t.Errorf("zksim %s printed %q; want %q", args, out, want)
		}
	}
}
