package harness_test

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/harness"
	"github.com/zksim/zksim/zkmem"
)

// shared is the state of one check that a machine with hooks keeps across
// its processes.
type shared struct {
	mu        sync.Mutex
	inits     int
	news      map[int]int // New calls by process
	renewed   []string
	applied   int
	quietStep bool // a Quiet action ran
}

// hookMachine uses the hooks of a machine whose processes share state:
// Init draws which processes renew (SetRenewing), Actions expire a
// renewing process's session and cut a process off and heal it, OnApply
// counts the requests applied. Every process creates ephemeral nodes.
func hookMachine(s func() *shared) harness.Machine[int] {
	var cur *shared
	return harness.Machine[int]{
		Name:     "hooks",
		Parallel: true,
		Setup: func(ctx context.Context, c zksim.Conn) error {
			_, err := c.Create(ctx, "/n", nil, zksim.ModePersistent, zksim.OpenACL())
			return err
		},
		Init: func(t *rapid.T, w *harness.World[int]) {
			cur = s()
			cur.inits++
			for _, p := range w.Processes() {
				if p.Obj() != 0 {
					t.Fatalf("p%d has an object before New", p.Index())
				}
				if rapid.Bool().Draw(t, fmt.Sprintf("p%d renews", p.Index())) {
					p.SetRenewing(w.Sim().Renewing(p.Session()))
				}
			}
		},
		New: func(p *harness.Process[int]) int {
			cur.mu.Lock()
			defer cur.mu.Unlock()
			cur.news[p.Index()]++
			return p.Index() + 1
		},
		Renewed: func(p *harness.Process[int]) {
			cur.renewed = append(cur.renewed, fmt.Sprintf("p%d c%d", p.Index(), p.Session()))
		},
		OnApply: func(_ *harness.World[int], _ int, r *zkmem.Request) {
			cur.mu.Lock()
			defer cur.mu.Unlock()
			cur.applied++
		},
		Ops: map[string]func(*rapid.T, *harness.Process[int]){
			"Create": func(t *rapid.T, p *harness.Process[int]) {
				if !p.Go("create", func(ctx context.Context) error {
					_, err := p.Conn().Create(ctx, "/n/e", nil, zksim.ModeEphemeralSequential, zksim.OpenACL())
					return err
				}) {
					t.SkipNow()
				}
			},
		},
		Actions: func(w *harness.World[int]) map[string]func(*rapid.T) {
			return map[string]func(*rapid.T){
				"ExpireRenewing": func(t *rapid.T) {
					p := w.Processes()[rapid.IntRange(0, len(w.Processes())-1).Draw(t, "process")]
					w.Inject(t, faults.Expire(p.Session()))
					w.RunFor(t, 100*time.Millisecond)
				},
				"CutAndHeal": func(t *rapid.T) {
					p := w.Processes()[rapid.IntRange(0, len(w.Processes())-1).Draw(t, "process")]
					if p.Partitioned() || p.Paused() {
						t.SkipNow()
					}
					p.Partition(t)
					if !p.Partitioned() {
						t.Fatalf("p%d not partitioned after Partition", p.Index())
					}
					w.RunUntil(t, time.Second, func() bool { return w.Now() > 0 })
					p.Heal(t)
					if p.Partitioned() {
						t.Fatalf("p%d still partitioned after Heal", p.Index())
					}
				},
				"QuietSteps": func(t *rapid.T) {
					defer w.Quiet()()
					if w.Sim().Enabled() == 0 {
						t.SkipNow()
					}
					for i := 0; i < 50 && w.Step(t) > 0; i++ {
					}
					cur.quietStep = true
				},
			}
		},
	}
}

