package main

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func defaults() options {
	return options{sizes: "10,100,1000", checks: 100, herd: true, explore: true}
}

func TestCheckOptions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		change  func(*options)
		args    []string
		wantErr string // "" for none
		sizes   string // the sizes to run with, when no error
	}{
		{name: "defaults", change: func(*options) {}, sizes: "10,100,1000"},
		{name: "stray argument", change: func(*options) {}, args: []string{"explore"}, wantErr: `unexpected argument "explore"`},
		{name: "nothing to do", change: func(o *options) { o.herd, o.explore = false, false }, wantErr: "nothing to do"},
		{name: "write alone runs the full sizes", change: func(o *options) { o.write = true }, sizes: fullSizes},
		{name: "write with the full sizes", change: func(o *options) { o.write, o.sizes, o.sizesSet = true, "10000,1000,100,10", true }, sizes: "10000,1000,100,10"},
		{name: "write with partial sizes", change: func(o *options) { o.write, o.sizes, o.sizesSet = true, "10,100", true }, wantErr: "partial"},
		{name: "write without the herd", change: func(o *options) { o.write, o.herd = true, false }, wantErr: "-write writes the herd report"},
		{name: "bad size", change: func(o *options) { o.sizes = "10,x" }, wantErr: "bad size"},
		{name: "no checks", change: func(o *options) { o.checks = 0 }, wantErr: "-checks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := defaults()
			tc.change(&o)
			got, err := checkOptions(o, tc.args)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("checkOptions: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("checkOptions: %v, want an error containing %q", err, tc.wantErr)
			case tc.wantErr == "" && got.sizes != tc.sizes:
				t.Fatalf("sizes %q, want %q", got.sizes, tc.sizes)
			}
		})
	}
}

// TestCommandLineErrors runs the command: a bad command line prints the
// problem and the usage, and exits with status 2, before compiling
// anything.
func TestCommandLineErrors(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{"stray", `unexpected argument "stray"`},
		{"-herd=false -explore=false", "nothing to do"},
		{"-write -n 10,100", "partial"},
	} {
		t.Run(tc.args, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "ZKSIM_TEST_MAIN=1", "ZKSIM_TEST_ARGS="+tc.args)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 {
				t.Fatalf("zksim %s: %v, want exit status 2\n%s", tc.args, err, out)
			}
			for _, want := range []string{tc.want, "usage: go run ./cmd/zksim"} {
				if !strings.Contains(string(out), want) {
					t.Errorf("zksim %s printed %q; want it to contain %q", tc.args, out, want)
				}
			}
		})
	}
}
