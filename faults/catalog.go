package faults

import (
	"fmt"
	"slices"
	"time"

	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// Entry is one row of the catalogue of faults: one fault, what it is (a
// step fault of a Kind, or a RequestFault), how Swarm and Mix draw
// it, which column of the coverage table counts what it struck, and how an
// exploring machine (package harness, the recipe machines of package
// explore) draws it as an action. Swarm, Mix and the machines iterate the
// rows in order: adding a fault is a row here (with its constructor or
// RequestFault, and the primitive of sim it calls).
type Entry struct {
	// Name is the fault's name, as the trace prints it.
	Name string
	// Step says the fault is a step fault of kind Kind (a StepFault,
	// injected as a step of the scheduler); else it is a request fault,
	// Request, that strikes a request as it reaches the server.
	Step bool
	Kind Kind
	// Request is what a request fault does to the request it strikes (for
	// Slow, the slowdown Swarm draws).
	Request RequestFault
	// Ops, for a request fault, are the ops of the requests it can strike
	// (none: any): ShuffleChildren strikes getChildren.
	Ops []zkmem.OpCode
	// Swarm says whether and how Swarm draws the fault.
	Swarm SwarmDraw
	// Mix says whether and how Mix draws the fault.
	Mix MixDraw
	// Coverage is the column of sim.Coverage that counts the requests the
	// fault struck ("": none).
	Coverage string
	// Explore says how an exploring machine draws the fault (a zero
	// Explore: it does not).
	Explore Explore
	// Ensemble: the fault strikes an ensemble's members, and applies
	// only to a World over an ensemble (sim.Config.Members > 1): Swarm
	// and Mix leave it out otherwise, without a draw, so a standalone
	// World's draws are what they were before the row existed.
	Ensemble bool

	// For a step fault: which of StepFault's fields it prints, which
	// client AnyClient stands for, and which primitive of sim.Faults it
	// calls.
	fields int
	target target
	inject func(f *sim.Faults, x StepFault) error
}

// SwarmDraw is how Swarm draws a fault of the catalogue. Swarm draws from
// the World's fault generator, for each of its choices in the order of the
// catalogue (the step faults' first, then the request faults'), whether it
// is enabled, and if so its weight, from 1 to 4 (and, for an Aimed request
// fault, its target).
type SwarmDraw struct {
	// On: Swarm draws the fault.
	On bool
	// Choices, for a step fault, are Swarm's choices of it, given the
	// World's session timeout and SwarmOptions.Dirs: each is enabled by a
	// draw of its own, and puts its faults in the step pool as many times
	// as its weight.
	Choices func(sessionTimeout time.Duration, dirs []string) [][]StepFault
	// Rate, for a request fault, is the chance that a request it can
	// strike meets it, at weight 1 (0: the swarm's intensity).
	Rate float64
	// Aimed: Swarm also draws the requests a request fault strikes: any,
	// the writes, the multis, or the deletes and multis.
	Aimed bool
}

// MixDraw is how Mix draws a fault of the catalogue.
type MixDraw struct {
	// On: Mix draws the fault. A step fault is one of Mix's step faults:
	// Swarm's choices of it (with no directories), drawn uniformly with
	// the others at each step with probability p/4.
	On bool
	// Rate, for a request fault, is the chance that a request it can
	// strike meets it (0: Mix's p).
	Rate float64
}

// catalog is the one table of faults, in the order Swarm, Mix and the
// exploring machines draw them: the request faults, then the step faults
// in the order of their kinds.
var catalog = [...]Entry{
	{
		Name: "LoseReply", Request: LoseReply,
		Swarm: SwarmDraw{On: true, Aimed: true}, Mix: MixDraw{On: true},
		Coverage: "LoseReply", Explore: Explore{Name: "LoseReply"},
	},
	{
		Name: "DropRequest", Request: DropRequest,
		Swarm: SwarmDraw{On: true, Aimed: true}, Mix: MixDraw{On: true},
		Coverage: "DropRequest", Explore: Explore{Name: "DropRequest"},
	},
	{
		Name: "ShuffleChildren", Request: ShuffleChildren, Ops: []zkmem.OpCode{zkmem.OpGetChildren},
		Swarm: SwarmDraw{On: true, Rate: 0.25}, Mix: MixDraw{On: true, Rate: 0.5},
		Coverage: "Shuffle", Explore: Explore{Name: "Shuffle"},
	},
	{
		Name: "Slow", Request: Slow(50 * time.Millisecond),
		Swarm:    SwarmDraw{On: true},
		Coverage: "Slow",
	},
	{
		Name: "Disconnect", Step: true, Kind: KindDisconnect,
		fields: fClient | fForIf, target: live,
		inject: func(f *sim.Faults, x StepFault) error { return f.Disconnect(x.Client, x.For) },
		Swarm: SwarmDraw{On: true, Choices: func(time.Duration, []string) [][]StepFault {
			return [][]StepFault{{Disconnect(AnyClient, 200*time.Millisecond), Disconnect(AnyClient, time.Second)}}
		}},
		Mix:      MixDraw{On: true},
		Coverage: "Disconnect",
		Explore: Explore{
			Name: "Partition", Who: Connected,
			Make: func(_ Explorer, c int) StepFault { return Disconnect(c, -1) },
			End: Action{Name: "Heal", Who: Disconnected,
				Make: func(_ Explorer, c int) StepFault { return Reconnect(c) }},
		},
	},
	{
		Name: "Reconnect", Step: true, Kind: KindReconnect,
		fields: fClient, target: noDraw,
		inject: func(f *sim.Faults, x StepFault) error { return f.Reconnect(x.Client) },
	},
	{
		Name: "Expire", Step: true, Kind: KindExpire,
		fields: fClient, target: live,
		inject: func(f *sim.Faults, x StepFault) error { return f.Expire(x.Client) },
		Swarm: SwarmDraw{On: true, Choices: func(time.Duration, []string) [][]StepFault {
			return [][]StepFault{{Expire(AnyClient)}}
		}},
		Mix:      MixDraw{On: true},
		Coverage: "Expire",
		Explore: Explore{Name: "Expire", Who: AnyProcess,
			Make: func(_ Explorer, c int) StepFault { return Expire(c) }},
	},
	{
		Name: "Pause", Step: true, Kind: KindPause,
		fields: fClient | fForIf, target: unpaused,
		inject: func(f *sim.Faults, x StepFault) error { return f.Pause(x.Client, x.For) },
		// Long enough for the session to expire, and a third of it.
		Swarm: SwarmDraw{On: true, Choices: func(st time.Duration, _ []string) [][]StepFault {
			return [][]StepFault{{Pause(AnyClient, st+st/2), Pause(AnyClient, st/3)}}
		}},
		Mix:      MixDraw{On: true},
		Coverage: "Pause",
		Explore: Explore{
			Name: "Pause", Who: Awake,
			Make: func(_ Explorer, c int) StepFault { return Pause(c, -1) },
			End: Action{Name: "Resume", Who: Paused,
				Make: func(_ Explorer, c int) StepFault { return Resume(c) }},
		},
	},
	{
		Name: "Resume", Step: true, Kind: KindResume,
		fields: fClient, target: noDraw,
		inject: func(f *sim.Faults, x StepFault) error { return f.Resume(x.Client) },
	},
	{
		Name: "Delay", Step: true, Kind: KindDelay,
		fields: fClient | fFor, target: live,
		inject: func(f *sim.Faults, x StepFault) error { return f.Delay(x.Client, x.For) },
		Swarm: SwarmDraw{On: true, Choices: func(time.Duration, []string) [][]StepFault {
			return [][]StepFault{{Delay(AnyClient, 500*time.Millisecond)}}
		}},
		Mix:      MixDraw{On: true},
		Coverage: "Delay",
		// The delays stay under the read timeout of a ZooKeeper client
		// (two thirds of the session timeout), past which a real client
		// gives up on the connection: that longer silence is a Partition.
		Explore: Explore{Name: "Delay", Who: AnyProcess,
			Make: func(x Explorer, c int) StepFault {
				st := x.SessionTimeout()
				return Delay(c, x.Pick("for", st/10, st/2))
			}},
	},
	{
		Name: "LoseNextReply", Step: true, Kind: KindLoseNextReply,
		fields: fClient | fOp, target: live,
		inject: func(f *sim.Faults, x StepFault) error {
			f.LoseNextReply(x.Client, x.Op)
			return nil
		},
		Coverage: "LoseReply",
	},
	{
		Name: "DropNextRequest", Step: true, Kind: KindDropNextRequest,
		fields: fClient | fOp, target: live,
		inject: func(f *sim.Faults, x StepFault) error {
			f.DropNextRequest(x.Client, x.Op)
			return nil
		},
		Coverage: "DropRequest",
	},
	{
		Name: "SlowServer", Step: true, Kind: KindSlowServer,
		fields: fExtra | fForPos, target: noDraw,
		inject: func(f *sim.Faults, x StepFault) error {
			f.SlowServer(x.Extra, x.For)
			return nil
		},
		Swarm: SwarmDraw{On: true, Choices: func(time.Duration, []string) [][]StepFault {
			return [][]StepFault{{SlowServer(300*time.Millisecond, 2*time.Second)}}
		}},
		Coverage: "Slow",
		Explore: Explore{Name: "Slow", Who: Server,
			Make: func(x Explorer, _ int) StepFault {
				st := x.SessionTimeout()
				extra := x.Pick("extra", st/50, st*3/10)
				return SlowServer(extra, x.Pick("for", st/2, 3*st))
			}},
	},
	{
		Name: "DeleteNode", Step: true, Kind: KindDeleteNode,
		fields: fPath, target: noDraw,
		inject: func(f *sim.Faults, x StepFault) error { return f.DeleteNode(x.Path) },
	},
	{
		Name: "DeleteUnder", Step: true, Kind: KindDeleteUnder,
		fields: fPath, target: leaf,
		inject: func(f *sim.Faults, x StepFault) error { return f.DeleteNode(x.Path) },
		// A choice of its own for each directory.
		Swarm: SwarmDraw{On: true, Choices: func(_ time.Duration, dirs []string) [][]StepFault {
			var out [][]StepFault
			for _, d := range dirs {
				out = append(out, []StepFault{DeleteUnder(d)})
			}
			return out
		}},
	},
	{
		Name: "FailAuth", Step: true, Kind: KindFailAuth,
		fields: fClient, target: live,
		inject: func(f *sim.Faults, x StepFault) error { return f.FailAuth(x.Client) },
		// The requests in flight when the reconnection failed.
		Coverage: "AuthFailed",
		Explore: Explore{Name: "FailAuth", Who: AnyProcess, NativeOnly: true,
			Make: func(_ Explorer, c int) StepFault { return FailAuth(c) }},
	},
	// The ensemble's faults (ensemble.go).
	{
		Name: "Lag", Step: true, Kind: KindLag, Ensemble: true,
		fields: fMember, target: follower,
		inject: func(f *sim.Faults, x StepFault) error { return f.Lag(x.Member) },
		Swarm: SwarmDraw{On: true, Choices: func(time.Duration, []string) [][]StepFault {
			return [][]StepFault{{Lag(AnyMember)}}
		}},
		Mix:      MixDraw{On: true},
		Coverage: "Lag",
		Explore: Explore{
			Name: "Lag", Who: Following,
			Make: func(_ Explorer, m int) StepFault { return Lag(m) },
			End: Action{Name: "CatchUp", Who: Behind,
				Make: func(_ Explorer, m int) StepFault { return CatchUp(m) }},
		},
	},
	{
		Name: "CatchUp", Step: true, Kind: KindCatchUp, Ensemble: true,
		fields: fMember, target: lagging,
		inject: func(f *sim.Faults, x StepFault) error { return f.CatchUp(x.Member) },
		Swarm: SwarmDraw{On: true, Choices: func(time.Duration, []string) [][]StepFault {
			return [][]StepFault{{CatchUp(AnyMember)}}
		}},
		Mix: MixDraw{On: true},
	},
	{
		Name: "Crash", Step: true, Kind: KindCrash, Ensemble: true,
		fields: fMember | fForIf, target: member,
		inject: func(f *sim.Faults, x StepFault) error { return f.Crash(x.Member, x.For) },
		// A tenth of the session timeout, and half of it.
		Swarm: SwarmDraw{On: true, Choices: func(st time.Duration, _ []string) [][]StepFault {
			return [][]StepFault{{Crash(AnyMember, st/10), Crash(AnyMember, st/2)}}
		}},
		Mix:      MixDraw{On: true},
		Coverage: "Crash",
		Explore: Explore{
			Name: "Crash", Who: Serving,
			Make: func(_ Explorer, m int) StepFault { return Crash(m, -1) },
			End: Action{Name: "Restart", Who: Down,
				Make: func(_ Explorer, m int) StepFault { return Restart(m) }},
		},
	},
	{
		Name: "Restart", Step: true, Kind: KindRestart, Ensemble: true,
		fields: fMember, target: noDraw,
		inject: func(f *sim.Faults, x StepFault) error { return f.Restart(x.Member) },
	},
	{
		Name: "Isolate", Step: true, Kind: KindIsolate, Ensemble: true,
		fields: fMember | fForIf, target: member,
		inject: func(f *sim.Faults, x StepFault) error { return f.Isolate(x.Member, x.For) },
		Swarm: SwarmDraw{On: true, Choices: func(st time.Duration, _ []string) [][]StepFault {
			return [][]StepFault{{Isolate(AnyMember, st/10), Isolate(AnyMember, st/2)}}
		}},
		Mix:      MixDraw{On: true},
		Coverage: "Isolate",
		// Its end is Rejoin: Heal is the end of a Partition.
		Explore: Explore{
			Name: "Isolate", Who: Serving,
			Make: func(_ Explorer, m int) StepFault { return Isolate(m, -1) },
			End: Action{Name: "Rejoin", Who: Isolated,
				Make: func(_ Explorer, m int) StepFault { return Heal(m) }},
		},
	},
	{
		Name: "Heal", Step: true, Kind: KindHeal, Ensemble: true,
		fields: fMember, target: noDraw,
		inject: func(f *sim.Faults, x StepFault) error { return f.Heal(x.Member) },
	},
	{
		Name: "FailLeader", Step: true, Kind: KindFailLeader, Ensemble: true,
		fields: fOutcome, target: outcome,
		inject: func(f *sim.Faults, x StepFault) error {
			return f.FailLeader(x.Outcome == Committed)
		},
		Swarm: SwarmDraw{On: true, Choices: func(time.Duration, []string) [][]StepFault {
			return [][]StepFault{{FailLeader(AnyOutcome)}}
		}},
		Mix:      MixDraw{On: true},
		Coverage: "Failover",
		// The write's outcome is drawn from the World's fault generator.
		Explore: Explore{Name: "FailLeader", Who: Server,
			Make: func(Explorer, int) StepFault { return FailLeader(AnyOutcome) }},
	},
}

// byKind is the row of each kind of step fault.
var byKind = indexKinds()

func indexKinds() (idx [numKinds]*Entry) {
	for i := range catalog {
		if e := &catalog[i]; e.Step {
			if idx[e.Kind] != nil {
				panic(fmt.Sprintf("faults: two rows of kind %d", e.Kind))
			}
			idx[e.Kind] = e
		}
	}
	for k, e := range idx {
		if e == nil {
			panic(fmt.Sprintf("faults: no row of kind %d", k))
		}
	}
	return idx
}

// Catalog returns the rows of the catalogue, in the order Swarm, Mix and
// the exploring machines draw them. The slice is a copy; the functions and
// Ops of its rows are shared, read-only.
func Catalog() []Entry { return slices.Clone(catalog[:]) }

// Fate returns what the request fault of e does to request r: its Request's,
// or nothing for a request with an op e cannot strike (or for a step
// fault).
func (e *Entry) Fate(r *zkmem.Request) sim.Fate {
	if e.Step || (len(e.Ops) > 0 && !slices.Contains(e.Ops, r.Op)) {
		return sim.Fate{}
	}
	return e.Request.fate
}

// predicate returns the predicate that selects the requests e can strike
// with probability rate: Randomly(rate), preceded by OnOp(e.Ops) when e
// strikes only some ops.
func (e *Entry) predicate(rate float64) Predicate {
	if len(e.Ops) == 0 {
		return Randomly(rate)
	}
	return All(OnOp(e.Ops...), Randomly(rate))
}
