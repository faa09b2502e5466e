package faults

import (
	"strconv"
	"time"
)

// Explore is how an exploring machine (a rapid state machine of package
// harness, or a recipe machine of package explore) draws a fault of the
// catalogue. A request fault is drawn by the machine's Step action as the
// fate of the request it admits (Entry.Fate); a step fault is an action of
// its own, named Name, and, if it lasts until something ends it, End is
// the action that does. A fault and its end are separate actions so that
// rapid can drop either as it shrinks.
type Explore struct {
	// Name names the fault among a machine's faults, and its action ("":
	// machines do not draw it).
	Name string
	// Who and Make are the fault's action (step faults only): the machine
	// draws a process among Who (a member, for the ensemble's faults:
	// Who.Members), then injects Make's fault.
	Who  Who
	Make func(x Explorer, client int) StepFault
	// End is the action that ends the fault (a zero Action: it ends by
	// itself).
	End Action
	// NativeOnly: the fault is not for go-zookeeper clients (which have no
	// state to model it).
	NativeOnly bool
}

// Action returns the action that injects the fault.
func (x Explore) Action() Action { return Action{Name: x.Name, Who: x.Who, Make: x.Make} }

// Action is an action of an exploring machine that injects a step fault.
type Action struct {
	// Name is the action's name.
	Name string
	// Who are the processes it may strike: the machine draws one, and
	// skips the action when it drew one outside Who.
	Who Who
	// Make returns the fault that strikes client, the client of the
	// process drawn (the member drawn when Who.Members; AnyClient when Who
	// is Server), drawing its parameters (durations) from x.
	Make func(x Explorer, client int) StepFault
}

// Explorer is what an exploring machine supplies to Make an action's
// fault: its draws and its clients' session timeout.
type Explorer interface {
	// SessionTimeout is the session timeout of the machine's clients; the
	// durations an action draws are fractions or multiples of it.
	SessionTimeout() time.Duration
	// Pick draws one of ds, the parameter called what ("for", "extra").
	Pick(what string, ds ...time.Duration) time.Duration
}

// Who is the set of processes an action may strike. The machine knows
// which processes are cut off (by an action of a Connected fault, until
// its Disconnected end) and which are paused.
type Who uint8

const (
	// Server: the fault strikes the server, no process.
	Server Who = iota
	// AnyProcess: any process.
	AnyProcess
	// Connected: a process not cut off; the machine marks the process it
	// strikes as cut off.
	Connected
	// Disconnected: a process cut off and not paused (a paused process
	// cannot reconnect); the machine marks it connected again.
	Disconnected
	// Awake: a process not paused.
	Awake
	// Paused: a paused process.
	Paused

	// The ensemble's members, for the ensemble's faults (a World over an
	// ensemble, sim.Config.Members > 1): the machine draws a member among
	// all of them, skips the action unless the member is one of these
	// now, and Make gets the member's index in place of a client.

	// Following: a member that serves, does not lead and does not lag.
	Following
	// Behind: a member that lags (sim.World.Lagging).
	Behind
	// Serving: a member that serves (it leads, follows or observes).
	Serving
	// Down: a crashed member (zkmem.RoleDown).
	Down
	// Isolated: a member the machine cut off from the quorum (the action
	// of an Isolate fault), not healed since (the action that ends it,
	// whose Who is Isolated, marks it healed again).
	Isolated
)

// Members reports whether w stands for ensemble members rather than
// processes.
func (w Who) Members() bool { return w >= Following && w <= Isolated }

func (w Who) String() string {
	switch w {
	case Server:
		return "server"
	case AnyProcess:
		return "any process"
	case Connected:
		return "connected"
	case Disconnected:
		return "disconnected"
	case Awake:
		return "awake"
	case Paused:
		return "paused"
	case Following:
		return "following member"
	case Behind:
		return "lagging member"
	case Serving:
		return "serving member"
	case Down:
		return "crashed member"
	case Isolated:
		return "isolated member"
	}
	return "Who(" + strconv.Itoa(int(w)) + ")"
}
