// Command upstreamrace reads the output of go test -race on its standard
// input and exits 0 if it holds at least one data race report and every
// report is a race between two accesses made inside a dependency known to
// race with itself (go-zookeeper v1.0.4: its connection loop reads the
// last zxid for the setWatches of a new connection while the receive loop
// writes it, go-zookeeper/zk#35), and 1 otherwise. .ci/run uses it to run
// the failed packages a second time instead of failing at once; a race
// with any frame of ours at the top of either access stays a failure.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// upstream are the packages whose own races are known and not ours.
var upstream = []string{"github.com/go-zookeeper/zk."}

func main() {
	n, ours, err := scan(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "upstreamrace:", err)
		os.Exit(2)
	}
	fmt.Printf("upstreamrace: %d data race reports, %d not inside go-zookeeper\n", n, ours)
	if n == 0 || ours > 0 {
		os.Exit(1)
	}
}

// scan counts the data race reports in r, and those whose two accesses are
// not both inside an upstream package (judged by the top frame of each
// access's stack).
func scan(r io.Reader) (reports, ours int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	in := false     // inside a report
	access := false // the next frame line is an access's top frame
	tops := 0       // top frames seen in the report
	upstreamOnly := true
	end := func() {
		if in {
			reports++
			if !upstreamOnly || tops < 2 {
				ours++
			}
		}
		in, access, tops, upstreamOnly = false, false, 0, true
	}
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "WARNING: DATA RACE":
			end()
			in = true
		case !in:
		case line == "==================":
			end()
		case isAccess(line):
			access = true
		case access && line != "":
			access = false
			if tops++; tops <= 2 && !isUpstream(line) {
				upstreamOnly = false
			}
		}
	}
	end()
	return reports, ours, sc.Err()
}

// isAccess reports whether line heads an access's stack in a race report.
func isAccess(line string) bool {
	for _, p := range []string{"Read at ", "Write at ", "Previous read at ", "Previous write at ", "Atomic read at ", "Atomic write at ", "Previous atomic read at ", "Previous atomic write at "} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

func isUpstream(frame string) bool {
	for _, p := range upstream {
		if strings.HasPrefix(frame, p) {
			return true
		}
	}
	return false
}