// The hooks of a machine whose processes share state: Init once per check
// before New, the machine's own actions, Renewed for a renewing process,
// OnApply for every request applied; Explore reports the totals and every
// check's trace.
func TestMachineHooks(t *testing.T) {
	var all []*shared
	s := func() *shared {
		x := &shared{news: map[int]int{}}
		all = append(all, x)
		return x
	}
	defer setRapidFlag(t, "rapid.checks", "30")()
	var traces int
	res := harness.Explore(t, hookMachine(s), harness.ExploreOptions{Traces: func(string) { traces++ }})
	require.True(t, res.Passed, res.Report)
	require.Equal(t, 30, res.Checks)
	require.Equal(t, 30, traces)
	require.Len(t, all, 30)
	renewed, applied, quiet := 0, 0, 0
	for _, x := range all {
		require.Equal(t, 1, x.inits)
		for i := range 3 {
			require.GreaterOrEqual(t, x.news[i], 1, "p%d never made", i)
		}
		renewed += len(x.renewed)
		applied += x.applied
		if x.quietStep {
			quiet++
		}
	}
	require.Positive(t, renewed, "no renewing process renewed in 30 checks")
	require.Positive(t, applied, "OnApply told of no request")
	require.Positive(t, quiet, "no QuietSteps action ran")
	require.True(t, strings.Contains(strings.Join(res.Logs, "\n"), "hooks: 30 checks"), "no totals logged")
}

// An action of Machine.Actions named as an action of the harness fails
// every check.
func TestActionNamedAsTheHarnesssFails(t *testing.T) {
	m := harness.Machine[int]{
		New: func(*harness.Process[int]) int { return 0 },
		Actions: func(*harness.World[int]) map[string]func(*rapid.T) {
			return map[string]func(*rapid.T){"Expire": func(*rapid.T) {}}
		},
	}
	c := harness.Catch(t, m, harness.CatchOptions{Checks: 1})
	require.True(t, c.Caught)
	require.Contains(t, c.Report, `action "Expire" of Machine.Actions has the name of another`)
}

// A check whose Init fails after starting a goroutine of the check's
// (World.Go) closes its World and waits for it: the failure is reported,
// nothing is left blocked in the bubble.
func TestInitFailureEndsTheCheck(t *testing.T) {
	m := harness.Machine[int]{
		New: func(*harness.Process[int]) int { return 0 },
		Init: func(t *rapid.T, w *harness.World[int]) {
			ctx := w.Context()
			w.Go(func() { <-ctx.Done() })
			t.Fatalf("init failed")
		},
	}
	c := harness.Catch(t, m, harness.CatchOptions{Checks: 1})
	require.True(t, c.Caught)
	require.Contains(t, c.Report, "init failed")
}

// A violation recorded as the liveness goal is reached (by an Eventually
// condition that holds, or a process) fails the check.
func TestViolationAtTheLivenessGoalFails(t *testing.T) {
	m := harness.Machine[int]{
		Processes: 1,
		New:       func(*harness.Process[int]) int { return 0 },
		Eventually: []harness.Invariant[int]{{Name: "done", Check: func(w *harness.World[int]) error {
			w.Violate("lost items", "an item went missing as the goal was reached")
			return nil
		}}},
	}
	c := harness.Catch(t, m, harness.CatchOptions{Checks: 5}, "lost items")
	require.True(t, c.AsWanted, c.Report)
}

// Catch with Concurrent sets no flag: catches of two machines run at once,
// each finding its failure.
func TestCatchConcurrently(t *testing.T) {
	defer setRapidFlag(t, "rapid.nofailfile", "true")()
	defer setRapidFlag(t, "rapid.shrinktime", harness.ShrinkCap.String())()
	var wg sync.WaitGroup
	var got [2]harness.Caught
	for i := range got {
		wg.Go(func() {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				m := boomMachine()
				m.Parallel = true // crypto/rand is left alone
				got[i] = harness.Catch(t, m, harness.CatchOptions{Concurrent: true}, "no boom")
			})
		})
	}
	wg.Wait()
	for i, c := range got {
		require.True(t, c.AsWanted, "catch %d: %s", i, c.Report)
		require.Equal(t, []string{"Boom p0"}, c.Schedule)
	}
}

// setRapidFlag sets a flag of rapid's for a test and returns its undo.
func setRapidFlag(t *testing.T, name, value string) func() {
	t.Helper()
	f := flag.Lookup(name)
	old := f.Value.String()
	require.NoError(t, f.Value.Set(value))
	return func() { _ = f.Value.Set(old) }
}
