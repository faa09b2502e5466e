package faults

import (
	"fmt"
	"strings"
	"time"

	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// AnyClient as a fault's Client has the client drawn from the World's fault
// generator, among the live ones, when the fault strikes.
const AnyClient = -1

// Kind is the kind of a step fault: which row of the catalogue (Catalog)
// describes it.
type Kind uint8

// The step faults. Each is built by the function of the same name and
// described there.
const (
	KindDisconnect Kind = iota
	KindReconnect
	KindExpire
	KindPause
	KindResume
	KindDelay
	KindLoseNextReply
	KindDropNextRequest
	KindSlowServer
	KindDeleteNode
	KindDeleteUnder
	KindFailAuth
	KindLag
	KindCatchUp
	KindCrash
	KindRestart
	KindIsolate
	KindHeal
	KindFailLeader
	numKinds
)

// target says which client a fault aimed at AnyClient strikes.
type target uint8

const (
	noDraw   target = iota // the client given, never drawn
	live                   // a live client
	unpaused               // a live client that is not paused
	leaf                   // a leaf node below Path
	follower               // an ensemble member that serves, does not lead and does not lag
	lagging                // an ensemble member that lags
	member                 // an ensemble member that serves
	outcome                // the outcome of a write (FailLeader)
)

// Field flags: which of StepFault's fields a kind prints, in this order.
const (
	fClient = 1 << iota
	fExtra  // printed "+d"
	fFor    // printed always
	fForIf  // printed unless negative (for Disconnect and Pause: until the matching fault)
	fForPos // printed when positive (SlowServer: for good otherwise)
	fOp     // printed "any" for zkmem.OpAny
	fPath   // printed first
	fMember // printed "m1", "m?" for AnyMember
	fOutcome
)

// StepFault is a fault of the catalogue, injected as a step of the
// scheduler: a sim.StepFault, and a sim.Resolver for a fault aimed at
// AnyClient. Build one with the function named after its kind (Disconnect,
// Expire, ...); the fields a kind does not use are zero.
type StepFault struct {
	Kind   Kind
	Client int           // the client struck, or AnyClient
	For    time.Duration // how long it lasts
	Op     zkmem.OpCode  // the op of the request struck (LoseNextReply, DropNextRequest)
	Extra  time.Duration // the service time added (SlowServer)
	Path   string        // the node deleted (DeleteNode), or below which one is (DeleteUnder)
	// Member is the ensemble member struck (Lag, CatchUp, Crash, ...), or
	// AnyMember.
	Member int
	// Outcome is what becomes of the write that fails the leader
	// (FailLeader).
	Outcome Outcome
}

// Disconnect drops the client's connection; the session lives on. With d
// >= 0 the client starts reconnecting after d; with a negative d it stays
// down until a Reconnect fault.
func Disconnect(client int, d time.Duration) StepFault {
	return StepFault{Kind: KindDisconnect, Client: client, For: d}
}

// Reconnect brings a disconnected client back to its session.
func Reconnect(client int) StepFault { return StepFault{Kind: KindReconnect, Client: client} }

// Expire makes the server expire the client's session now.
func Expire(client int) StepFault { return StepFault{Kind: KindExpire, Client: client} }

// Pause stops the client for d (until a Resume fault if d < 0): no
// requests, no deliveries, no heartbeats.
func Pause(client int, d time.Duration) StepFault {
	return StepFault{Kind: KindPause, Client: client, For: d}
}

// Resume ends a pause.
func Resume(client int) StepFault { return StepFault{Kind: KindResume, Client: client} }

// Delay holds back deliveries to the client for d.
func Delay(client int, d time.Duration) StepFault {
	return StepFault{Kind: KindDelay, Client: client, For: d}
}

// LoseNextReply loses the reply of the client's next request with op
// (zkmem.OpAny for any op): the server applies it, the client gets
// ErrConnectionLoss. It is armed in the session's zkmem fault plane.
func LoseNextReply(client int, op zkmem.OpCode) StepFault {
	return StepFault{Kind: KindLoseNextReply, Client: client, Op: op}
}

// DropNextRequest loses the client's next request with op (zkmem.OpAny for
// any op) before the server sees it; the client gets ErrConnectionLoss. It
// is armed in the session's zkmem fault plane.
func DropNextRequest(client int, op zkmem.OpCode) StepFault {
	return StepFault{Kind: KindDropNextRequest, Client: client, Op: op}
}

// SlowServer adds extra to the service time of every request for d (for
// good if d <= 0).
func SlowServer(extra, d time.Duration) StepFault {
	return StepFault{Kind: KindSlowServer, Extra: extra, For: d}
}

// DeleteNode has a third party (an operator, a cleanup job) delete the node
// at path, whatever its version: a recipe's lock node, a queue item, a
// barrier's gate. The clients see only what it did: watches fire, a node
// is gone.
func DeleteNode(path string) StepFault { return StepFault{Kind: KindDeleteNode, Path: path} }

// DeleteUnder has a third party delete a node below dir that has no
// children, drawn from the World's fault generator when it strikes (the
// trace shows the DeleteNode it became); with none, nothing happens.
func DeleteUnder(dir string) StepFault { return StepFault{Kind: KindDeleteUnder, Path: dir} }

// FailAuth makes the client's next reconnection (the one under way if its
// connection is down) fail authentication, as a rotated SASL credential
// does: the client enters StateAuthFailed for good, every call of it fails
// with ErrAuthFailed, and the server expires its session a session timeout
// later. Not for go-zookeeper clients, which have no such state.
func FailAuth(client int) StepFault { return StepFault{Kind: KindFailAuth, Client: client} }

// String prints the fault as the trace shows it: "Disconnect(c2, 1s)",
// "LoseNextReply(c?, create)", "SlowServer(+100ms)".
func (f StepFault) String() string {
	if f.Kind >= numKinds {
		return fmt.Sprintf("StepFault(%d)", f.Kind)
	}
	sp := byKind[f.Kind]
	var args []string
	if sp.fields&fPath != 0 {
		args = append(args, f.Path)
	}
	if sp.fields&fClient != 0 {
		args = append(args, clientName(f.Client))
	}
	if sp.fields&fMember != 0 {
		args = append(args, memberName(f.Member))
	}
	if sp.fields&fOutcome != 0 {
		args = append(args, f.Outcome.String())
	}
	if sp.fields&fExtra != 0 {
		args = append(args, "+"+f.Extra.String())
	}
	switch {
	case sp.fields&fFor != 0,
		sp.fields&fForIf != 0 && f.For >= 0,
		sp.fields&fForPos != 0 && f.For > 0:
		args = append(args, f.For.String())
	}
	if sp.fields&fOp != 0 {
		args = append(args, f.Op.String())
	}
	return sp.Name + "(" + strings.Join(args, ", ") + ")"
}

// Inject implements sim.StepFault: it calls the World's fault primitive.
func (f StepFault) Inject(w *sim.World) error {
	if f.Kind >= numKinds {
		return fmt.Errorf("faults: unknown kind %d", f.Kind)
	}
	return byKind[f.Kind].inject(w.Faults(), f)
}

// Resolve implements sim.Resolver: a fault aimed at AnyClient strikes a
// client drawn from w's fault generator (among the live ones, or the live
// unpaused ones for a Pause); with none to draw it is not injected.
func (f StepFault) Resolve(w *sim.World) sim.StepFault {
	if f.Kind >= numKinds || byKind[f.Kind].target == noDraw {
		return f
	}
	if t := byKind[f.Kind].target; t >= follower {
		return resolveMember(w, f, t)
	}
	if byKind[f.Kind].target == leaf {
		leaves := w.Faults().Leaves(f.Path)
		if len(leaves) == 0 {
			return nil
		}
		return DeleteNode(leaves[w.Rand().IntN(len(leaves))])
	}
	var ok bool
	if f.Client, ok = resolveClient(w, f.Client, byKind[f.Kind].target == unpaused); !ok {
		return nil
	}
	return f
}

func clientName(c int) string {
	if c == AnyClient {
		return "c?"
	}
	return fmt.Sprintf("c%d", c)
}

// resolveClient returns c, or when c is AnyClient a live client drawn from
// w's fault generator (with unpaused, not a paused one); ok is false when
// there is none to draw.
func resolveClient(w *sim.World, c int, unpaused bool) (client int, ok bool) {
	if c != AnyClient {
		return c, true
	}
	var live []int
	for i := range w.NumClients() {
		if w.Live(i) && !(unpaused && w.Paused(i)) {
			live = append(live, i)
		}
	}
	if len(live) == 0 {
		return -1, false
	}
	return live[w.Rand().IntN(len(live))], true
}
