package explore

import (
	"flag"
	"os"
	"sync"
	"testing"

	"github.com/zksim/zksim/harness"
)

// ReplayFailFile replays the schedule of one of rapid's fail files (as
// -rapid.failfile names it) on m, once, and fails t with rapid's report if
// it fails. It runs no other check, and writes no fail file. Like
// CheckFrom it may run at the same time as other tests' CheckFrom and
// ReplayFailFile: it sets -rapid.failfile and -rapid.checks and holds the
// others back until rapid has read them, then puts them back.
//
// A fail file recorded before each action drew a seed of its own replays
// its schedule only with m.DrawsInOrder set (harness.Machine.DrawsInOrder).
func (m Machine) ReplayFailFile(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("replay: %v", err)
	}
	seedGate.Lock()
	var undo []func()
	var once sync.Once
	release := func() {
		once.Do(func() {
			for _, u := range undo {
				u()
			}
			seedGate.Unlock()
		})
	}
	defer release()
	for _, f := range [][2]string{{"rapid.failfile", path}, {"rapid.checks", "0"}} {
		fl := flag.Lookup(f[0])
		if fl == nil {
			t.Fatalf("replay: no flag -%s (is rapid linked in?)", f[0])
		}
		old := fl.Value.String()
		if err := flag.Set(f[0], f[1]); err != nil {
			t.Fatalf("replay: %v", err)
		}
		undo = append(undo, func() { _ = flag.Set(f[0], old) })
	}
	res := harness.Explore(t, m.harness(), harness.ExploreOptions{Started: release})
	release()
	if !res.Passed {
		t.Errorf("replay of %s:\n%s", path, res.Report)
	}
}
