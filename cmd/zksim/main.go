package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// command is one subcommand of zksim.
type command struct {
	name, args, short string
	// run runs the subcommand with its arguments and returns the exit
	// status.
	run func(args []string) int
}

// commands are zksim's subcommands, in the order "zksim help" lists them.
var commands []command

func init() {
	commands = []command{
		{"herd", "[-n 10,100,1000] [-write]", "compare election and lock variants (the herd effect) in the simulator", herdMain},
		{"explore", "[-checks 100] [-seed S] [-flawed] [-v]", "explore the built-in recipes under faults drawn from a seed", exploreMain},
		{"serve", "[-addr 127.0.0.1:2181] [flags]", "serve an in-memory ZooKeeper over ZooKeeper's client protocol", serveMain},
		{"help", "[command]", "print this help, or a command's", helpMain},
	}
}

func main() {
	os.Exit(zksim(os.Args[1:]))
}

// zksim runs the command line args (without the program name) and returns
// the exit status.
func zksim(args []string) int {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		for _, c := range commands {
			if c.name == args[0] {
				return c.run(args[1:])
			}
		}
		fmt.Fprintf(os.Stderr, "zksim: unknown command %q\n\n", args[0])
		usage(os.Stderr)
		return 2
	}
	return defaultMain(args)
}

// usage prints what zksim does and its subcommands.
func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: zksim [command] [flags]\n\n"+
		"zksim shows the recipes of github.com/zksim/zksim on the embedded in-memory ZooKeeper.\n"+
		"With no command it runs the herd comparison, then the fault exploration (flags: zksim -h).\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.short)
	}
	fmt.Fprintf(w, "\nzksim COMMAND -h prints a command's flags.\n\n%s", exitStatuses)
}

// exitStatuses is what zksim's exit status means, as zksim help says.
const exitStatuses = `exit status:
  0  done: no violation found (serve: stopped by SIGINT or SIGTERM)
  1  a violation found, a broken recipe not caught, or a job that could not run
     (serve: the server failed)
  2  usage: an unknown command or flag, a stray argument, flags that contradict
     each other or a value a server cannot run with
`

// helpMain runs "zksim help [command]".
func helpMain(args []string) int {
	switch {
	case len(args) == 0 || len(args) == 1 && slices.Contains([]string{"-h", "-help", "--help"}, args[0]):
		usage(os.Stdout)
		return 0
	case len(args) > 1:
		fmt.Fprintf(os.Stderr, "zksim help: unexpected argument %q\n\n", args[1])
		usage(os.Stderr)
		return 2
	}
	for _, c := range commands {
		if c.name == args[0] {
			if c.name == "help" {
				usage(os.Stdout)
				return 0
			}
			return c.run([]string{"-h"})
		}
	}
	fmt.Fprintf(os.Stderr, "zksim help: unknown command %q\n\n", args[0])
	usage(os.Stderr)
	return 2
}

// parseFlags parses args with fs, and checks the result with check: -h
// prints the usage to stdout (status 0); a bad flag, a stray argument or an
// error of check prints the problem and the usage to stderr (status 2). It
// returns ok false and the status when the command must stop there.
func parseFlags(fs *flag.FlagSet, args []string, check func() error) (ok bool, status int) {
	var said strings.Builder
	fs.SetOutput(&said)
	err := fs.Parse(args)
	fs.SetOutput(os.Stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(os.Stdout, said.String())
			return false, 0
		}
		fmt.Fprint(os.Stderr, said.String())
		return false, 2 // flag said the problem and the usage
	}
	err = check()
	if fs.NArg() > 0 {
		err = fmt.Errorf("unexpected argument %q (%s takes only flags)", fs.Arg(0), fs.Name())
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n\n", fs.Name(), err)
		fs.Usage()
		return false, 2
	}
	return true, 0
}

// setUsage sets fs's usage: the command line, what it does, the flags.
func setUsage(fs *flag.FlagSet, line, about string) {
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s\n\n%s\n\nflags:\n", line, about)
		fs.PrintDefaults()
	}
}

// drawSeed returns a fresh non-zero seed.
func drawSeed() uint64 { return max(rand.Uint64()>>1, 1) }

// modulePath is zksim's module.
const modulePath = "github.com/zksim/zksim"

// errNoCheckout is checkout's error outside a checkout of the repository.
var errNoCheckout = errors.New("not inside a checkout of " + modulePath)

// checkout returns the root of the checkout of zksim's repository the
// working directory is in: the nearest directory above it with the go.mod
// of module github.com/zksim/zksim.
func checkout() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && isModule(string(data)) {
			if st, err := os.Stat(filepath.Join(dir, "benchmarks")); err == nil && st.IsDir() {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errNoCheckout
		}
		dir = parent
	}
}

// isModule reports whether gomod is the go.mod of zksim's module.
func isModule(gomod string) bool {
	for line := range strings.Lines(gomod) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" && strings.Trim(f[1], `"`) == modulePath {
			return true
		}
	}
	return false
}

// self is how the output names this command, for lines to run again:
// "go run ./cmd/zksim" when go run built it, "zksim" otherwise.
func self() string {
	if strings.Contains(os.Args[0], "go-build") {
		return "go run ./cmd/zksim"
	}
	return "zksim"
}
