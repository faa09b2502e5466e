package faults_test

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// The catalogue, row by row: what each fault is, how Swarm and Mix draw it
// (for a 1s session timeout and the directory /app), the coverage column
// that counts it, and the actions of an exploring machine.
func ExampleCatalog() {
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 1, ' ', 0)
	fmt.Fprintln(tw, "fault\tis\tSwarm\tMix\tcoverage\texplored as")
	for _, e := range faults.Catalog() {
		is, swarm, mix, explore := "request", "-", "-", "-"
		if e.Step {
			is = "step"
			if e.Ensemble {
				is = "ensemble step"
			}
		} else if len(e.Ops) > 0 {
			is += " " + fmt.Sprint(e.Ops)
		}
		switch {
		case !e.Swarm.On:
		case e.Step:
			var choices []string
			for _, c := range e.Swarm.Choices(time.Second, []string{"/app"}) {
				choices = append(choices, fmt.Sprint(c))
			}
			swarm = strings.Join(choices, " ")
		default:
			swarm = rate(e.Swarm.Rate, "intensity")
			if e.Swarm.Aimed {
				swarm += ", aimed"
			}
		}
		switch {
		case !e.Mix.On:
		case e.Step:
			mix = "as Swarm"
		default:
			mix = rate(e.Mix.Rate, "p")
		}
		switch x := e.Explore; {
		case x.Name == "":
		case x.Make == nil:
			explore = "a Step's fate " + x.Name
		default:
			explore = x.Name + " (" + x.Who.String() + ")"
			if x.End.Name != "" {
				explore += ", " + x.End.Name + " (" + x.End.Who.String() + ")"
			}
			if x.NativeOnly {
				explore += ", native clients"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", e.Name, is, swarm, mix, cmp.Or(e.Coverage, "-"), explore)
	}
	tw.Flush()
	// Output:
	// fault           is                    Swarm                                      Mix      coverage    explored as
	// LoseReply       request               intensity, aimed                           p        LoseReply   a Step's fate LoseReply
	// DropRequest     request               intensity, aimed                           p        DropRequest a Step's fate DropRequest
	// ShuffleChildren request [getChildren] 0.25                                       0.5      Shuffle     a Step's fate Shuffle
	// Slow            request               intensity                                  -        Slow        -
	// Disconnect      step                  [Disconnect(c?, 200ms) Disconnect(c?, 1s)] as Swarm Disconnect  Partition (connected), Heal (disconnected)
	// Reconnect       step                  -                                          -        -           -
	// Expire          step                  [Expire(c?)]                               as Swarm Expire      Expire (any process)
	// Pause           step                  [Pause(c?, 1.5s) Pause(c?, 333.333333ms)]  as Swarm Pause       Pause (awake), Resume (paused)
	// Resume          step                  -                                          -        -           -
	// Delay           step                  [Delay(c?, 500ms)]                         as Swarm Delay       Delay (any process)
	// LoseNextReply   step                  -                                          -        LoseReply   -
	// DropNextRequest step                  -                                          -        DropRequest -
	// SlowServer      step                  [SlowServer(+300ms, 2s)]                   -        Slow        Slow (server)
	// DeleteNode      step                  -                                          -        -           -
	// DeleteUnder     step                  [DeleteUnder(/app)]                        -        -           -
	// FailAuth        step                  -                                          -        AuthFailed  FailAuth (any process), native clients
	// Lag             ensemble step         [Lag(m?)]                                  as Swarm Lag         Lag (following member), CatchUp (lagging member)
	// CatchUp         ensemble step         [CatchUp(m?)]                              as Swarm -           -
	// Crash           ensemble step         [Crash(m?, 100ms) Crash(m?, 500ms)]        as Swarm Crash       Crash (serving member), Restart (crashed member)
	// Restart         ensemble step         -                                          -        -           -
	// Isolate         ensemble step         [Isolate(m?, 100ms) Isolate(m?, 500ms)]    as Swarm Isolate     Isolate (serving member), Rejoin (isolated member)
	// Heal            ensemble step         -                                          -        -           -
	// FailLeader      ensemble step         [FailLeader(?)]                            as Swarm Failover    FailLeader (server)
}

func rate(r float64, zero string) string {
	if r == 0 {
		return zero
	}
	return strconv.FormatFloat(r, 'g', -1, 64)
}

// Every row is whole: a step fault's kind prints with the row's name and
// its actions make faults of that kind; a request fault's RequestFault is the
// row's; every coverage column is one of sim.Coverage's.
func TestCatalogRowsAreWhole(t *testing.T) {
	header := strings.Fields(strings.SplitN(sim.Coverage{}.String(), "\n", 2)[0])
	names := map[string]bool{}
	kinds := map[faults.Kind]bool{}
	for _, e := range faults.Catalog() {
		require.False(t, names[e.Name], "two rows named %s", e.Name)
		names[e.Name] = true
		switch {
		case e.Coverage != "" && e.Ensemble:
			require.Contains(t, sim.EnsembleCoverage, e.Coverage, "%s: coverage column", e.Name)
		case e.Coverage != "":
			require.Contains(t, header, e.Coverage, "%s: coverage column", e.Name)
		}
		x := e.Explore
		if !e.Step {
			require.Contains(t, e.Request.String(), e.Name, "%s: effect", e.Name)
			require.Nil(t, x.Make, "%s: a request fault is a Step's fate, not an action", e.Name)
			require.Nil(t, e.Swarm.Choices, "%s", e.Name)
			continue
		}
		require.False(t, kinds[e.Kind], "two rows of kind %d", e.Kind)
		kinds[e.Kind] = true
		require.True(t, strings.HasPrefix(faults.StepFault{Kind: e.Kind}.String(), e.Name+"("), "%s: prints as %v", e.Name, faults.StepFault{Kind: e.Kind})
		require.Equal(t, e.Swarm.On, e.Swarm.Choices != nil, "%s: Swarm draws a step fault from its choices", e.Name)
		if e.Mix.On {
			require.True(t, e.Swarm.On, "%s: Mix draws Swarm's choices", e.Name)
		}
		for _, a := range []faults.Action{x.Action(), x.End} {
			if a.Name == "" {
				continue
			}
			f := a.Make(firstPick{time.Second}, 2)
			if a.Name == x.Name {
				require.Equal(t, e.Kind, f.Kind, "%s: action %s", e.Name, a.Name)
			}
			switch {
			case a.Who.Members():
				require.True(t, e.Ensemble, "%s: action %s strikes a member", e.Name, a.Name)
				require.Equal(t, 2, f.Member, "%s: action %s strikes the member drawn", e.Name, a.Name)
			case a.Who != faults.Server:
				require.Equal(t, 2, f.Client, "%s: action %s strikes the client drawn", e.Name, a.Name)
			}
		}
		if x.Name != "" {
			require.NotNil(t, x.Make, "%s: a step fault machines draw is an action", e.Name)
		}
	}
	require.Len(t, kinds, int(faults.KindFailLeader)+1, "a row for every kind")
}

// firstPick is an Explorer that picks the first duration offered.
type firstPick struct{ timeout time.Duration }

func (x firstPick) SessionTimeout() time.Duration { return x.timeout }

func (firstPick) Pick(_ string, ds ...time.Duration) time.Duration { return ds[0] }

// The actions of an exploring machine draw their durations from the
// session timeout, in the order (and under the names) the machines'
// committed fail files rely on.
func TestExploreActionsPick(t *testing.T) {
	var picks []string
	rec := recordPicks{timeout: time.Second, picks: &picks}
	var made []string
	for _, e := range faults.Catalog() {
		for _, a := range []faults.Action{e.Explore.Action(), e.Explore.End} {
			if a.Make != nil {
				made = append(made, a.Name+": "+a.Make(rec, 1).String())
			}
		}
	}
	require.Equal(t, []string{
		"Partition: Disconnect(c1)", "Heal: Reconnect(c1)", "Expire: Expire(c1)",
		"Pause: Pause(c1)", "Resume: Resume(c1)", "Delay: Delay(c1, 500ms)",
		"Slow: SlowServer(+300ms, 3s)", "FailAuth: FailAuth(c1)",
		"Lag: Lag(m1)", "CatchUp: CatchUp(m1)", "Crash: Crash(m1)", "Restart: Restart(m1)",
		"Isolate: Isolate(m1)", "Rejoin: Heal(m1)", "FailLeader: FailLeader(?)",
	}, made)
	require.Equal(t, []string{"for [100ms 500ms]", "extra [20ms 300ms]", "for [500ms 3s]"}, picks)
}

// recordPicks is an Explorer that picks the last duration offered and
// records what it was asked.
type recordPicks struct {
	timeout time.Duration
	picks   *[]string
}

func (x recordPicks) SessionTimeout() time.Duration { return x.timeout }

func (x recordPicks) Pick(what string, ds ...time.Duration) time.Duration {
	*x.picks = append(*x.picks, fmt.Sprintf("%s %v", what, ds))
	return ds[len(ds)-1]
}

// Swarm draws, for a seed, the swarm it drew before its faults came from
// the catalogue: the rows keep the order of its draws.
func TestSwarmDrawsFromTheCatalogue(t *testing.T) {
	want := []string{
		"(Swarm 0.2: Delay×4 DeleteUnder×1 LoseReply×2@writes DropRequest×1@writes ShuffleChildren×3@any (Slow 50ms)×3@any)",
		"(Swarm 0.2: Disconnect×4 Delay×4 DeleteUnder×2 DropRequest×2@writes ShuffleChildren×3@any)",
		"(Swarm 0.2: Disconnect×3 Expire×4 Pause×2 Delay×3 SlowServer×1)",
		"(Swarm 0.2: Disconnect×4 Expire×3 Pause×3 LoseReply×3@multi)",
		"(Swarm 0.2: SlowServer×3 DeleteUnder×2 DropRequest×4@any (Slow 50ms)×4@any)",
		"(Swarm 0.2: Disconnect×2 Expire×1 Delay×4 SlowServer×2 DeleteUnder×3)",
	}
	for seed, w := range want {
		desc, _ := swarmRun(t, uint64(seed))
		require.Equal(t, "note t=0.000s policy "+w, desc, "seed %d", seed)
	}
}

// A request fault's fate strikes only the ops it can.
func TestEntryFate(t *testing.T) {
	rows := faults.Catalog()
	i := slices.IndexFunc(rows, func(e faults.Entry) bool { return e.Name == "ShuffleChildren" })
	require.Equal(t, sim.Fate{Shuffle: true}, rows[i].Fate(&zkmem.Request{Op: zkmem.OpGetChildren}))
	require.Equal(t, sim.Fate{}, rows[i].Fate(&zkmem.Request{Op: zkmem.OpCreate}))
	require.Equal(t, sim.Fate{Fault: zkmem.LoseReply}, rows[0].Fate(&zkmem.Request{Op: zkmem.OpCreate}))
}
